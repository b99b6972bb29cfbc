"""Nothing changed that nobody meant to change (issue 24, 'How we know nothing changed'): `gsolve --help` of
every command, the MCP tool schemas and a short run of every algorithm at a fixed seed, against the
recordings in tests/fixtures/golden/ (made by scripts/record_golden.py, whose docstring says what is
recorded and what is taken out as per-machine or per-time).

A failure prints the difference and the command that re-records it. Re-record only a change you meant
(a new flag, a reworded tool description, a new metric column): then the fixtures' diff is part of the
change's review. The training runs are marked slow (a few seconds of CPU each; `make test` runs them)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import UnionType
from typing import Union, get_args, get_origin

import cpu_identity  # scripts/ is on sys.path (conftest.py)
import pytest
import record_golden as golden
from pydantic import BaseModel

from gymnasium_solver.contract.algorithms import ALGORITHMS
from gymnasium_solver.contract.metric_names import COMMON_COLUMNS, PPO_COLUMNS, M
from gymnasium_solver.contract.run_folder import RunInfo

ROOT = Path(__file__).resolve().parents[1]
# The CPU makers and kernel sets the runs are recorded for (run_folders/<maker>-<kernels>/).
RECORDED_KERNELS = sorted(p.name for p in (golden.GOLDEN_DIR / "run_folders").iterdir() if p.is_dir())


def differs(part: str, diff: str) -> str:
    """The failure message: what differs, and how to re-record a change that was meant."""
    return (f"The {part} recordings differ from what this tree produces (- recorded, + now):\n\n{diff}\n"
            f"A change you did not mean: fix the code. A change you meant: re-record with\n"
            f"    {golden.RECORD_COMMAND} --only {part}\n"
            f"then review `git diff tests/fixtures/golden` and commit it with the change.")


def assert_as_recorded(part: str, now: dict[str, str]) -> None:
    if why := golden.comparable(part):
        pytest.skip(why)
    if diff := golden.differences(golden.recorded(part), now):
        pytest.fail(differs(part, diff), pytrace=False)


def test_every_algorithm_has_a_golden_run() -> None:
    assert set(golden.GOLDEN_RUNS) == {a.value for a in ALGORITHMS}, (
        "each algorithm in gymnasium_solver/contract/algorithms.py needs one entry in scripts/record_golden.py's "
        f"GOLDEN_RUNS, then `{golden.RECORD_COMMAND} --only runs`")


def test_help_of_every_command_is_as_recorded() -> None:
    now = golden.help_texts()
    assert {"help/gsolve.txt", "help/gsolve_train.txt", "help/gsolve_presets_save.txt"} <= set(now)
    assert_as_recorded("help", now)


def test_the_command_prints_the_recorded_help() -> None:
    """The recordings are argparse's format_help in-process; `gsolve train --help` in a process of its own
    prints the same (`gsolve` is ``gymnasium_solver.cli.app:main``; run with -m, it imports this tree even where
    the editable install points at another checkout)."""
    if why := golden.comparable("help"):
        pytest.skip(why)
    env = {**os.environ, "COLUMNS": str(golden.HELP_COLUMNS), "NO_COLOR": "1"}
    out = subprocess.run([sys.executable, "-m", "gymnasium_solver.cli.app", "train", "--help"], capture_output=True,
                         text=True, env=env, cwd=ROOT, timeout=120, check=True).stdout
    assert out == golden.recorded("help")["help/gsolve_train.txt"]


def test_mcp_tool_schemas_are_as_recorded() -> None:
    now = golden.mcp_tools()
    assert '"name": "start_training"' in now["mcp_tools.json"] and '"debug_run"' in now["mcp_server.json"]
    assert_as_recorded("mcp", now)


@pytest.mark.slow
def test_a_run_of_every_algorithm_is_as_recorded() -> None:
    """Trained in a process of its own, as the recorder trains them: nothing an earlier test left in this
    process (torch threads, registered environments) can change a float. PYTHONPATH: this tree's packages,
    even where the editable install points at another checkout."""
    if why := golden.comparable("runs"):
        pytest.skip(why)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH"))))}
    done = subprocess.run([sys.executable, "scripts/record_golden.py", "--check", "--only", "runs"],
                          capture_output=True, text=True, cwd=ROOT, env=env, timeout=900)
    if done.returncode != 0:
        pytest.fail(differs("runs", done.stdout + done.stderr), pytrace=False)
    assert "runs: unchanged" in done.stdout, done.stdout


def test_the_runs_train_from_the_pinned_presets_not_the_shipped_ones() -> None:
    """A preset's retune must not re-record the runs (the intel-avx512 ones need an Intel machine): every recorded run
    that takes a preset took it from tests/fixtures/golden/presets/, through the folder a user's presets live in."""
    from gymnasium_solver.config.presets import CONFIG_DIR_ENV

    assert golden.CONFIG_DIR_ENV == CONFIG_DIR_ENV
    origins = {}
    for kernels in RECORDED_KERNELS:
        for path in sorted((golden.GOLDEN_DIR / "run_folders" / kernels).glob("*/run.json")):
            origin = json.loads(path.read_text(encoding="utf-8"))["config_origin"]
            origins[f"{kernels}/{path.parent.name}"] = (origin["settings"], origin["where"].split(" (")[0])
    pinned = {f"tests/fixtures/golden/presets/{p.name}" for p in golden.GOLDEN_PRESETS.glob("*.yaml")}
    from_presets = {k: where for k, (settings, where) in origins.items() if settings == "preset"}
    assert len(from_presets) == 6 * len(RECORDED_KERNELS) and set(from_presets.values()) == pinned, origins


# The comparison itself, so that a silent pass means equal recordings.

def test_a_changed_missing_or_new_file_is_a_difference() -> None:
    recorded = {"a.txt": "one\ntwo\n", "b.txt": "kept\n"}
    assert golden.differences(recorded, dict(recorded)) == ""
    diff = golden.differences(recorded, {"a.txt": "one\nthree\n", "c.txt": "new\n"})
    assert "-two\n+three\n" in diff
    assert "tests/fixtures/golden/b.txt (recorded)\n+++ /dev/null" in diff
    assert "--- /dev/null\n+++ tests/fixtures/golden/c.txt (now)" in diff


def test_only_the_clock_columns_are_taken_out_of_metrics() -> None:
    header = ",".join(PPO_COLUMNS)
    kept = golden._metrics_without_clock(f"{header}\n" + ",".join(["1"] * len(PPO_COLUMNS)) + "\n")
    clock = {M.WALL_SECONDS, M.FPS, M.ROLLOUT_SECONDS, M.UPDATE_SECONDS}
    assert kept.splitlines()[0].split(",") == [c for c in PPO_COLUMNS if c not in clock]
    assert {c for c in COMMON_COLUMNS if c.startswith("time/")} == clock


def test_run_json_keeps_every_key_and_masks_only_what_varies() -> None:
    text = ('{"run_id": "r", "pid": 12, "host": null, "created_at": "2026-01-01", "versions": {"torch": "2"}, '
            '"git_commit": null, '
            '"progress": {"env_steps": 5, "wall_seconds": 1.5}, "warnings": [{"time": "t", "kind": "k"}], '
            f'"config_origin": {{"where": "{golden.ROOT}/gymnasium_solver/presets/environments/X.yaml"}}}}')
    masked = golden._masked_json(text, golden.RUN_JSON_MASKED, golden.RUN_JSON_ALWAYS_MASKED)
    assert masked == (
        '{\n  "run_id": "r",\n  "pid": "<pid>",\n  "host": null,\n  "created_at": "<time>",\n'
        '  "versions": {\n    "torch": "<version>"\n  },\n  "git_commit": "<commit>",\n'
        '  "progress": {\n    "env_steps": 5,\n    "wall_seconds": "<wall clock>"\n  },\n'
        '  "warnings": [\n    {\n      "time": "<time>",\n      "kind": "k"\n    }\n  ],\n'
        '  "config_origin": {\n    "where": "gymnasium_solver/presets/environments/X.yaml"\n  }\n}\n')


def test_a_recording_from_another_environment_is_not_compared(monkeypatch: pytest.MonkeyPatch) -> None:
    """Another torch (or CPU) trains to other floats: the part is skipped, saying why and how to record here."""
    now = golden.recording_environment("mcp")
    monkeypatch.setattr(golden, "recorded_environment", lambda part: {**now, "pydantic": "1.0"})
    why = golden.comparable("mcp")
    assert f"pydantic 1.0 -> {now['pydantic']}" in why and "--from <commit before the change> --only mcp" in why
    monkeypatch.setattr(golden, "recorded_environment", lambda part: dict(now))
    assert golden.comparable("mcp") == ""


def _time_fields(model: type[BaseModel], prefix: str = "") -> Iterator[str]:
    """Dotted paths (``[]`` for list items) of a model's fields that hold a time or a clock reading."""
    for name, field in model.model_fields.items():
        path = f"{prefix}{name}"
        if name in ("time", "pid", "host") or name.endswith(("_at", "seconds")) and name != "solved_at":
            yield path
        optional = get_origin(field.annotation) in (Union, UnionType)
        for arg in get_args(field.annotation) if optional else (field.annotation,):
            listed = get_origin(arg) is list
            inner = get_args(arg)[0] if listed else arg
            if isinstance(inner, type) and issubclass(inner, BaseModel):
                yield from _time_fields(inner, f"{path}{'[]' if listed else ''}.")


def test_every_time_field_of_run_json_is_masked() -> None:
    """A new per-time field in RunInfo is masked by the recorder before it makes a recording differ."""
    fields = set(_time_fields(RunInfo))
    assert {"created_at", "progress.wall_seconds", "resumes[].time", "warnings[].time", "pid"} <= fields
    assert fields <= set(golden.RUN_JSON_MASKED), sorted(fields - set(golden.RUN_JSON_MASKED))


def test_the_runs_are_recorded_per_cpu_kernel_set_and_an_unrecorded_one_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    """AVX2 and AVX512 kernels, and AMD's and Intel's CPUs with the same kernels, train the same seed to other floats:
    each has its own recording of the same runs, named for the maker and kernels, and a machine that has none is told
    how to record them, not compared."""
    # intel-avx512 as well while the last change to training numerics was recorded on an Intel machine too
    # (DEVELOPERS.md: an AMD AVX512 machine records both AMD sets and cannot emulate Intel's).
    assert {"amd-avx2", "amd-avx512"} <= set(RECORDED_KERNELS)
    by_kernels = {}
    for k in RECORDED_KERNELS:
        monkeypatch.setattr(golden, "kernels", lambda k=k: k)
        by_kernels[k] = {name.split("/", 2)[2] for name in golden.recorded("runs")}
        assert golden.recorded_environment("runs")["cpu_vendor"] == {"intel": "GenuineIntel", "amd": "AuthenticAMD"}[
            k.split("-")[0]]
    assert all(names == by_kernels["amd-avx2"] for names in by_kernels.values())
    assert {name.split("/")[0] for name in by_kernels["amd-avx2"]} == set(golden.GOLDEN_RUNS)
    monkeypatch.setattr(golden, "kernels", lambda: "intel-avx9")
    assert golden.recorded("runs") == {} and golden.recorded_environment("runs") is None
    assert "runs was never recorded on intel-avx9 (CPU maker and kernels)" in golden.comparable("runs")


def test_the_cpu_maker_is_read_from_cpuinfo(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The recording's name starts with the maker /proc/cpuinfo gives; a CPU that names none is keyed by kernels."""
    import torch

    capability = torch.backends.cpu.get_cpu_capability().lower()
    monkeypatch.setattr(cpu_identity, "CPUINFO", tmp_path / "cpuinfo")
    for text, vendor, key, model in (
            ("processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC \n", "AuthenticAMD",
             f"amd-{capability}", "AMD EPYC"),
            ("vendor_id : GenuineIntel\nmodel name : Intel(R) Xeon(R) Processor\n", "GenuineIntel",
             f"intel-{capability}", "Intel(R) Xeon(R) Processor"),
            ("processor : 0\n", "", capability, "")):
        (tmp_path / "cpuinfo").write_text(text, encoding="utf-8")
        assert (golden.cpu_vendor(), golden.kernels(), cpu_identity.cpu_model()) == (vendor, key, model)
