"""Does the diagnosis' fix work when it is run? Measured on every failed fault run of a corpus.

For each fault case (labels.json ``healthy: false``; a run that solved anyway or crashed is
skipped: there is nothing to fix by config) the run is copied into a scratch runs folder, then:

1. **as printed**: `gsolve fix RUN --max-trials 1`: one trial with exactly the top finding's
   suggested changes (what `gsolve retry` applies), same seed and overrides as the parent;
2. **gsolve fix**: `gsolve fix RUN --max-trials 8` (skipped when 1 already solved: its first
   candidate is the same change).

Prints one row per case and the two rates. Costs real training time (minutes on 2 cores).

    .venv/bin/python bench/bench_fix_corpus.py [CORPUS_DIR] [--only PREFIX ...] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
FILES = ("run.json", "config.yaml", "metrics.csv")


def gsolve(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gymnasium_solver.cli.app", *args],  # noqa: S603 - fixed argv
                          capture_output=True, text=True, check=False)


def fix(run_id: str, runs: Path, trials: int) -> tuple[bool, str, dict[str, Any]]:
    p = gsolve("fix", run_id, "--runs-dir", str(runs), "--max-trials", str(trials), "--json", "--timeout", "900")
    try:
        rec = json.loads(p.stdout)
    except ValueError:
        return False, (p.stderr or p.stdout).strip().splitlines()[-1][:120] if (p.stderr or p.stdout) else "?", {}
    w = rec.get("winner")
    return bool(w), (" ".join(w["set_args"]) if w else "none solved"), rec


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpus", nargs="?", default=str(ROOT / "tests" / "fixtures" / "corpus"))
    ap.add_argument("--only", nargs="*", default=None, help="case name prefixes")
    ap.add_argument("--json", default=None, help="write the per-case results here")
    args = ap.parse_args()
    rows = []
    for folder in sorted(p for p in Path(args.corpus).iterdir() if (p / "labels.json").is_file()):
        labels = json.loads((folder / "labels.json").read_text())
        info = json.loads((folder / "run.json").read_text())
        if labels.get("healthy") or info.get("solved") or labels.get("expected_key") is None:
            continue
        if args.only and not any(labels["case"].startswith(o) for o in args.only):
            continue
        with tempfile.TemporaryDirectory(prefix="fixcorpus-") as tmp:
            runs = Path(tmp)
            dst = runs / info["run_id"]
            dst.mkdir()
            for f in FILES:
                shutil.copy2(folder / f, dst / f)
            t0 = time.perf_counter()
            top_ok, top_change, _ = fix(info["run_id"], runs, 1)
            any_ok, winner = top_ok, top_change
            n_trials = 1
            if not top_ok:
                any_ok, winner, rec = fix(info["run_id"], runs, 8)
                n_trials += len(rec.get("trials", []))
            secs = time.perf_counter() - t0
        row = {"case": labels["case"], "fault_type": labels.get("fault_type"), "top_change_solves": top_ok,
               "top_change": top_change, "fix_solves": any_ok, "winner": winner, "trials": n_trials,
               "seconds": round(secs, 1)}
        rows.append(row)
        print(f"{row['case']:32s} as printed: {'SOLVED' if top_ok else 'no    '} ({top_change[:50]:50s}) "
              f"fix: {'SOLVED' if any_ok else 'no    '} {winner[:50]:50s} {secs:6.1f}s", flush=True)
    n = max(len(rows), 1)
    top = sum(r["top_change_solves"] for r in rows)
    anyf = sum(r["fix_solves"] for r in rows)
    print(f"\nfault runs: {len(rows)}; top finding's changes as printed solve: {top}/{len(rows)} ({top / n:.0%}); "
          f"gsolve fix (<= 8 trials) finds a solving change: {anyf}/{len(rows)} ({anyf / n:.0%})")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
