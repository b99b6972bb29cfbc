"""README.md's blocks from bench/bench_install.py's record (bench/analysis/install.json): what `make demo`, a
plain `pip install .` and `make test` took on a fresh clone, and what the two make commands print."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_install  # noqa: E402 - a sibling script, not a package
from render_text import fill, steps  # noqa: E402

SHOW_LINES = 6  # of `gsolve show`'s answer (its run line and status to solved), after the trainer's last lines
ECHOED = (".venv/", "env -u", "Installing ")  # what make echoes (its commands, the install notice), not the program


def _part(name: str) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """The record and its part ``name``, or None when that part was never measured."""
    path = bench_install.OUT
    record = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    return (record, record[name]) if name in record else None


def _with_output(intro: str, lines: list[str]) -> str:
    return f"{intro}\n\n```\n" + "\n".join(lines) + "\n```"


def _where(part: dict[str, Any], record: dict[str, Any]) -> str:
    m = record["measured"]["machine"]
    return (f"on a fresh clone of `{part['commit']}` ({part['date']}, {m['cpu']}, {m['cores']} cores, load average "
            f"{part['load_start']:g} at the start and {part['load_end']:g} at the end)")


def _minutes(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 120 else f"{int(seconds // 60)} min {seconds % 60:.0f} s"


def demo_lines(output: list[str]) -> list[str]:
    """The demo's last two evaluation lines, the trainer's closing lines and the head of `gsolve show`."""
    lines = [ln for ln in output if not ln.startswith(ECHOED)]
    evals = [i for i, ln in enumerate(lines) if ln.startswith("eval at ")]
    if not evals:
        return lines[-SHOW_LINES:]
    start = evals[-2] if len(evals) > 1 else evals[-1]
    shown = next((i for i, ln in enumerate(lines) if ln.startswith("run ") and i > evals[-1]), len(lines))
    tail = lines[shown:shown + SHOW_LINES]
    more = ["  ..."] if len(lines) > shown + SHOW_LINES else []
    return lines[start:shown] + tail + more


def render_demo(_results: object) -> str:
    if (found := _part("demo")) is None:
        return "No record yet: run bench/bench_install.py --parts demo."
    record, d = found
    intro = fill(f"`make demo` (the core install only, without pip's bytecode pass over torch: the first run compiles "
                 f"only what it imports) took **{_minutes(d['seconds'])}** {_where(d, record)}, with pip's cache warm "
                 f"from earlier installs, and ended with the lines below (piped, as here, each evaluation is a line; "
                 f"on a terminal the bar redraws in place, with percent, rate and ETA; the evaluation returns differ "
                 f"in their last episodes from one CPU kind to another). Measured by `bench/bench_install.py`.")
    return _with_output(intro, demo_lines(d["output"]))


def _mb(n: int) -> str:
    return f"{n / 1e6:,.0f} MB"


def render_install(_results: object) -> str:
    if (found := _part("pip")) is None:
        return "No record yet: run bench/bench_install.py --parts pip."
    record, p = found
    largest = ", ".join(f"{x['package']} {_mb(x['bytes'])}" for x in p["largest"])
    solved = (f"solved at {steps(p['solved']['env_steps'])} env steps ({_minutes(p['train_seconds'])} from launch to exit)"
              if p.get("solved") else f"ran to its budget without solving ({_minutes(p['train_seconds'])})")
    return fill(f"`python3 -m venv V && V/bin/pip install --quiet <checkout>` took **{_minutes(p['seconds'])}, "
                f"{p['bytes'] / 1e9:.1f} GB** on disk (the largest: {largest}) {_where(p, record)}, with pip's cache "
                f"warm (torch 2.13.0 CPU from it); `V/bin/gsolve train CartPole-v1:ppo` from another folder then "
                f"{solved}. Measured by `bench/bench_install.py --parts pip`.")


def test_lines(output: list[str]) -> list[str]:
    """ruff's and mypy's verdicts, pytest's first progress line and its summary."""
    verdicts = [ln for ln in output if ln.startswith(("All checks passed", "Success: no issues"))]
    progress = [ln for ln in output if ln.startswith(".") and ln.rstrip().endswith("%]")]
    summary = [ln for ln in output if bench_install.PASSED.match(ln)]
    return verdicts + progress[:1] + (["..."] if len(progress) > 1 else []) + summary[-1:]


def render_test(_results: object) -> str:
    if (found := _part("tests")) is None:
        return "No record yet: run bench/bench_install.py --parts tests."
    record, t = found
    intro = fill(f"`make test` installed every extra in {_minutes(t['install_seconds'])} (pip's cache warm), then ran "
                 f"ruff, mypy and **{t['passed']:,} tests** with one worker per core in {_minutes(t['test_seconds'])} "
                 f"{_where(t, record)}. Measured by `bench/bench_install.py --parts tests`; it ended with:")
    return _with_output(intro, test_lines(t["output"]))


RENDERERS: dict[str, Callable[[Any], str]] = {"readme-demo": render_demo, "readme-install": render_install,
                                              "readme-test": render_test}
