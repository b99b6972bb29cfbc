"""Do `gsolve fix` verdicts hold on seeds nobody chose them on? Measured on confirmed planted faults.

For each fault case of the given fixture sets that ``bench/screen_faults.py`` confirmed (its config
fails on at least 2 of 3 seeds), this copies the case into a scratch runs folder (no solved runs
beside it, as on a fresh machine), runs ``gsolve fix CASE --json`` (default ``--seeds 3``: the case's
seed and the next two), and then trains the winner's change on 3 *other* fresh seeds (the case's
seed + 2000, 2001, 2002: neither the fix nor the screen saw them). Cases the screen called unlucky
(their config solves 2 of 3 seeds) are run too and must come back ``unlucky_seed``. ``--no-preset``
runs each case as a user's own config (variant renamed, nothing of ours to revert to).

Writes ``bench/verdicts/fix_verdicts.json`` (per case: verdict, winner, its held-out outcomes, seconds;
with the commit, machine and load) and prints the table that docs/diagnostics.md shows, so the
figure is written by the command that measured it:

    .venv/bin/python bench/bench_fix_verdicts.py tests/fixtures/heldout8 tests/fixtures/heldout9 [--parallel 2]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "verdicts" / "fix_verdicts.json"  # bench/results/ holds only the rendered figures' format
FILES = ("run.json", "config.yaml", "metrics.csv")
HELD_OUT_OFFSETS = (2000, 2001, 2002)


def gsolve(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gymnasium_solver.cli", *args], capture_output=True, text=True,  # noqa: S603
                          check=False)


def copy_case(case: Path, runs: Path) -> str:
    info = json.loads((case / "run.json").read_text())
    dst = runs / info["run_id"]
    dst.mkdir(parents=True)
    for f in FILES:
        shutil.copy2(case / f, dst / f)
    return str(info["run_id"])


def held_out(config_id: str, command_overrides: dict[str, Any], seed: int, runs: Path) -> list[dict[str, Any]]:
    """Train the winner's full config (its reproduce command's overrides) on the held-out seeds."""
    from gymnasium_solver.launcher import override_pairs

    out = []
    for off in HELD_OUT_OFFSETS:
        p = gsolve("train", config_id, "--runs-dir", str(runs), "--quiet",
                   *(a for pair in override_pairs({**command_overrides, "seed": seed + off}) for a in ("--set", pair)))
        run_dir = Path(p.stdout.strip().splitlines()[-1]) if p.stdout.strip() else None
        info = json.loads((run_dir / "run.json").read_text()) if run_dir and (run_dir / "run.json").is_file() else {}
        out.append({"seed": seed + off, "solved": bool(info.get("solved")),
                    "solved_at": (info.get("solved_at") or {}).get("env_steps")})
    return out


def winner_overrides(record: dict[str, Any]) -> dict[str, Any]:
    """The overrides the winner's reproduce command trains (the parent's config plus the change)."""
    from gymnasium_solver.experiments.record import ExperimentRecord
    from gymnasium_solver.experiments.runner import trial_overrides

    rec = ExperimentRecord.model_validate(record)
    assert rec.winner is not None
    trial = next(t for t in rec.trials if t.run_id == rec.winner.run_id)
    overrides = trial_overrides(rec, trial)
    overrides.pop("seed", None)
    return overrides


def run_case(set_name: str, case: Path, screen: dict[str, Any], parallel: int, seeds: int) -> dict[str, Any]:
    labels = json.loads((case / "labels.json").read_text())
    info = json.loads((case / "run.json").read_text())
    with tempfile.TemporaryDirectory(prefix="fixverdict-") as tmp:
        runs = Path(tmp)
        run_id = copy_case(case, runs)
        t0 = time.monotonic()
        p = gsolve("fix", run_id, "--runs-dir", str(runs), "--json", "--seeds", str(seeds), "--parallel", str(parallel),
                   "--timeout", "1800")
        seconds = round(time.monotonic() - t0, 1)
        try:
            record = json.loads(p.stdout)
        except json.JSONDecodeError:
            return {"set": set_name, "case": labels["case"], "error": (p.stderr or p.stdout).strip()[-300:],
                    "seconds": seconds, "fault": screen["fault"]}
        row: dict[str, Any] = {"set": set_name, "case": labels["case"], "fault": screen["fault"],
                               "expected_key": labels.get("expected_key"), "verdict": record["verdict"],
                               "seconds": seconds, "trials": len(record["trials"]), "winner": None, "held_out": []}
        w = record.get("winner")
        if w is not None:
            row["winner"] = {"set_args": w["set_args"], "seeds_solved": w["seeds_solved"], "seeds": w["seeds"],
                             "keeps_blamed": w["keeps_blamed"], "dropped": w["dropped"]}
            row["held_out"] = held_out(info["config_id"], winner_overrides(record), int(info["seed"]), runs)
        return row


def summary(rows: list[dict[str, Any]]) -> list[str]:
    faults = [r for r in rows if r["fault"]]
    lucky = [r for r in rows if not r["fault"]]
    fixed = [r for r in faults if r.get("verdict") == "fixed"]
    holds = [r for r in fixed if r["held_out"] and all(h["solved"] for h in r["held_out"])]
    keeps = [r for r in fixed if r["winner"] and r["winner"]["keeps_blamed"]]
    unlucky_ok = [r for r in lucky if r.get("verdict") == "unlucky_seed"]
    n = max(len(faults), 1)
    return [
        f"confirmed faults: {len(faults)}; verdict fixed: {len(fixed)}; winner solves 3 of 3 held-out seeds: "
        f"{len(holds)}/{len(faults)} ({len(holds) / n:.0%}); winners keeping the blamed setting: {len(keeps)}",
        f"planted cases whose config solves 2+ of 3 seeds: {len(lucky)}; called unlucky_seed: {len(unlucky_ok)}",
        f"median seconds per gsolve fix: {sorted(r['seconds'] for r in rows)[len(rows) // 2] if rows else '-'}",
    ]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sets", nargs="+")
    ap.add_argument("--parallel", type=int, default=2)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--only", nargs="*", default=[])
    args = ap.parse_args()
    rows: list[dict[str, Any]] = []
    for set_dir in map(Path, args.sets):
        screen = json.loads((set_dir / "seed_screen.json").read_text())["cases"]
        for case in sorted(p for p in set_dir.iterdir() if (p / "labels.json").is_file()):
            name = json.loads((case / "labels.json").read_text())["case"]
            if name not in screen or (args.only and not any(name.startswith(o) for o in args.only)):
                continue
            row = run_case(set_dir.name, case, screen[name], args.parallel, args.seeds)
            rows.append(row)
            write(rows, args.seeds)  # after every case: an interrupted bench keeps what it measured
            held = " ".join(("ok" if h["solved"] else "NO") for h in row.get("held_out", []))
            w = row.get("winner") or {}
            print(f"{set_dir.name}/{name:30s} fault={row['fault']!s:5s} verdict={row.get('verdict', 'ERROR'):12s} "
                  f"{' '.join(w.get('set_args', [])):60s} held-out [{held}] {row['seconds']}s", flush=True)
    write(rows, args.seeds)
    print("\n".join(summary(rows)))
    return 0


def write(rows: list[dict[str, Any]], seeds: int) -> None:
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,  # noqa: S607
                            cwd=ROOT, check=False).stdout.strip()
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps({"commit": commit, "machine": f"{platform.machine()}, {os.cpu_count()} cores",
                               "load_at_end": os.getloadavg()[0], "seeds": seeds,
                               "held_out_offsets": list(HELD_OUT_OFFSETS), "summary": summary(rows),
                               "rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    sys.exit(main())
