"""A drift check for issue 22's any-environment figures: re-train our arm of each env's newest side by side
(bench/bench_any_env.py, docs/benchmarks.md's ``any-env`` block) on its recorded seeds with today's code, and
compare env steps to solve seed by seed.

Env steps to solve are exact per seed on one machine with one set of libraries (the drift gate's premise, bench/
bench_check.py), so a seed that solves at other env steps today means the code, the resolved settings, the
libraries or the CPU changed since that side by side, and its figures no longer describe what ``gsolve train ENV``
does. Each env is re-run as it was recorded: its command is read back with the bench's own parser (its
``--env-package`` and ``--threshold``), the same solve definition (``bench_any_env.ours_command``). The Zoo's arm
is not re-run (it measures SB3, not us), so the wall-time ratio is the side by side's; what this says is whether
our half of it still holds.

    .venv/bin/python bench/any_env_drift.py                          # every env of the any-env block
    .venv/bin/python bench/any_env_drift.py Taxi-v4 FrozenLake-v1    # some of them
    .venv/bin/python bench/any_env_drift.py --write any_env_drift    # record it: docs' any-env-drift block

Exit 1 naming each seed whose env steps (or solved) moved; a recorded side by side from another CPU is compared
all the same and says so (its vector kernels round differently, so a difference there need not be a regression).
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_any_env  # noqa: E402 - a sibling script, not a package
import bench_results  # noqa: E402 - a sibling script, not a package
from bench_results import Results  # noqa: E402
from render_any_env import DRIFT, side_by_sides  # noqa: E402


class Recorded(NamedTuple):
    """An env's newest side by side: the file's name and record, and the command's packages and thresholds."""

    name: str
    results: Results
    packages: list[str]
    thresholds: list[str]


def recorded(env: str, results: dict[str, Results]) -> Recorded:
    """The newest side by side of ``env``; SystemExit naming the envs there are for one never measured."""
    latest = side_by_sides(results)
    if env not in latest:
        raise SystemExit(f"{env}: no side by side of it in bench/results (bench_any_env.py's files); measured there: "
                         f"{', '.join(sorted(latest)) or 'none'}")
    r = results[latest[env]]
    words = shlex.split(r.measured.command)
    script = next((i for i, w in enumerate(words) if w.endswith("bench_any_env.py")), None)
    if script is None:
        raise SystemExit(f"{latest[env]}.json: its command is not bench_any_env.py's: {r.measured.command}")
    args = bench_any_env.build_parser().parse_args(words[script + 1:])
    return Recorded(latest[env], r, list(args.env_package), list(args.threshold))


class SeedCheck(NamedTuple):
    seed: int
    then: bench_results.Row
    now: bench_any_env.Outcome

    @property
    def same(self) -> bool:
        return (self.then.solved, self.then.env_steps) == (self.now.solved, self.now.env_steps)


Runner = Callable[[bench_any_env.Target, int, Sequence[str]], bench_any_env.Outcome]


def check_env(env: str, rec: Recorded, run: Runner = bench_any_env.run_ours) -> list[SeedCheck]:
    """Our arm re-run on each recorded seed of ``env``, against the record; SystemExit when today's settings
    resolve another threshold or budget than the record's (the figures would measure another task)."""
    p = rec.results.presets[env]
    target = bench_any_env.resolve_target(env, rec.packages, bench_any_env.parse_thresholds(rec.thresholds))
    if (target.threshold, target.budget) != (p.threshold, p.budget):
        raise SystemExit(f"{env}: today it resolves threshold {target.threshold:g} and budget {target.budget:,}, "
                         f"{rec.name}.json recorded {p.threshold} and {p.budget}: re-measure its side by side")
    out = []
    for row in p.arms["ours"]:
        now = run(target, row.seed, rec.packages)
        out.append(SeedCheck(row.seed, row, now))
        print(f"  seed {row.seed}: recorded {_said(row)}, now {_said(now)}"
              + ("" if out[-1].same else "  <- moved"), flush=True)
    return out


def _said(r: bench_any_env.Outcome | bench_results.Row) -> str:
    return f"{'solved at' if r.solved else 'unsolved after'} {r.env_steps:,} env steps"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("envs", nargs="*", metavar="ENV_ID[:ALGO]", help="default: every env of the any-env block")
    parser.add_argument("--write", metavar="NAME", help=f"record today's rows in bench/results/NAME.json ({DRIFT} "
                        "is the one docs/benchmarks.md renders)")
    args = parser.parse_args(argv)
    if args.write:
        try:
            bench_results.results_path(args.write)
        except ValueError as exc:
            raise SystemExit(f"--write: {exc}") from None
    results = bench_results.all_results()
    envs = args.envs or sorted(side_by_sides(results))
    records = {env: recorded(env, results) for env in envs}  # every unknown env before any run
    measured = bench_results.start_measuring()
    here = bench_results.machine().cpu
    moved: list[str] = []
    rows: dict[str, bench_results.PresetRows] = {}
    for env, rec in records.items():
        m = rec.results.measured
        other = "" if m.machine.cpu == here else f"; recorded on {m.machine.cpu}, this is {here}"
        print(f"\n{env}: against {rec.name}.json (commit {m.commit}, {m.date}{other}); load {os.getloadavg()[0]:.2f}",
              flush=True)
        checks = check_env(env, rec)
        moved += [f"{env} seed {c.seed}: recorded {_said(c.then)} in {rec.name}.json, now {_said(c.now)}{other}"
                  for c in checks if not c.same]
        p = rec.results.presets[env]
        rows[env] = bench_results.PresetRows(arms={"ours": bench_any_env.to_rows([c.now for c in checks])},
                                             budget=p.budget, threshold=p.threshold, threshold_note=p.threshold_note,
                                             settings=p.settings)
        if args.write:  # after each env, so an interrupted check keeps the envs it finished
            bench_results.write_results(Results(
                name=args.write, description="our arm of each env's newest any-env side by side, re-run on its seeds "
                "(bench/any_env_drift.py)", measured=bench_results.finish(measured), presets=rows))
    total = sum(len(r.results.presets[e].arms["ours"]) for e, r in records.items())
    if moved:
        print(f"\n{len(moved)} of {total} seeds moved:\n  " + "\n  ".join(moved))
        return 1
    print(f"\nall {total} seeds of {len(records)} envs solve as recorded")
    return 0


if __name__ == "__main__":
    sys.exit(main())
