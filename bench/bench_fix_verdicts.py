"""Do `gsolve fix` verdicts hold on seeds nobody chose them on? Measured on confirmed planted faults.

For each fault case of the given fixture sets that ``bench/screen_faults.py`` confirmed (its config
fails on at least 2 of 3 seeds), this copies the case into a scratch runs folder (no solved runs
beside it, as on a fresh machine), runs ``gsolve fix CASE --json`` (default ``--seeds 3``: the case's
seed and the next two), and then trains the winner's change on 3 *other* fresh seeds (the case's
seed + 2000, 2001, 2002: neither the fix nor the screen saw them). A case whose recorded config names an
environment package (a MiniGrid case's minigrid) is fixed and trained with the same ``--env-package``. Cases the screen called unlucky
(their config solves 2 of 3 seeds) are run too and should come back ``unlucky_seed``.

``--user-preset`` runs each case as a user's own preset: the case's whole config becomes variant
``mine`` of the env in a $GSOLVE_CONFIG_DIR of its own (which replaces our presets), and the run is
``ENV:mine`` with no overrides, so there is nothing of ours to revert to; the diagnosis can only
compare with our shipped preset and the RL Zoo's entry, and size settings from the run's metrics.

Writes ``bench/verdicts/fix_verdicts.json`` (``fix_verdicts_user_presets.json`` with ``--user-preset``,
the file ``--out`` names otherwise (``NAME.partial.json`` while it runs, git-ignored, so a half-run file is never rendered), e.g. a set of environments without a preset that should not mix with
the others' rows; per case: verdict, winner, its held-out outcomes, seconds; with the commit, date,
machine and load);
``make docs-tables`` (bench/render_tables.py) renders docs/diagnostics.md's ``fix-verdicts`` block
from them, so the figure is written by the command that measured it:

    .venv/bin/python bench/bench_fix_verdicts.py tests/fixtures/heldout8 tests/fixtures/heldout9 [--parallel 2]
    .venv/bin/python bench/bench_fix_verdicts.py tests/fixtures/heldout10 --out bench/verdicts/fix_verdicts_no_preset.json
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

from screen_faults import env_modules_of  # a sibling script, not a package

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "verdicts" / "fix_verdicts.json"  # bench/results/ holds only the rendered figures' format
OUT_USER = ROOT / "bench" / "verdicts" / "fix_verdicts_user_presets.json"
USER_VARIANT = "mine"
RUN_SPECIFIC = ("env_id", "variant", "seed")  # config.yaml keys that are not the preset's settings
FILES = ("run.json", "config.yaml", "metrics.csv")
HELD_OUT_OFFSETS = (2000, 2001, 2002)


def gsolve(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``gsolve ARGS`` with this checkout's code: ``-m`` puts the working directory first on sys.path, so a bench of a
    clone started from another checkout would run that checkout's gsolve (its fix loop) instead."""
    return subprocess.run([sys.executable, "-m", "gymnasium_solver.cli.app", *args], capture_output=True, text=True,  # noqa: S603
                          check=False, env={**os.environ, **(env or {})}, cwd=ROOT)


def copy_case(case: Path, runs: Path) -> str:
    info = json.loads((case / "run.json").read_text())
    dst = runs / info["run_id"]
    dst.mkdir(parents=True)
    for f in FILES:
        shutil.copy2(case / f, dst / f)
    return str(info["run_id"])


def as_user_preset(case: Path, runs: Path, config_dir: Path) -> str:
    """Copy ``case`` as a run of the user's own preset ENV:mine, which holds the case's whole config."""
    import yaml

    from gymnasium_solver.config import resolve_config
    from gymnasium_solver.contract.run_folder import read_run_info
    from gymnasium_solver.experiments.parent import parent_config
    from gymnasium_solver.launcher import override_pairs

    run_id = copy_case(case, runs)
    run_dir = runs / run_id
    config = yaml.safe_load((run_dir / "config.yaml").read_text())
    # The case's config as today's code reads it (as the preset mode trains it: a key an old version
    # recorded and ours no longer has is not carried into the user's preset).
    info = read_run_info(run_dir)
    today = resolve_config(info.config_id, override_pairs(parent_config(run_dir, info).overrides))
    settings = {k: v for k, v in today.model_dump(mode="json").items()
                if k not in RUN_SPECIFIC and not (k in ("env_package", "env_class") and not v)}
    config_dir.mkdir(parents=True, exist_ok=True)
    (config_dir / f"{config['env_id']}.yaml").write_text(yaml.safe_dump({"variants": {USER_VARIANT: settings}}))
    (run_dir / "config.yaml").write_text(yaml.safe_dump({**config, "variant": USER_VARIANT}, sort_keys=False))
    info = json.loads((run_dir / "run.json").read_text())
    info.update(config_id=f"{config['env_id']}:{USER_VARIANT}", variant=USER_VARIANT, overrides={"seed": info["seed"]})
    (run_dir / "run.json").write_text(json.dumps(info))
    return run_id


def held_out(config_id: str, command_overrides: dict[str, Any], seed: int, runs: Path,
             env: dict[str, str], flags: list[str]) -> list[dict[str, Any]]:
    """Train the winner's full config (its reproduce command's overrides) on the held-out seeds."""
    from gymnasium_solver.launcher import override_pairs

    out = []
    for off in HELD_OUT_OFFSETS:
        p = gsolve("train", config_id, "--runs-dir", str(runs), "--quiet", *flags,
                   *(a for pair in override_pairs({**command_overrides, "seed": seed + off}) for a in ("--set", pair)),
                   env=env)
        run_dir = Path(p.stdout.strip().splitlines()[-1]) if p.stdout.strip() else None
        info = json.loads((run_dir / "run.json").read_text()) if run_dir and (run_dir / "run.json").is_file() else {}
        out.append({"seed": seed + off, "solved": bool(info.get("solved")),
                    "solved_at": (info.get("solved_at") or {}).get("env_steps")})
    return out


def winner_overrides(record: dict[str, Any]) -> dict[str, Any]:
    """The overrides the winner's reproduce command trains (the parent's config plus the change)."""
    from gymnasium_solver.experiments.changes import trial_overrides
    from gymnasium_solver.experiments.record import ExperimentRecord

    rec = ExperimentRecord.model_validate(record)
    assert rec.winner is not None
    trial = next(t for t in rec.trials if t.run_id == rec.winner.run_id)
    overrides = trial_overrides(rec, trial)
    overrides.pop("seed", None)
    return overrides


def run_case(set_name: str, case: Path, screen: dict[str, Any], parallel: int, seeds: int,
             user_preset: bool) -> dict[str, Any]:
    labels = json.loads((case / "labels.json").read_text())
    with tempfile.TemporaryDirectory(prefix="fixverdict-") as tmp:
        runs = Path(tmp) / "runs"
        env = {"GSOLVE_CONFIG_DIR": str(Path(tmp) / "presets")} if user_preset else {}
        flags = env_modules_of(case)  # --env-package minigrid for a MiniGrid case, granted here too
        run_id = as_user_preset(case, runs, Path(tmp) / "presets") if user_preset else copy_case(case, runs)
        info = json.loads((runs / run_id / "run.json").read_text())
        t0 = time.monotonic()
        p = gsolve("fix", run_id, "--runs-dir", str(runs), "--json", "--seeds", str(seeds), "--parallel", str(parallel),
                   "--timeout", "1800", *flags, env=env)
        seconds = round(time.monotonic() - t0, 1)
        try:
            record = json.loads(p.stdout)
        except json.JSONDecodeError:
            return {"set": set_name, "case": labels["case"], "error": (p.stderr or p.stdout).strip()[-300:],
                    "seconds": seconds, "fault": screen["fault"]}
        base = next((a for a in record.get("arms", []) if a["name"] == "your config (unchanged)"), None)
        row: dict[str, Any] = {"set": set_name, "case": labels["case"], "fault": screen["fault"],
                               "expected_key": labels.get("expected_key"), "blamed": record.get("blamed_keys", []),
                               "verdict": record["verdict"], "seconds": seconds, "trials": len(record["trials"]),
                               "unchanged": [[o["seed"], o["solved"]] for o in base["per_seed"]] if base else [],
                               "winner": None, "held_out": []}
        w = record.get("winner")
        if w is not None:
            row["winner"] = {"set_args": w["set_args"], "seeds_solved": w["seeds_solved"], "seeds": w["seeds"],
                             "keeps_blamed": w["keeps_blamed"], "dropped": w["dropped"]}
            if w.get("holdout"):  # the fix's own holdout rung (since 2026-12-06): seeds after the fix's, not these
                row["winner"]["holdout"] = [[o["seed"], o["solved"]] for o in w["holdout"]["per_seed"]]
            os.environ.update(env)  # the winner's overrides are resolved here, against the same presets
            try:
                overrides = winner_overrides(record)
            finally:
                for k in env:
                    os.environ.pop(k, None)
            row["held_out"] = held_out(info["config_id"], overrides, int(info["seed"]), runs, env, flags)
        return row


def holds(row: dict[str, Any]) -> bool:
    """Does the row's winner solve every one of its held-out seeds?"""
    return bool(row.get("held_out")) and all(h["solved"] for h in row["held_out"])


def tally(rows: list[dict[str, Any]]) -> dict[str, int]:
    """The counts every summary of these rows states (this file's lines, and render_tables' per-set rows)."""
    faults = [r for r in rows if r["fault"]]
    lucky = [r for r in rows if not r["fault"]]
    fixed = [r for r in faults if r.get("verdict") == "fixed"]

    return {
        "faults": len(faults), "fixed": len(fixed), "holds": sum(holds(r) for r in fixed),
        # With `unlucky_seed` a winner is still delivered, as "a more robust option": what the user gets either way.
        "any_holds": sum(holds(r) for r in faults),
        "keeps": sum(bool((r.get("winner") or {}).get("keeps_blamed")) for r in fixed),
        "unlucky_wrong": sum(r.get("verdict") == "unlucky_seed" for r in faults),
        "errors": sum("error" in r for r in rows),
        "lucky": len(lucky), "unlucky_ok": sum(r.get("verdict") == "unlucky_seed" for r in lucky),
    }


def summary(rows: list[dict[str, Any]]) -> list[str]:
    t = tally(rows)
    n = max(t["faults"], 1)
    return [
        f"confirmed faults: {t['faults']}; verdict fixed: {t['fixed']}; winner solves 3 of 3 held-out seeds: "
        f"{t['holds']}/{t['faults']} ({t['holds'] / n:.0%}); winners keeping the blamed setting: {t['keeps']}; "
        f"called unlucky_seed: {t['unlucky_wrong']}; refused or errored: {t['errors']}; a change delivered either way "
        f"(a fix, or with unlucky_seed a more robust option) solves 3 of 3 held-out seeds: {t['any_holds']}/{t['faults']} "
        f"({t['any_holds'] / n:.0%})",
        f"planted cases whose config solves 2+ of 3 seeds: {t['lucky']}; called unlucky_seed: {t['unlucky_ok']}",
        f"median seconds per gsolve fix: {sorted(r['seconds'] for r in rows)[len(rows) // 2] if rows else '-'}",
    ]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sets", nargs="+")
    ap.add_argument("--parallel", type=int, default=2)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--only", nargs="*", default=[])
    ap.add_argument("--user-preset", action="store_true", help="run each case as a user's own preset ENV:mine")
    ap.add_argument("--keep", action="store_true", help="keep the recorded rows of cases this run does not re-run")
    ap.add_argument("--out", type=Path, help=f"write the rows here (default: {OUT.relative_to(ROOT)}, "
                    f"{OUT_USER.relative_to(ROOT)} with --user-preset)")
    args = ap.parse_args()
    out = args.out or (OUT_USER if args.user_preset else OUT)
    rows: list[dict[str, Any]] = []
    kept: list[dict[str, Any]] = []
    if args.keep and out.is_file():  # each kept row says which code measured it (older files: the file's commit)
        old = json.loads(out.read_text())
        kept = [{**r, "commit": r.get("commit", old["commit"])} for r in old["rows"]]
    for set_dir in map(Path, args.sets):
        screen = json.loads((set_dir / "seed_screen.json").read_text())["cases"]
        for case in sorted(p for p in set_dir.iterdir() if (p / "labels.json").is_file()):
            name = json.loads((case / "labels.json").read_text())["case"]
            if name not in screen or (args.only and not any(name.startswith(o) for o in args.only)):
                continue
            row = {**run_case(set_dir.name, case, screen[name], args.parallel, args.seeds, args.user_preset),
                   "commit": head_commit()}
            rows.append(row)
            kept = [r for r in kept if (r["set"], r["case"]) != (row["set"], row["case"])]
            # After every case, beside the results file: an interrupted bench keeps what it measured, and a
            # half-run file is never rendered into the docs (bench/render_tables.py reads the named file only).
            write(partial(out), kept + rows, args.seeds)
            held = " ".join(("ok" if h["solved"] else "NO") for h in row.get("held_out", []))
            w = row.get("winner") or {}
            print(f"{set_dir.name}/{name:30s} fault={row['fault']!s:5s} verdict={row.get('verdict', 'ERROR'):12s} "
                  f"{' '.join(w.get('set_args', [])):60s} held-out [{held}] {row['seconds']}s", flush=True)
    write(out, kept + rows, args.seeds)
    partial(out).unlink(missing_ok=True)
    print("\n".join(summary(kept + rows)))
    return 0


def head_commit() -> str:
    """The commit of the code that runs the cases: the checkout the gymnasium_solver package is imported from
    (a clone on PYTHONPATH, for a blind run at a fixed commit), not necessarily this script's."""
    import gymnasium_solver

    where = Path(gymnasium_solver.__file__).resolve().parent
    return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,  # noqa: S607
                          cwd=where, check=False).stdout.strip()


def commits(rows: list[dict[str, Any]]) -> dict[str, int]:
    """Which code measured the rows: commit -> rows, most first (a --keep run mixes them)."""
    counts: dict[str, int] = {}
    for r in rows:
        counts[r.get("commit", "?")] = counts.get(r.get("commit", "?"), 0) + 1
    return dict(sorted(counts.items(), key=lambda kv: -kv[1]))


def partial(out: Path) -> Path:
    """Where a bench still running keeps its rows: ``fix_verdicts_x.json`` -> ``fix_verdicts_x.partial.json``."""
    return out.with_suffix(".partial.json")


def write(out: Path, rows: list[dict[str, Any]], seeds: int) -> None:
    by_commit = commits(rows)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"commit": next(iter(by_commit), head_commit()), "commits": by_commit,
                               "date": time.strftime("%Y-%m-%d"),
                               "machine": f"{platform.machine()}, {os.cpu_count()} cores",
                               "load_at_end": os.getloadavg()[0], "seeds": seeds,
                               "held_out_offsets": list(HELD_OUT_OFFSETS), "summary": summary(rows),
                               "rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    sys.exit(main())
