"""Does the diagnosis' printed change solve on other seeds too? Measured per corpus case over N seeds.

For each selected corpus fault case (default: the off-policy ``dqn_*`` cases) the run is diagnosed
as ``gsolve diagnose`` does (copied into a scratch runs folder, no solved siblings, so only the
preset and the shipped references are there to compare with), the top finding's suggested changes
are taken exactly as ``gsolve fix --max-trials 1`` / ``gsolve retry`` apply them (on top of the
parent's own overrides and the keys its preset has changed since, so the case's recorded config),
and one run per seed is trained with them (``gsolve train ... --quiet``,
``--parallel`` at a time). Prints, per case, the printed change, solved/N and the env steps each
seed solved at.

``--extra KEY=VALUE ...`` adds overrides after the printed change (to test an alternative by hand);
``--no-diagnosis`` trains the parent's overrides plus ``--extra`` only; ``--no-preset`` diagnoses each
run as if imported from elsewhere (no preset on this machine: nothing to revert, no shipped
references), then trains that printed change on the real config.

    .venv/bin/python bench/bench_fix_seeds.py [--only dqn_target_rare] [--seeds 0 1 2 3 4] [--parallel 2]
    .venv/bin/python bench/bench_fix_seeds.py tests/fixtures/heldout3 --only "" --own-seed --no-preset --parallel 1
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "fixtures" / "corpus"
FILES = ("run.json", "config.yaml", "metrics.csv")


def printed_change(folder: Path, run_id: str, no_preset: bool = False) -> tuple[str, dict[str, Any]]:
    """The top candidate of the run's diagnosis (what `gsolve fix --max-trials 1` trains). ``no_preset``:
    diagnosed as an imported run whose preset this machine lacks (nothing to revert, no references)."""
    from gymnasium_solver.contract import run_folder as rf
    from gymnasium_solver.diagnostics import diagnose_run_dir
    from gymnasium_solver.experiments.candidates import build_candidates
    from gymnasium_solver.experiments.parent import parent_config
    from gymnasium_solver.run_store.store import RunStore

    with tempfile.TemporaryDirectory(prefix="fixseeds-") as tmp:
        dst = Path(tmp) / run_id
        dst.mkdir()
        for f in FILES:
            shutil.copy2(folder / f, dst / f)
        if no_preset:
            info = json.loads((dst / "run.json").read_text())
            info.update(config_id=f"{info['env_id']}:imported", variant="imported")
            (dst / "run.json").write_text(json.dumps(info))
            cfg = (dst / "config.yaml").read_text().replace(f"variant: {folder_variant(folder)}", "variant: imported")
            (dst / "config.yaml").write_text(cfg)
        store = RunStore(Path(tmp))
        d = diagnose_run_dir(store, store.resolve(run_id))
        top = build_candidates(d, parent_config(folder, rf.read_run_info(folder)).overrides, max_trials=1)[0]
    return top.name, top.changes


def folder_variant(folder: Path) -> str:
    return str(json.loads((folder / "run.json").read_text())["variant"])


def train(config_id: str, overrides: dict[str, Any], runs: Path) -> dict[str, Any]:
    from gymnasium_solver.launcher import override_pairs

    cmd = [sys.executable, "-m", "gymnasium_solver.cli.app", "train", config_id, "--runs-dir", str(runs), "--quiet",
           "--set", *override_pairs(overrides)]
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, check=False)  # noqa: S603 - fixed argv
    run_dir = Path(p.stdout.strip().splitlines()[-1]) if p.stdout.strip() else None
    if run_dir is None or not (run_dir / "run.json").is_file():
        return {"solved": False, "error": (p.stderr or "?").strip().splitlines()[-1][:200], "seconds": 0.0}
    info = json.loads((run_dir / "run.json").read_text())
    at = (info.get("solved_at") or {}).get("env_steps")
    best = (info.get("best_eval") or {}).get("return_mean")
    return {"solved": bool(info.get("solved")), "solved_at": at, "best_eval": best,
            "env_steps": (info.get("progress") or {}).get("env_steps"), "seconds": round(time.perf_counter() - t0, 1)}


def main() -> int:
    from gymnasium_solver.contract.run_folder import read_run_info
    from gymnasium_solver.experiments.parent import parent_config

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpus", nargs="?", default=str(CORPUS))
    ap.add_argument("--only", nargs="*", default=["dqn_"], help="case name prefixes (default: dqn_)")
    ap.add_argument("--seeds", nargs="*", type=int, default=[0, 1, 2, 3, 4])
    ap.add_argument("--own-seed", action="store_true", help="train each case on its own run's seed (not --seeds)")
    ap.add_argument("--parallel", type=int, default=2)
    ap.add_argument("--extra", nargs="*", default=[], help="KEY=VALUE overrides applied after the printed change")
    ap.add_argument("--no-diagnosis", action="store_true", help="train the parent's overrides + --extra only")
    ap.add_argument("--no-preset", action="store_true",
                    help="diagnose each run as an imported one (no preset to revert to, no shipped references)")
    ap.add_argument("--json", default=None, help="write the per-case results here")
    args = ap.parse_args()
    import yaml

    extra = {k: yaml.safe_load(v) for k, v in (e.split("=", 1) for e in args.extra)}
    results = []
    with tempfile.TemporaryDirectory(prefix="fixseeds-runs-") as tmp:
        for folder in sorted(p for p in Path(args.corpus).iterdir() if (p / "labels.json").is_file()):
            labels = json.loads((folder / "labels.json").read_text())
            info = json.loads((folder / "run.json").read_text())
            if labels.get("healthy") or info.get("solved") or not any(labels["case"].startswith(o) for o in args.only):
                continue
            name, changes = ("none", {}) if args.no_diagnosis else printed_change(folder, info["run_id"], args.no_preset)
            # The case's config as recorded, even where its preset was retuned since (experiments/parent.py).
            base = {**parent_config(folder, read_run_info(folder)).base_for(info["config_id"], changes),
                    **changes, **extra}
            seeds = [int(info["seed"])] if args.own_seed else args.seeds
            jobs = [{**base, "seed": s} for s in seeds]
            with ThreadPoolExecutor(args.parallel) as pool:
                outs = list(pool.map(train, [info["config_id"]] * len(jobs), jobs, [Path(tmp)] * len(jobs)))
            solved = sum(o["solved"] for o in outs)
            row = {"case": labels["case"], "finding": name, "changes": changes, "extra": extra,
                   "solved": solved, "seeds": len(seeds), "per_seed": outs}
            results.append(row)
            at = ", ".join(f"s{s}:{o.get('solved_at') or 'no (' + str(o.get('best_eval')) + ')'}"
                           for s, o in zip(seeds, outs, strict=True))
            print(f"{labels['case']:30s} {name:34s} {json.dumps({**changes, **extra})}  "
                  f"solved {solved}/{len(seeds)}  [{at}]", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
