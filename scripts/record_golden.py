"""Golden recordings: what the folder move (issue 24) must leave unchanged, recorded from the current tree
into tests/fixtures/golden/ and held by tests/test_golden.py.

    .venv/bin/python scripts/record_golden.py            # re-record everything (under a minute of CPU)
    .venv/bin/python scripts/record_golden.py --check    # compare with the recordings, write nothing
    .venv/bin/python scripts/record_golden.py --only help mcp   # some parts only: help, mcp, runs
    .venv/bin/python scripts/record_golden.py --from HEAD       # from a commit (git archive), not the work tree

``--from REV`` records (or checks) the tree of commit REV, exported to a temporary folder and imported from
there: in a checkout several people edit, the work tree holds their unfinished changes. Before a move,
``--from <the commit before it>`` records the "before" that the move is compared with.

An intended change (a new flag, a reworded tool description, a new metric) is re-recorded deliberately and
reviewed as a diff of the fixtures in the commit that makes it. An unintended one is a bug of that change.

What is recorded:

- ``help/*.txt``: ``gsolve --help`` and ``gsolve <command> [<action>] --help`` of every argparse subcommand
  (enumerated from the parser, nested ones included), formatted at COLUMNS=100 so wrapping is stable.
- ``mcp_tools.json``: ``tools/list`` of the MCP server through ``mcp.Client(create_server(...))``
  in-process: each tool's name, title, description, annotations, input and output schema;
  ``mcp_server.json``: the rest a client loads, the server's instructions, prompts and resources.
- ``run_folders/<kernels>/<algo>/`` (the part ``runs``; not a ``runs/`` folder, which .gitignore hides), one
  recording per CPU maker and set of kernels torch dispatches to (``intel-avx512``, ``amd-avx2``, ``amd-avx512``: see
  recorded_with.json): for every
  algorithm in gymnasium_solver/contract/algorithms.py's table, one short ``gsolve train CONFIG --seed 0 --set ...``
  (GOLDEN_RUNS, run through ``cli.main`` in this process) on CartPole-v1 or Pendulum-v1, from the pinned copies of
  their presets in ``presets/`` (not the shipped ones, so that a preset's retune re-records nothing): its config.yaml
  as written; its metrics.csv, run.json and run.log with what is per-machine or per-time taken out
  (below); ``checkpoints.json``: the run folder's file names, each checkpoint's metadata, and per
  checkpoint file its keys, a sha256 of the network's weights and the observation normaliser.
- ``recorded_with.json``: per part, the Python and library versions (and for the runs the CPU's maker and the
  kernels torch uses: one entry ``runs/<maker>-<kernels>`` per recording) it was recorded with. Where they differ
  from the recording's, a part is not compared (the test skips it, saying why): floats trained with another torch,
  on an AVX2 instead of an AVX512 CPU, or on an AMD instead of an Intel one with the same kernels, differ in their
  last bits and then in whole episodes, so the runs are recorded once per maker and kernel set a machine of ours
  has (``--only runs`` records this machine's, leaving the others'). The recordings hold a move on one machine; to use them elsewhere, re-record from the
  commit before the change and compare after it.

What is taken out, and why (nothing else: every other column and field came out byte-identical in two
recordings in a row, in separate processes, in either order of the algorithms, and through the real
``gsolve train`` command; nothing had to be dropped for being non-deterministic):

- metrics.csv: the wall-clock columns, every ``time/*`` column of metric_names.py (``time/wall_seconds``,
  ``time/fps``, ``time/rollout_seconds``, ``time/update_seconds``): measured with a clock. Their names stay
  recorded, in order, in run.json's ``metric_columns``.
- run.json: values replaced by a ``<why>`` marker when set (the key, and whether it is null, stay
  recorded): ``created_at``, ``updated_at``, ``finished_at``, ``warnings[].time``, ``resumes[].time``,
  ``source.imported_at`` (per time; tests/test_golden.py finds every such field of RunInfo); ``progress.wall_seconds``, ``best_eval/last_eval.wall_seconds``, ``solved_at.wall_seconds``
  (wall clock); ``pid`` and ``host`` (per process, per machine); each of ``versions``' values and
  ``git_commit``, null or not (per install, per commit: a recording must not change because it was
  committed; null where the tree is not a git checkout).
  ``config_origin.where`` keeps the preset's path relative to the checkout (where the checkout lies is
  per machine). The run id stays: the recorder names the run (``--run-id golden-<algo>``).
- checkpoints/*.json: ``created_at`` (per time) and ``wall_seconds`` (wall clock). The .pt files are not
  compared byte for byte: they hold ``wall_seconds`` too, and SB3's zip inside them its save time and
  system info; their weights are compared (the sha256 above).
- run.log: each line's timestamp, the ``pid N`` of its start line and, when the run solved, the seconds its
  last line gives the solve (``solved) at 2048 env steps, 1.28s``: wall clock).

Determinism: the config's ``torch_threads: 1`` (torch's intra-op pool), one OpenMP/MKL/OpenBLAS thread
when this script loads torch itself, and the seed for environments, network init and sampling.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import csv
import difflib
import io
import json
import os
import re
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple
from unittest import mock

from cpu_identity import (  # a sibling script (scripts/ is on sys.path): reads, imports nothing
    cpu_vendor,
    kernels,
)

# One thread everywhere, so float sums happen in one order: set before anything here imports torch or numpy
# (kernels() does, to name the recording), effective in the recorder's own process; the config's
# torch_threads: 1 sets torch's own pool in any case.
for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

ROOT = Path(__file__).resolve().parent.parent
GOLDEN_DIR = ROOT / "tests" / "fixtures" / "golden"  # this checkout's, also when recording --from a commit
# The presets the runs train from: pinned copies, not the shipped ones, so that retuning a preset changes no
# recording (the runs hold the code, not the presets' values; the intel-avx512 recordings need an Intel machine to
# re-make). Read through $GSOLVE_CONFIG_DIR (config/presets.py), the folder a user's own presets live in.
GOLDEN_PRESETS = GOLDEN_DIR / "presets"
CONFIG_DIR_ENV = "GSOLVE_CONFIG_DIR"  # config/presets.py's CONFIG_DIR_ENV: not imported, so torch loads later
HELP_COLUMNS = 100  # terminal width argparse wraps help to
RECORD_COMMAND = ".venv/bin/python scripts/record_golden.py"
PARTS = ("help", "mcp", "runs")
MASK = "<{}>"  # a masked run.json / checkpoint value: the reason it varies


class GoldenRun(NamedTuple):
    """One short training run: ``gsolve train CONFIG_ID --seed 0 --set OVERRIDES``."""

    config_id: str
    overrides: tuple[str, ...]


# Small budgets: every algorithm updates a few times and evaluates at least twice (with two episodes),
# CartPole finishes a few training episodes, Pendulum two (200 steps each).
_CARTPOLE = ("eval_freq=1024", "eval_episodes=2")
_PENDULUM = ("max_env_steps=400", "iteration_steps=200", "eval_freq=200", "eval_episodes=1")
GOLDEN_RUNS: dict[str, GoldenRun] = {
    "ppo": GoldenRun("CartPole-v1:ppo", ("max_env_steps=2048", *_CARTPOLE)),
    "a2c": GoldenRun("CartPole-v1:a2c", ("max_env_steps=2048", *_CARTPOLE)),
    "reinforce": GoldenRun("CartPole-v1:reinforce", ("max_env_steps=2048", *_CARTPOLE)),
    "dqn": GoldenRun("CartPole-v1:dqn", ("max_env_steps=2048", "learning_starts=512", "iteration_steps=512",
                                         *_CARTPOLE)),
    "qrdqn": GoldenRun("CartPole-v1:qrdqn", ("max_env_steps=2048", "learning_starts=512", "iteration_steps=512",
                                             "gradient_steps=32", *_CARTPOLE)),
    "sac": GoldenRun("Pendulum-v1:sac", _PENDULUM),
    "td3": GoldenRun("Pendulum-v1:td3", ("learning_starts=100", *_PENDULUM)),
    # TQC: 100 updates only; the Zoo's 256-unit networks and 5 critics make each one the dearest here.
    "tqc": GoldenRun("Pendulum-v1:tqc", ("learning_starts=300", *_PENDULUM)),
}
SEED = 0

# run.json: dotted path -> why its value varies (``[]``: each item of a list; ``*``: each value of a mapping).
RUN_JSON_MASKED: dict[str, str] = {
    "created_at": "time", "updated_at": "time", "finished_at": "time",
    "warnings[].time": "time", "resumes[].time": "time", "source.imported_at": "time",
    "progress.wall_seconds": "wall clock", "best_eval.wall_seconds": "wall clock",
    "last_eval.wall_seconds": "wall clock", "solved_at.wall_seconds": "wall clock",
    "pid": "pid", "host": "host", "versions.*": "version",
}
# Masked null or not: the commit is null where the tree is not a git checkout (a --from export, a tarball).
RUN_JSON_ALWAYS_MASKED: dict[str, str] = {"git_commit": "commit"}
CHECKPOINT_MASKED: dict[str, str] = {"created_at": "time", "wall_seconds": "wall clock"}
_LOG_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)? ", re.MULTILINE)
_LOG_PID = re.compile(r"\bpid \d+\b")
_LOG_SOLVE_SECONDS = re.compile(r"(\bat \d+ env steps), \d+\.\d+s\b")


# --- what a recording depends on besides our code ---------------------------------------------------

# Per part, the libraries whose version changes the recording without a change of ours: argparse's
# layout (Python), pydantic's JSON schemas and the MCP SDK's tool listing, and for the runs every
# library on the path from seed to float (the numpy and torch RNGs and kernels, Gymnasium's envs,
# SB3's algorithms, the Zoo's settings).
_DEPENDS_ON: dict[str, tuple[str, ...]] = {
    "help": (),
    "mcp": ("mcp", "pydantic"),
    "runs": ("torch", "numpy", "gymnasium", "stable-baselines3", "sb3-contrib", "rl_zoo3"),
}
RECORDED_WITH = "recorded_with.json"


def recording_environment(part: str) -> dict[str, str]:
    """What ``part``'s recording depends on besides our code: the Python version, those libraries'
    versions and, for training, the CPU kernels torch dispatches to (AVX2 and AVX512 kernels sum floats
    in different orders, so the same seed trains to different last bits, then to different episodes)."""
    from importlib.metadata import version

    env = {"python": "{}.{}".format(*sys.version_info[:2])}
    env.update({name: version(name) for name in _DEPENDS_ON[part]})
    if part == "runs":
        import platform

        import torch

        env["machine"] = platform.machine()
        env["torch_cpu_capability"] = torch.backends.cpu.get_cpu_capability()
        env["cpu_vendor"] = cpu_vendor()
    return env


def _key(part: str) -> str:
    """``part``'s entry in recorded_with.json: the runs' is per CPU maker and kernel set (``runs/amd-avx2``)."""
    return f"runs/{kernels()}" if part == "runs" else part


def recorded_environment(part: str) -> dict[str, str] | None:
    """The environment ``part`` was recorded in (None: not recorded; for the runs, not on this CPU's maker and
    kernels)."""
    path = GOLDEN_DIR / RECORDED_WITH
    return json.loads(path.read_text(encoding="utf-8")).get(_key(part)) if path.is_file() else None


def comparable(part: str) -> str:
    """Why ``part`` cannot be compared here ('' when it can): a different Python, library or CPU."""
    then, now = recorded_environment(part), recording_environment(part)
    if then is None:
        where = f" on {kernels()} (CPU maker and kernels)" if part == "runs" else ""
        return (f"{part} was never recorded{where}; record it with `{RECORD_COMMAND} --from <commit before the "
                f"change> --only {part}`")
    changed = [f"{k} {then.get(k)} -> {now.get(k)}" for k in sorted(set(then) | set(now)) if then.get(k) != now.get(k)]
    if not changed:
        return ""
    return (f"the {part} recordings were made with {', '.join(changed)}: they hold a move on one machine, not a "
            f"library upgrade or another CPU; to check a change here, record its parent commit here first "
            f"(`{RECORD_COMMAND} --from <commit before the change> --only {part}`)")


# --- help texts -------------------------------------------------------------------------------------

def _subcommands(parser: argparse.ArgumentParser, prefix: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...],
                                                                                             argparse.ArgumentParser]]:
    yield prefix, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _subcommands(sub, (*prefix, name))


def help_texts() -> dict[str, str]:
    """``gsolve [command ...] --help`` of every command, keyed by its file name under help/."""
    from gymnasium_solver.cli.app import build_parser

    # argparse reads the width from $COLUMNS; NO_COLOR: Python 3.14's argparse colours help on a terminal.
    with mock.patch.dict(os.environ, {"COLUMNS": str(HELP_COLUMNS), "NO_COLOR": "1"}):
        return {"help/" + "_".join(("gsolve", *words)) + ".txt": p.format_help()
                for words, p in _subcommands(build_parser(), ())}


# --- MCP tool schemas ---------------------------------------------------------------------------------

def mcp_tools() -> dict[str, str]:
    """The MCP server as an in-process client sees it: ``tools/list`` (mcp_tools.json), and the rest of
    what a client loads (mcp_server.json): the instructions, prompts and resources."""
    from mcp import Client

    from mcp_server.server import create_server

    def dump(items: Any, fields: set[str]) -> list[dict[str, Any]]:
        return [x.model_dump(mode="json", by_alias=True, exclude_none=True, include=fields) for x in items]

    async def listed() -> tuple[list[dict[str, Any]], dict[str, Any]]:
        with tempfile.TemporaryDirectory() as runs:
            async with Client(create_server(Path(runs))) as client:
                tools = (await client.list_tools()).tools
                rest = {"instructions": client.instructions,
                        "prompts": dump((await client.list_prompts()).prompts,
                                        {"name", "title", "description", "arguments"}),
                        "resources": dump((await client.list_resources()).resources,
                                          {"uri", "name", "title", "description", "mime_type"}),
                        "resource_templates": dump((await client.list_resource_templates()).resource_templates,
                                                   {"uri_template", "name", "title", "description", "mime_type"})}
        return dump(tools, {"name", "title", "description", "annotations", "input_schema", "output_schema"}), rest

    tools, rest = asyncio.run(listed())
    return {"mcp_tools.json": json.dumps(tools, indent=2, ensure_ascii=False) + "\n",
            "mcp_server.json": json.dumps(rest, indent=2, ensure_ascii=False) + "\n"}


# --- run folders -----------------------------------------------------------------------------------

def _tree() -> Path:
    """The source tree being recorded: where gymnasium_solver is imported from (a commit's export with --from)."""
    import gymnasium_solver

    return Path(gymnasium_solver.__file__).resolve().parent.parent


def _mask(data: Any, path: list[str], why: str) -> None:
    """Replace the value at ``path`` in ``data`` (in place) by MASK, unless it is absent or null. A ``[]``
    suffix descends into each item of a list, ``*`` into each value of a mapping."""
    key, rest = path[0], path[1:]
    if key.endswith("[]"):
        for item in data.get(key[:-2]) or []:
            _mask(item, rest, why)
    elif key == "*" and isinstance(data, dict):
        for name in data:
            _mask(data, [name, *rest], why)
    elif isinstance(data, dict) and data.get(key) is not None:
        if rest:
            _mask(data[key], rest, why)
        else:
            data[key] = MASK.format(why)


def _masked_json(text: str, masked: dict[str, str], always_masked: dict[str, str] | None = None) -> str:
    data = json.loads(text)
    for dotted, why in masked.items():
        _mask(data, dotted.split("."), why)
    for key, why in (always_masked or {}).items():
        if key in data:
            data[key] = MASK.format(why)
    origin = data.get("config_origin") or {}
    if isinstance(origin.get("where"), str):
        origin["where"] = origin["where"].replace(str(_tree()) + os.sep, "")
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _metrics_without_clock(text: str) -> str:
    rows = list(csv.reader(io.StringIO(text)))
    keep = [i for i, name in enumerate(rows[0]) if not name.startswith("time/")]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    for row in rows:
        writer.writerow([row[i] for i in keep])
    return out.getvalue()


def _tensors_digest(tensors: dict[str, Any]) -> str:
    """sha256 over a state dict's names, dtypes, shapes and values, in order."""
    import hashlib

    digest = hashlib.sha256()
    for name, t in tensors.items():
        digest.update(f"{name} {t.dtype} {tuple(t.shape)}\n".encode())
        digest.update(t.detach().cpu().contiguous().numpy().tobytes())
    return digest.hexdigest()


def _weights(path: Path) -> dict[str, Any]:
    """What a checkpoint file holds: its keys and a digest of the network's weights (``model``; SB3's own
    zip, ``sb3_model``, carries SB3's save time and system info, so only the weights we load are held)."""
    import torch

    saved = torch.load(path, map_location="cpu", weights_only=True)
    return {"keys": sorted(saved), "model_sha256": _tensors_digest(saved["model"]),
            "normalizer": {k: v.tolist() if hasattr(v, "tolist") else v for k, v in saved["normalizer"].items()},
            "config_yaml_is_config_yaml": saved["config_yaml"] == (path.parent.parent / "config.yaml").read_text(
                encoding="utf-8")}


def _checkpoints(run_dir: Path) -> str:
    files = sorted(p.relative_to(run_dir).as_posix() for p in run_dir.rglob("*") if p.is_file())
    metas = {p.name: json.loads(_masked_json(p.read_text(encoding="utf-8"), CHECKPOINT_MASKED))
             for p in sorted((run_dir / "checkpoints").glob("*.json"))}
    weights = {p.name: _weights(p) for p in sorted((run_dir / "checkpoints").glob("*.pt"))}
    return json.dumps({"files": files, "checkpoints": metas, "weights": weights}, indent=2) + "\n"


def train_golden(algo: str, runs_dir: Path) -> dict[str, str]:
    """Train GOLDEN_RUNS[algo] into ``runs_dir`` through the CLI (in this process); its recorded files."""
    from gymnasium_solver.cli.app import main

    run = GOLDEN_RUNS[algo]
    run_id = f"golden-{algo}"
    argv = ["train", run.config_id, "--seed", str(SEED), "--set", *run.overrides, "--runs-dir", str(runs_dir),
            "--run-id", run_id, "--quiet", "--no-fail"]
    out = io.StringIO()
    with mock.patch.dict(os.environ, {CONFIG_DIR_ENV: str(GOLDEN_PRESETS)}), contextlib.redirect_stdout(out), \
            contextlib.redirect_stderr(out):
        code = main(argv)
    if code != 0:
        raise RuntimeError(f"gsolve {' '.join(argv)} exited {code}:\n{out.getvalue()}")
    run_dir = runs_dir / run_id
    read = {name: (run_dir / name).read_text(encoding="utf-8")
            for name in ("config.yaml", "metrics.csv", "run.json", "run.log")}
    prefix = f"run_folders/{kernels()}/{algo}/"
    return {
        prefix + "config.yaml": read["config.yaml"],
        prefix + "metrics.csv": _metrics_without_clock(read["metrics.csv"]),
        prefix + "run.json": _masked_json(read["run.json"], RUN_JSON_MASKED, RUN_JSON_ALWAYS_MASKED),
        prefix + "run.log": _LOG_SOLVE_SECONDS.sub(r"\1, <s>s", _LOG_PID.sub("pid <pid>", _LOG_TIME.sub("<time> ", read["run.log"]))),
        prefix + "checkpoints.json": _checkpoints(run_dir),
    }


def training_runs(algos: list[str] | None = None) -> dict[str, str]:
    """Every golden run's recorded files (or only ``algos``'), each trained in a fresh runs folder."""
    files: dict[str, str] = {}
    for algo in algos or list(GOLDEN_RUNS):
        with tempfile.TemporaryDirectory() as runs:
            files.update(train_golden(algo, Path(runs)))
    return files


# --- recording and comparing -------------------------------------------------------------------------

def render(parts: tuple[str, ...] = PARTS) -> dict[str, str]:
    """The recordings of ``parts`` as they come out of the current tree: path under GOLDEN_DIR -> text."""
    files: dict[str, str] = {}
    if "help" in parts:
        files.update(help_texts())
    if "mcp" in parts:
        files.update(mcp_tools())
    if "runs" in parts:
        files.update(training_runs())
    return files


def recorded(part: str) -> dict[str, str]:
    """The committed recordings of one part (help, mcp or runs)."""
    pattern = {"help": "help/*.txt", "mcp": "mcp_*.json", "runs": f"run_folders/{kernels()}/*/*"}[part]
    return {p.relative_to(GOLDEN_DIR).as_posix(): p.read_text(encoding="utf-8")
            for p in sorted(GOLDEN_DIR.glob(pattern)) if p.is_file()}


def differences(expected: dict[str, str], actual: dict[str, str]) -> str:
    """A unified diff per file that differs, is missing or is new; empty when all are equal."""
    chunks: list[str] = []
    for name in sorted(set(expected) | set(actual)):
        old, new = expected.get(name), actual.get(name)
        if old == new:
            continue
        label = f"tests/fixtures/golden/{name}"
        chunks.extend(difflib.unified_diff((old or "").splitlines(keepends=True),
                                           (new or "").splitlines(keepends=True),
                                           fromfile=f"{label} (recorded)" if old is not None else "/dev/null",
                                           tofile=f"{label} (now)" if new is not None else "/dev/null", n=2))
    return "".join(chunks)


def write(part: str, files: dict[str, str]) -> None:
    """Replace one part's recordings by ``files`` (recordings it no longer produces are deleted)."""
    for name in recorded(part):
        if name not in files:
            (GOLDEN_DIR / name).unlink()
    for name, text in files.items():
        path = GOLDEN_DIR / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    for folder in sorted([*GOLDEN_DIR.glob("run_folders/*/*"), *GOLDEN_DIR.glob("run_folders/*")], reverse=True):
        if folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()
    path = GOLDEN_DIR / RECORDED_WITH
    environments = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    environments[_key(part)] = recording_environment(part)
    path.write_text(json.dumps(dict(sorted(environments.items())), indent=2) + "\n", encoding="utf-8")


def from_commit(rev: str, argv: list[str]) -> int:
    """Run this script with ``argv`` over commit ``rev``'s tree: exported with git archive to a temporary
    folder, which the child process imports our packages from (PYTHONPATH comes before the editable
    install of this checkout)."""
    import subprocess

    with tempfile.TemporaryDirectory(prefix="golden-") as tree:
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", rev], capture_output=True)
        if archive.returncode != 0:
            print(f"record_golden: git archive {rev} failed: {archive.stderr.decode().strip()}", file=sys.stderr)
            return 2
        subprocess.run(["tar", "-x", "-C", tree], input=archive.stdout, check=True)
        commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", rev], capture_output=True,
                                text=True, check=True).stdout.strip()
        print(f"recording the tree of {rev} ({commit}), exported to {tree}", flush=True)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (tree, os.environ.get("PYTHONPATH"))))}
        return subprocess.run([sys.executable, str(Path(__file__).resolve()), *argv, "--tree", tree], env=env,
                              cwd=tree).returncode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--only", nargs="+", choices=PARTS, default=list(PARTS), help="record only these parts")
    parser.add_argument("--check", action="store_true", help="compare with the recordings; write nothing")
    parser.add_argument("--from", dest="rev", metavar="REV", help="record the tree of this commit (e.g. HEAD), "
                        "not the work tree")
    parser.add_argument("--tree", help=argparse.SUPPRESS)  # set by --from: the export the child must import
    args = parser.parse_args(argv)
    if args.rev:
        return from_commit(args.rev, ["--only", *args.only, *(["--check"] if args.check else [])])
    if args.tree and _tree() != Path(args.tree).resolve():
        print(f"record_golden: imported gymnasium_solver from {_tree()}, not from the export {args.tree}",
              file=sys.stderr)
        return 2
    failed = False
    for part in args.only:
        if args.check and (why := comparable(part)):
            print(f"{part}: not compared: {why}")
            continue
        files = render((part,))
        if args.check:
            diff = differences(recorded(part), files)
            print(f"{part}: {'differs' if diff else 'unchanged'} ({len(files)} files)")
            if diff:
                print(diff)
                failed = True
        else:
            write(part, files)
            print(f"{part}: recorded {len(files)} files under {GOLDEN_DIR.relative_to(ROOT)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
