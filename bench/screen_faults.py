"""Is a planted fault really a fault? Re-train each fault case's config unchanged on fresh seeds.

A fault label taken on one seed is itself a one-seed verdict: some planted "faults" are configs that
solve on most seeds, and their recorded run was an unlucky seed. For every fault case of a fixture
set (a folder with ``labels.json`` that is not healthy and did not solve) this trains the case's
recorded config (its overrides plus the keys its preset has changed since, experiments/parent.py)
on ``--seeds`` fresh seeds (default: the case's seed + 1000 and + 1001, away from the seeds other
cases of the same fault use), with the ``--env-package``/``--env-class`` flags its recorded config names
(a MiniGrid case's minigrid: these fixture sets are ours, so the screen grants what they need, as the
person who trained them did), and writes ``seed_screen.json`` into the set's folder:

    {"seeds_added": [...], "cases": {"<case>": {"seeds": [own, a, b], "solved": [false, x, y],
     "solved_at": [...], "fault": true|false}}, "commit": ..., "machine": ...}

A case counts as a fault only if its config fails on at least 2 of its 3 seeds (issue 21). The
scoring tests (tests/test_diagnostics_heldout.py, tests/test_diagnostics_corpus.py) read the file and
score the diagnosis on the confirmed faults only. Results are written after every case, so an
interrupted screen continues where it stopped (cases already screened are skipped).

    .venv/bin/python bench/screen_faults.py tests/fixtures/heldout9 [--parallel 2] [--only case_prefix]
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SCREEN_FILE = "seed_screen.json"
SEED_OFFSETS = (1000, 1001)


def train(config_id: str, overrides: dict[str, Any], runs: Path, flags: list[str] | None = None) -> dict[str, Any]:
    """One `gsolve train` of ``config_id`` with ``overrides`` (and ``flags``: --env-package ...); what its
    run.json says."""
    from gymnasium_solver.launcher import override_pairs

    cmd = [sys.executable, "-m", "gymnasium_solver.cli.app", "train", config_id, "--runs-dir", str(runs), "--quiet",
           *(flags or []), *(a for p in override_pairs(overrides) for a in ("--set", p))]
    p = subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=ROOT)  # noqa: S603 - fixed argv; this checkout's code
    run_dir = Path(p.stdout.strip().splitlines()[-1]) if p.stdout.strip() else None
    if run_dir is None or not (run_dir / "run.json").is_file():
        return {"solved": False, "error": (p.stderr or "?").strip().splitlines()[-1][:200]}
    info = json.loads((run_dir / "run.json").read_text())
    return {"solved": bool(info.get("solved")), "solved_at": (info.get("solved_at") or {}).get("env_steps"),
            "env_steps": (info.get("progress") or {}).get("env_steps")}


def fault_cases(folder: Path, only: list[str]) -> list[tuple[str, Path, dict[str, Any]]]:
    out = []
    for case in sorted(p for p in folder.iterdir() if (p / "labels.json").is_file()):
        labels = json.loads((case / "labels.json").read_text())
        info = json.loads((case / "run.json").read_text())
        if labels.get("healthy") or info.get("solved"):
            continue
        if only and not any(labels["case"].startswith(o) for o in only):
            continue
        out.append((labels["case"], case, info))
    return out


def env_modules_of(case: Path) -> list[str]:
    """The --env-package/--env-class flags the case's recorded config.yaml names, each granted in this process
    too (the case's config is resolved here; a user's class registered under the run's env id, as `gsolve train
    ID --env-class M:C` does): the fixture sets are ours, so we grant what they need."""
    import yaml

    from gymnasium_solver.config.env_modules import bind_class, grant_from_flags, recorded_flags

    config = yaml.safe_load((case / "config.yaml").read_text(encoding="utf-8"))
    config = config if isinstance(config, dict) else {}
    grant_from_flags(config.get("env_package") or [], [config["env_class"]] if config.get("env_class") else [])
    if config.get("env_class"):
        bind_class(str(config["env_id"]), str(config["env_class"]))
    return recorded_flags(config)


def screen_case(case: Path, info: dict[str, Any], offsets: tuple[int, ...], runs: Path) -> dict[str, Any]:
    from gymnasium_solver.contract.run_folder import read_run_info
    from gymnasium_solver.experiments.parent import parent_config

    own = int(info["seed"])
    flags = env_modules_of(case)
    base = parent_config(case, read_run_info(case)).base_for(info["config_id"], {})
    outs = [train(info["config_id"], {**base, "seed": own + o}, runs, flags) for o in offsets]
    solved = [False, *(o["solved"] for o in outs)]
    return {"seeds": [own, *(own + o for o in offsets)], "solved": solved,
            "solved_at": [None, *(o.get("solved_at") for o in outs)],
            "errors": [o["error"] for o in outs if "error" in o],
            "fault": sum(solved) <= len(solved) - 2}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sets", nargs="+", help="fixture set folders, e.g. tests/fixtures/heldout9")
    ap.add_argument("--parallel", type=int, default=2, help="cases screened at once")
    ap.add_argument("--only", nargs="*", default=[], help="case name prefixes")
    args = ap.parse_args()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,  # noqa: S607
                            cwd=ROOT, check=False).stdout.strip()
    for set_dir in map(Path, args.sets):
        path = set_dir / SCREEN_FILE
        record: dict[str, Any] = json.loads(path.read_text()) if path.is_file() else {
            "seed_offsets": list(SEED_OFFSETS), "cases": {}}
        record.update(commit=commit, machine=f"{platform.machine()} {platform.processor() or ''}".strip(),
                      python=platform.python_version())
        todo = [c for c in fault_cases(set_dir, args.only) if c[0] not in record["cases"]]
        with tempfile.TemporaryDirectory(prefix="screen-") as tmp, ThreadPoolExecutor(args.parallel) as pool:
            futures = {name: pool.submit(screen_case, case, info, SEED_OFFSETS, Path(tmp)) for name, case, info in todo}
            for name, fut in futures.items():
                row = fut.result()
                if row["errors"]:  # a trainer that could not start says nothing about the config
                    print(f"{set_dir.name}/{name}: ERROR {row['errors'][0]} (not recorded; run again)", flush=True)
                    continue
                record["cases"][name] = row
                path.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
                print(f"{set_dir.name}/{name:34s} solved {sum(row['solved'])}/3 {row['solved_at']} "
                      f"-> {'fault' if row['fault'] else 'NOT a fault (unlucky seed)'}", flush=True)
        faults = sum(r["fault"] for r in record["cases"].values())
        print(f"{set_dir.name}: {faults} of {len(record['cases'])} planted faults fail on >= 2 of 3 seeds", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
