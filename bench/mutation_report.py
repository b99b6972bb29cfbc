"""Mutation testing of the core modules with mutmut, and the kill-rate table of docs/testing.md.

For each target in TARGETS (a few source files and the fast test files that guard them) this script
copies the repository into a temporary folder (``git archive`` of a commit, or the working tree with
``--worktree``), runs ``mutmut run --max-children 1`` there over that target only, reads mutmut's
verdicts into bench/mutation_results.json (one entry per target, with its command, commit, date and
load) and renders the table between ``<!-- mutation-report -->`` and ``<!-- end mutation-report -->`` in
docs/testing.md from it, every surviving mutant beside the reason it is benign
(bench/mutation_benign.yaml; a survivor without a reason is listed as "not explained"). Nothing else is
written inside the repository: mutmut's ``mutants/`` folder lives and dies in the temporary copy.

    .venv/bin/python bench/mutation_report.py                      # every target, HEAD (make mutation)
    .venv/bin/python bench/mutation_report.py --target advantages  # one target; the others keep their verdicts
    .venv/bin/python bench/mutation_report.py --worktree --no-write --target store  # try uncommitted tests
    .venv/bin/python bench/mutation_report.py --render-only       # re-render after explaining a survivor

One worker, always: the machine is shared. Never point a target at the slow learning tests.
"""

from __future__ import annotations

import argparse
import ast
import datetime as dt
import fnmatch
import io
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "testing.md"
BENIGN = ROOT / "bench" / "mutation_benign.yaml"
BEGIN, END = "<!-- mutation-report -->", "<!-- end mutation-report -->"
MUTMUT = Path(sys.executable).with_name("mutmut")
# mutmut's verdicts that count as caught: a test failed, or the mutant made the tests hang (an infinite loop).
KILLED = ("killed", "timeout")


@dataclass(frozen=True)
class Target:
    name: str
    what: str
    files: tuple[str, ...]
    tests: tuple[str, ...]
    # mutmut mutant-name globs (module.x_function__mutmut_*); empty: every function in ``files``.
    functions: tuple[str, ...] = ()
    # The files register their functions with a ``@rule(...)`` decorator, which mutmut 3 never mutates
    # inside: the copy registers them with a call after each function instead (see undecorate()).
    undecorate: bool = False
    # mutmut kills a mutant's test run after (the tests' measured seconds + 1) x this (15 by default), as a
    # timeout (a kill). A loop's mutants that never end a run (a budget check made None, an evaluation
    # schedule that stops advancing) would each hold the one worker for minutes at the default.
    timeout_multiplier: float | None = None


@dataclass
class Outcome:
    target: Target
    counts: dict[str, int] = field(default_factory=dict)
    survivors: dict[str, str] = field(default_factory=dict)  # mutant name -> its diff
    seconds: float = 0.0
    command: str = ""
    commit: str = ""
    date: str = ""
    load: tuple[float, float] = (0.0, 0.0)  # load average at the start and the end of the target's run

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def killed(self) -> int:
        return sum(n for status, n in self.counts.items() if status in KILLED)


# verdict.py's functions that decide (its message() and _seeds_text() only word the decision).
VERDICT_DECISIONS = ("seeds_of", "baseline_seeds_of", "trial_seed", "arm_result", "baseline_arm", "candidate_arms",
                     "_key", "rank", "beats", "preferred", "drop_allowed", "qualifies", "unlucky", "make_winner",
                     "decide")

# session.py's methods that keep the loop's weights and end a run (its setup, restore, metrics row and
# checkpoint retention have tests of their own: test_resume.py, test_golden.py, test_run_folder.py).
SESSION_CORE = ("guarded_update", "guarded_learn", "_guarded", "maybe_evaluate", "evaluate_now", "save_last",
                "finish", "fail", "_log_quietly")

TARGETS: tuple[Target, ...] = (
    Target("contract", "run-folder contract: run.json, metrics.csv, statuses and crash detection, the algorithm table",
           ("gymnasium_solver/contract/run_folder.py", "gymnasium_solver/contract/metric_names.py", "gymnasium_solver/contract/algorithms.py"),
           ("tests/test_run_folder.py", "tests/test_algorithms.py")),
    Target("advantages", "GAE and discounted returns", ("gymnasium_solver/maths/advantages.py",),
           ("tests/test_advantages.py",)),
    Target("store", "run store: best-run ranking and a run's threshold", ("gymnasium_solver/run_store/summaries.py",),
           ("tests/test_run_store.py",),
           ("gymnasium_solver.run_store.summaries.x_best_run__mutmut_*",
            "gymnasium_solver.run_store.summaries.x_run_threshold__mutmut_*")),
    Target("selection", "sweep best trial and sweep-check ranking, fix-experiment verdicts",
           ("gymnasium_solver/sweeps/report.py", "gymnasium_solver/sweeps/check.py",
            "gymnasium_solver/experiments/verdict.py"),
           ("tests/test_sweep_check.py", "tests/test_experiments.py"),
           ("gymnasium_solver.sweeps.report.x_best_trial__mutmut_*", "gymnasium_solver.sweeps.check.x__score__mutmut_*",
            *(f"gymnasium_solver.experiments.verdict.x_{f}__mutmut_*" for f in VERDICT_DECISIONS))),
    Target("diagnosis", "update-size rules against their thresholds (KL, clip fraction, gradient norm)",
           ("gymnasium_solver/diagnostics/rules/optimisation.py",),
           ("tests/test_diagnostics_rules.py",),
           ("*.x_grad_norm_explosion__mutmut_*", "*.x_approx_kl_high__mutmut_*", "*.x_clip_fraction_high__mutmut_*",
            "*.x_approx_kl_low__mutmut_*"), undecorate=True),
    Target("training", "the loop of both protocols; a run's weight copies and rollback, evaluations, endings "
           "and failure handling", ("gymnasium_solver/train/training.py", "gymnasium_solver/train/session.py"),
           ("tests/test_training_loop.py", "tests/test_training_protocols.py", "tests/test_ppo.py",
            "tests/test_training.py",
            "tests/test_fault_injection_write.py::test_a_disk_refusing_writes_is_recorded_as_such",
            "tests/test_fault_injection_write.py::test_a_full_disk_advises_a_resume_only_when_there_is_a_checkpoint"),
           ("gymnasium_solver.train.training.x__run__mutmut_*",
            "gymnasium_solver.train.training.x__on_policy_iteration__mutmut_*",
            "gymnasium_solver.train.training.x__off_policy_iteration__mutmut_*",
            *(f"gymnasium_solver.train.session.x\u01c1Session\u01c1{f}__mutmut_*" for f in SESSION_CORE)),
           timeout_multiplier=4.0),
)


def git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, check=True, capture_output=True, text=True).stdout.strip()


def copy_repo(dst: Path, *, worktree: bool) -> str:
    """Copy the committed tree of HEAD (or the working tree's tracked and untracked-but-not-ignored files)
    into ``dst``; the short commit copied (with a note when the working tree was)."""
    commit = git("rev-parse", "--short", "HEAD")
    if not worktree:
        data = subprocess.run(["git", "archive", "--format=tar", commit], cwd=ROOT, check=True,
                              capture_output=True).stdout
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            tar.extractall(dst, filter="data")
        return commit
    for rel in git("ls-files", "--cached", "--others", "--exclude-standard").splitlines():
        src = ROOT / rel
        if src.is_file():
            (dst / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst / rel)
    return f"{commit} plus working-tree edits"


def undecorate(source: str, decorator: str = "rule") -> str:
    """``@rule("id")\\ndef f(...): ...`` -> ``def f(...): ...\\nrule("id")(f)``: the same registration, in the
    same order, with a function mutmut will mutate (it leaves decorated functions alone, since a decorator
    runs at definition time)."""
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    edits: list[tuple[int, int, int, str]] = []  # a decorator's first and last line, the function's last, the call
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef) or len(node.decorator_list) != 1:
            continue
        dec = node.decorator_list[0]
        if isinstance(dec, ast.Call) and isinstance(dec.func, ast.Name) and dec.func.id == decorator:
            call = ast.get_source_segment(source, dec)
            edits.append((dec.lineno, dec.end_lineno or dec.lineno, node.end_lineno or node.lineno,
                          f"{call}({node.name})\n"))
    for first, last, end, call in reversed(edits):
        lines.insert(end, call)
        del lines[first - 1:last]
    return "".join(lines)


def mutmut_config(target: Target) -> str:
    def toml_list(items: tuple[str, ...] | list[str]) -> str:
        return "[" + ", ".join(json.dumps(i) for i in items) + "]"

    return (
        "\n[tool.mutmut]\n"
        'source_paths = ["gymnasium_solver"]\n'
        f"only_mutate = {toml_list(target.files)}\n"
        'also_copy = ["mcp_server", "scripts", "bench", "docs", "README.md", "DEVELOPERS.md", "Makefile"]\n'
        f"pytest_add_cli_args_test_selection = {toml_list(target.tests)}\n"
        'pytest_add_cli_args = ["-p", "no:cacheprovider", "-p", "no:randomly", "-x", "-q"]\n'
        "use_git_change_detection = false\n"
        + (f"timeout_multiplier = {target.timeout_multiplier}\n" if target.timeout_multiplier else "")
    )


def read_verdicts(work: Path) -> dict[str, str]:
    """mutant name -> mutmut's status, from the .meta files mutmut leaves beside each mutated file."""
    from mutmut.stats import status_by_exit_code  # the tool's own mapping of exit codes to verdicts

    out: dict[str, str] = {}
    for meta in (work / "mutants").rglob("*.py.meta"):
        for name, code in json.loads(meta.read_text())["exit_code_by_key"].items():
            out[name] = status_by_exit_code[code]
    return out


def run_target(target: Target, *, worktree: bool, log: Path) -> Outcome:
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix=f"gs-mutation-{target.name}-") as tmp:
        work = Path(tmp)
        commit = copy_repo(work, worktree=worktree)
        if target.undecorate:
            for f in target.files:
                path = work / f
                path.write_text(undecorate(path.read_text(encoding="utf-8")), encoding="utf-8")
        with (work / "pyproject.toml").open("a", encoding="utf-8") as toml:
            toml.write(mutmut_config(target))
        env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1"}
        with log.open("a", encoding="utf-8") as out:
            out.write(f"\n=== {target.name} ===\n")
            out.flush()
            proc = subprocess.run([str(MUTMUT), "run", "--max-children", "1", *target.functions], cwd=work, env=env,
                                  stdout=out, stderr=subprocess.STDOUT)
        if proc.returncode != 0:
            raise SystemExit(f"mutmut failed on target {target.name!r} (exit {proc.returncode}); see {log}")
        verdicts = read_verdicts(work)
        if target.functions:
            verdicts = {k: v for k, v in verdicts.items() if any(fnmatch.fnmatch(k, g) for g in target.functions)}
        outcome = Outcome(target, commit=commit)
        for status in verdicts.values():
            outcome.counts[status] = outcome.counts.get(status, 0) + 1
        for name, status in sorted(verdicts.items()):
            if status not in KILLED:
                diff = subprocess.run([str(MUTMUT), "show", name], cwd=work, env=env, capture_output=True,
                                      text=True).stdout
                outcome.survivors[name] = diff
    outcome.seconds = time.monotonic() - t0
    return outcome


def changed_line(diff: str) -> str:
    """The mutated line of a mutant's diff, for the survivors list."""
    plus = [ln[1:].strip() for ln in diff.splitlines() if ln.startswith("+") and not ln.startswith("+++")]
    return plus[0] if plus else "(see `mutmut show`)"


def render(outcomes: list[Outcome], benign: dict[str, str] | None = None) -> str:
    """The table and the survivors list; ``benign`` maps a mutant name to why it cannot matter (default:
    bench/mutation_benign.yaml)."""
    if benign is None:
        benign = (yaml.safe_load(BENIGN.read_text(encoding="utf-8")) or {}) if BENIGN.exists() else {}
    commands = sorted({f"`{o.command}`" for o in outcomes})
    lines = [f"Measured by {' and '.join(commands)} with mutmut {_version('mutmut')}, Python "
             f"{platform.python_version()}, one worker, each target in a temporary copy of the commit in its row "
             "(the load average at the start and the end of its run beside it).", "",
             "| target | what | files | test files | mutants | killed | survived | kill rate | measured at |",
             "|---|---|---|---|---:|---:|---:|---:|---|"]
    total = killed = 0
    for o in outcomes:
        t = o.target
        files = ", ".join(f"`{f.removeprefix('gymnasium_solver/')}`" for f in t.files)
        tests = ", ".join(f"`{f.removeprefix('tests/')}`" for f in t.tests)
        rate = f"{100 * o.killed / o.total:.1f}%" if o.total else "n/a"
        lines.append(f"| {t.name} | {t.what} | {files} | {tests} | {o.total} | {o.killed} | {o.total - o.killed} "
                     f"| {rate} | `{o.commit}`, {o.date}, load {o.load[0]:.1f}-{o.load[1]:.1f} |")
        total, killed = total + o.total, killed + o.killed
    lines.append(f"| **all** | | | | {total} | {killed} | {total - killed} | "
                 f"{100 * killed / total:.1f}% | |" if total else "| **all** | | | | 0 | 0 | 0 | n/a | |")
    lines += ["", "Surviving mutants and why each is benign:", ""]
    any_survivor = False
    for o in outcomes:
        for name, diff in o.survivors.items():
            any_survivor = True
            reason = benign.get(name) or "**not explained**"
            lines.append(f"- `{name}`: `{changed_line(diff)}` - {reason}")
    if not any_survivor:
        lines.append("- none")
    return "\n".join(lines)


def _version(dist: str) -> str:
    from importlib.metadata import version

    return version(dist)


def write_block(block: str) -> None:
    text = DOC.read_text(encoding="utf-8")
    pattern = re.compile(re.escape(BEGIN) + r"\n.*?" + re.escape(END), re.DOTALL)
    if not pattern.search(text):
        raise SystemExit(f"{DOC} has no {BEGIN} ... {END} block to fill")
    DOC.write_text(pattern.sub(lambda _: f"{BEGIN}\n{block}\n{END}", text), encoding="utf-8")


def save(path: Path, outcomes: list[Outcome]) -> None:
    """Write the verdicts of ``outcomes`` into the results file, keeping other targets' earlier ones."""
    data = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    for o in outcomes:
        data[o.target.name] = {"counts": o.counts, "survivors": o.survivors, "seconds": round(o.seconds, 1),
                               "command": o.command, "commit": o.commit, "date": o.date, "load": list(o.load)}
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")


def load(path: Path) -> list[Outcome]:
    """The saved outcome of every target, in TARGETS order; SystemExit naming the targets not measured."""
    data = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    missing = [t.name for t in TARGETS if t.name not in data]
    if missing:
        raise SystemExit(f"{path} has no verdicts for {', '.join(missing)}: run bench/mutation_report.py "
                         + " ".join(f"--target {m}" for m in missing))
    return [Outcome(t, d["counts"], d["survivors"], d["seconds"], d["command"], d["commit"], d["date"],
                    (d["load"][0], d["load"][1])) for t in TARGETS for d in [data[t.name]]]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--target", action="append", choices=[t.name for t in TARGETS],
                   help="run only this target (repeatable); default: all. The table keeps the others' last verdicts")
    p.add_argument("--worktree", action="store_true",
                   help="mutate a copy of the working tree (uncommitted edits included) instead of HEAD; "
                        "implies --no-write")
    p.add_argument("--no-write", action="store_true",
                   help="print the verdicts, leave docs/testing.md and the results file alone")
    p.add_argument("--log", type=Path, default=Path(tempfile.gettempdir()) / "gs-mutation.log",
                   help="where mutmut's own output goes (default: %(default)s)")
    p.add_argument("--results", type=Path, default=ROOT / "bench" / "mutation_results.json",
                   help="the verdicts of every target, which the table is rendered from (default: %(default)s)")
    p.add_argument("--render-only", action="store_true",
                   help="run nothing: re-render the table from --results (after explaining a survivor in "
                        "bench/mutation_benign.yaml)")
    args = p.parse_args(argv)
    write = not (args.no_write or args.worktree)
    outcomes: list[Outcome] = []
    if not args.render_only:
        if not MUTMUT.exists():
            raise SystemExit(f"{MUTMUT} not found: install the dev extra (.venv/bin/pip install -e '.[dev]')")
        args.log.write_text("", encoding="utf-8")
        command = "make mutation" if not args.target else " ".join(["bench/mutation_report.py", *sys.argv[1:]])
        for t in [t for t in TARGETS if not args.target or t.name in args.target]:
            load0 = os.getloadavg()[0]
            o = run_target(t, worktree=args.worktree, log=args.log)
            o.command, o.date = command, dt.date.today().isoformat()
            o.load = (load0, os.getloadavg()[0])
            print(f"{t.name}: {o.killed}/{o.total} killed, {o.total - o.killed} not ({o.seconds:.0f} s)", flush=True)
            for name, diff in o.survivors.items():
                print(f"  survived {name}: {changed_line(diff)}", flush=True)
            outcomes.append(o)
            if write:
                save(args.results, [o])
    if write or args.render_only:
        block = render(load(args.results))
        print(block)
        write_block(block)
    else:
        print(render(outcomes))
    return 0


if __name__ == "__main__":
    sys.exit(main())
