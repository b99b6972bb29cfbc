"""The drift gate: re-train a fixed subset of presets on fixed seeds and compare env steps to solve with the record.

Env steps to solve are exact per seed on one machine with one set of library versions, so any
difference is a change in what training does: a preset's value, the training code, a library. Run it
before every change that touches training code (``make bench-check``, a few minutes on 2 cores); a
deliberate change re-records with ``make bench-record``. The record is bench/results/gate.json (the
commit, machine, library versions and load are in it); docs/presets.md renders its table from it.

Env steps are exact on one machine, not across CPUs: the same commit solves some of the gate's figures at
other env steps on an AMD EPYC than on an Intel Xeon (their vector kernels round differently). So the gate
keeps a record per machine: gate.json, and beside it gate-<cpu>.json for each further machine (``make bench-record-machine`` adds this machine's, on code whose gate passed on the first). A
check compares with the record of its own machine and library versions; with none, it compares with
gate.json and says the figures cannot be judged here until this machine has a record. ``--record`` (a
deliberate change) writes gate.json on this machine and removes the other machines' records, measured
on the code before the change.

    .venv/bin/python bench/bench_check.py             # check: exit 1 naming each figure that moved
    .venv/bin/python bench/bench_check.py --record    # re-record every figure (a deliberate change)
    .venv/bin/python bench/bench_check.py --presets CartPole-v1:ppo   # check a part
    .venv/bin/python bench/bench_check.py --add-machine   # record this machine beside the others

Each preset trains in its own process (its seeds one after another, as ``gsolve train --seed S`` would
give them), ``--jobs`` presets at a time. A failure says whether the preset's resolved config changed
since the record, and whether the machine or the library versions differ from the record's (then
the figures need not match: determinism across machines is not promised).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_results  # noqa: E402 - a sibling script, not a package
from bench_results import Measured, PresetRows, Results, Row  # noqa: E402

NAME = "gate"
MACHINE_PREFIX = f"{NAME}-"  # gate-<cpu>.json: the record of a further machine
# Every preset cheap enough to train on a few seeds in the gate's few minutes, and its seeds. Each figure
# is env steps to solve on one seed; the gate's wall time is in docs/benchmarks.md ("The drift gate").
GATE: dict[str, tuple[int, ...]] = {
    "CartPole-v1:ppo": (0, 1, 2),
    "CartPole-v1:a2c": (0, 1, 2),
    "CartPole-v1:dqn": (0, 1),
    "CartPole-v1:reinforce": (0, 1, 2),
    "Acrobot-v1:ppo": (0, 1),
    "Pendulum-v1:ppo": (0, 1),
}
DESCRIPTION = ("The drift gate's figures: env steps to solve of each preset it covers, on fixed seeds "
               "(bench/bench_check.py; make bench-check / make bench-record)")


class Drift(NamedTuple):
    """One figure that moved: which, the record and now."""

    figure: str
    recorded: str
    now: str


def figure_name(config_id: str, seed: int) -> str:
    return f"{config_id} seed {seed}"


def _describe(row: Row | None) -> str:
    if row is None:
        return "not measured"
    return f"solved at {row.env_steps:,} env steps" if row.solved else f"not solved in {row.env_steps:,} env steps"


def compare(recorded: Results, now: dict[str, list[Row]]) -> list[Drift]:
    """Every figure of ``now`` that differs from the record (or that the record does not hold)."""
    drifts = []
    for config_id, rows in now.items():
        was = {r.seed: r for r in recorded.presets[config_id].arms["ours"]} if config_id in recorded.presets else {}
        for row in rows:
            old = was.get(row.seed)
            if old is None or (old.solved, old.env_steps) != (row.solved, row.env_steps):
                drifts.append(Drift(figure_name(config_id, row.seed), _describe(old), _describe(row)))
    return drifts


def environment_notes(recorded: Measured, machine: bench_results.Machine, versions: dict[str, str | None]) -> list[str]:
    """What differs between the record's machine and libraries and this one's (empty: the same)."""
    notes = []
    if recorded.machine != machine:
        notes.append(f"the record was measured on another machine ({recorded.machine.label}, "
                     f"{recorded.machine.cores} cores, {recorded.machine.platform}, Python {recorded.machine.python}; "
                     f"this one: {machine.label}, {machine.cores} cores, {machine.platform}, Python {machine.python})")
        if recorded.machine.kernels is None:
            notes.append("the record does not say which kernels its CPU ran (it was measured before the gate kept "
                         "them), so the same CPU model with other kernels (AVX2 against AVX512) looks the same to it")
    changed = {lib: (recorded.versions.get(lib), v) for lib, v in versions.items() if recorded.versions.get(lib) != v}
    if changed:
        notes.append("library versions differ from the record's: " +
                     ", ".join(f"{lib} {old} -> {new}" for lib, (old, new) in changed.items()))
    if notes:
        notes.append("env steps to solve are exact on one machine with one set of libraries, not promised "
                     "across them")
    return notes


def machine_record_name(machine: bench_results.Machine) -> str:
    """The results name of a further machine's record: gate-<its cpu and kernels, lower-case, words joined by '-'>."""
    words = "".join(c if c.isalnum() else " " for c in machine.label.lower()).split()
    return MACHINE_PREFIX + ("-".join(words) or "unknown")


def records(directory: Path) -> list[Results]:
    """The gate's records: gate.json first (the one the docs render), then each further machine's."""
    primary = bench_results.results_path(NAME, directory)
    found = [bench_results.read_results(NAME, directory)] if primary.exists() else []
    return found + [bench_results.read_results(p.stem, directory)
                    for p in sorted(directory.glob(f"{MACHINE_PREFIX}*.json"))]


def own_record(found: list[Results], machine: bench_results.Machine, versions: dict[str, str | None]) -> Results | None:
    """The record measured on this machine with these library versions, if the gate holds one."""
    return next((r for r in found if r.measured.machine == machine and r.measured.versions == versions), None)


def no_record_note(found: list[Results]) -> str:
    held = "; ".join(f"{r.measured.machine.label} at commit {r.measured.commit}" for r in found)
    return (f"the gate holds no record of this machine and its libraries (it holds: {held}), so a figure that differs "
            "here need not be a regression: where the gate passes on a recorded machine at this commit, record this "
            "one beside it with `make bench-record-machine`")


def report(recorded: Results, drifts: list[Drift], config_shas: dict[str, str], notes: list[str]) -> str:
    """The failure message: each figure that moved, whether its preset changed, and the environment notes."""
    lines = [f"bench-check: {len(drifts)} figure(s) differ from bench/results/{recorded.name}.json "
             f"(recorded at commit {recorded.measured.commit}, {recorded.measured.date}):"]
    for d in drifts:
        config_id = d.figure.rsplit(" seed ", 1)[0]
        old_sha = recorded.presets[config_id].config_sha if config_id in recorded.presets else None
        why = ("its preset's resolved config changed since the record" if old_sha and old_sha != config_shas.get(config_id)
               else "its preset's resolved config is the record's: training code or a library changed")
        lines.append(f"  {d.figure}: recorded {d.recorded}, now {d.now} ({why})")
    lines += [f"  note: {n}" for n in notes]
    lines.append("  a deliberate change: re-record with `make bench-record` and commit bench/results/gate.json "
                 "with the docs it regenerates (make docs-tables)")
    return "\n".join(lines)


def run_worker(config_id: str, seeds: list[int]) -> None:
    """Train ``config_id`` on each seed in this process; one JSON line per seed."""
    from bench_presets_vs_zoo import run_ours

    for seed in seeds:
        r = run_ours(config_id, seed)
        print(json.dumps({"seed": seed, "solved": r["solved"], "env_steps": r["env_steps"],
                          "wall_s": round(r["wall_s"], 3)}), flush=True)


def measure(plan: dict[str, tuple[int, ...]], jobs: int) -> dict[str, list[Row]]:
    """Each preset's rows, one worker process per preset, ``jobs`` at a time (the environment is passed on:
    $GSOLVE_CONFIG_DIR names the presets). Workers write to files, not pipes, so a chatty one never blocks."""
    pending = list(plan.items())
    running: dict[str, tuple[subprocess.Popen[bytes], Any, Any]] = {}
    out: dict[str, list[Row]] = {}
    while pending or running:
        while pending and len(running) < jobs:
            config_id, seeds = pending.pop(0)
            cmd = [sys.executable, __file__, "--worker", config_id, "--seeds", *map(str, seeds)]
            stdout, stderr = tempfile.TemporaryFile(), tempfile.TemporaryFile()
            running[config_id] = (subprocess.Popen(cmd, stdout=stdout, stderr=stderr, env=os.environ.copy()),
                                  stdout, stderr)
        for config_id, (proc, stdout, stderr) in list(running.items()):
            if proc.poll() is None:
                continue
            del running[config_id]
            stdout.seek(0)
            stderr.seek(0)
            lines, errors = stdout.read().decode(errors="replace"), stderr.read().decode(errors="replace")
            stdout.close()
            stderr.close()
            if proc.returncode != 0:
                raise SystemExit(f"bench-check: training {config_id} failed (exit {proc.returncode}):\n{errors[-3000:]}")
            out[config_id] = [Row.model_validate_json(line) for line in lines.splitlines() if line.startswith("{")]
            print(f"  {config_id}: " + ", ".join(f"seed {r.seed} {_describe(r)} ({r.wall_s:.1f} s)"
                                                 for r in out[config_id]), flush=True)
        time.sleep(0.2)
    return {config_id: out[config_id] for config_id in plan}


def record(rows: dict[str, list[Row]], measured: Measured, directory: Path, name: str = NAME) -> Path:
    """Write a record of the gate, ``name``.json (all of it: one commit, machine and load for every figure)."""
    from gymnasium_solver.config import resolve_config

    presets = {}
    for config_id, preset_rows in rows.items():
        presets[config_id] = PresetRows(arms={"ours": preset_rows}, budget=resolve_config(config_id, []).max_env_steps,
                                        config_sha=bench_results.config_sha(config_id))
    return bench_results.write_results(Results(name=name, description=DESCRIPTION, measured=measured, presets=presets),
                                       directory)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--record", action="store_true", help="re-record the figures instead of checking them "
                        "(a deliberate change: gate.json on this machine; other machines' records are removed)")
    parser.add_argument("--add-machine", action="store_true", help="record this machine's figures beside the "
                        "other machines' (code whose gate passes on a recorded machine)")
    parser.add_argument("--presets", nargs="+", metavar="ENV:VARIANT", help="a part of the gate (default: all of it)")
    parser.add_argument("--jobs", type=int, default=2, help="presets training at once (default 2)")
    parser.add_argument("--results-dir", type=Path, default=bench_results.RESULTS_DIR, help=argparse.SUPPRESS)
    parser.add_argument("--worker", metavar="ENV:VARIANT", help=argparse.SUPPRESS)
    parser.add_argument("--seeds", type=int, nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        run_worker(args.worker, args.seeds)
        return 0
    if (args.record or args.add_machine) and args.presets:
        raise SystemExit("bench-check: a record covers the whole gate (one commit, machine and load for all)")
    if args.record and args.add_machine:
        raise SystemExit("bench-check: --record or --add-machine, not both")
    unknown = sorted(set(args.presets or ()) - set(GATE))
    if unknown:
        raise SystemExit(f"not in the gate: {', '.join(unknown)} (the gate covers {', '.join(GATE)})")
    plan = {p: s for p, s in GATE.items() if not args.presets or p in args.presets}
    found = records(args.results_dir)
    if not args.record and not found:
        raise SystemExit(f"bench-check: no record at {bench_results.results_path(NAME, args.results_dir)}; "
                         "record one with `make bench-record`")
    measured = bench_results.start_measuring(["bench/bench_check.py", *(argv if argv is not None else sys.argv[1:])])
    mine = own_record(found, measured.machine, measured.versions)
    if args.add_machine and mine is not None and mine.name == NAME:
        raise SystemExit("bench-check: gate.json is this machine's record already; a deliberate change re-records it "
                         "with `make bench-record`")
    t0 = time.perf_counter()
    print(f"bench-check: {'recording' if args.record or args.add_machine else 'checking'} "
          f"{sum(map(len, plan.values()))} figures ({len(plan)} presets, {args.jobs} at a time)", flush=True)
    rows = measure(plan, args.jobs)
    wall = time.perf_counter() - t0
    if args.record or args.add_machine:
        name = NAME if args.record else machine_record_name(measured.machine)
        path = record(rows, bench_results.finish(measured, wall), args.results_dir, name)
        print(f"recorded {path} in {wall:.0f} s")
        if args.record:
            for other in (r for r in found if r.name != NAME):
                bench_results.results_path(other.name, args.results_dir).unlink()
                print(f"removed {other.name}.json ({other.measured.machine.label}): measured on the code before this "
                      "change; re-record it on that machine with `make bench-record-machine`")
        return 0
    recorded = mine or found[0]
    drifts = compare(recorded, rows)
    which = f"bench/results/{recorded.name}.json"
    notes = [] if mine else [no_record_note(found)]
    if drifts:
        shas = {config_id: bench_results.config_sha(config_id) for config_id in rows}
        print(report(recorded, drifts, shas,
                     environment_notes(recorded.measured, measured.machine, measured.versions) + notes))
        return 1
    print(f"bench-check: all {sum(map(len, rows.values()))} figures match {which} (commit {recorded.measured.commit}, "
          f"{recorded.measured.machine.label}) in {wall:.0f} s")
    for note in notes:
        print(f"  note: {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
