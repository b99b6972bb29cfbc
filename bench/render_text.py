"""Text helpers every rendered block shares (bench/render_tables.py, bench/render_diagnosis.py): numbers,
seed ranges, the provenance sentence and the line width."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_results import Measured  # noqa: E402 - a sibling script, not a package

WIDTH = 100


def steps(n: float) -> str:
    return f"{n:,.0f}"


def seeds_text(seeds: list[int]) -> str:
    """``10-29`` for a run of seeds, else the list."""
    if len(seeds) > 2 and seeds == list(range(seeds[0], seeds[-1] + 1)):
        return f"{seeds[0]}-{seeds[-1]}"
    return ", ".join(map(str, seeds))


def provenance(m: Measured) -> str:
    """The sentence every block ends with: command, commit, machine, libraries, load."""
    libs = ", ".join(f"{lib} {v}" for lib, v in m.versions.items() if v is not None)
    edited = f" plus uncommitted edits to {len(m.edited)} training files (listed in the results file)" if m.edited else ""
    kernels = f", {m.machine.kernels} kernels" if m.machine.kernels else ""
    return (f"Measured by `{m.command}` at commit `{m.commit}`{edited}, {m.date}, on {m.machine.cpu} "
            f"({m.machine.cores} cores{kernels}, {m.machine.platform}, Python {m.machine.python}; {libs}), load average "
            f"{m.load_start:g} at the start and {m.load_end:g} at the end.")


def fill(text: str) -> str:
    return "\n\n".join(textwrap.fill(p, WIDTH, break_on_hyphens=False, break_long_words=False)
                       for p in text.split("\n\n"))
