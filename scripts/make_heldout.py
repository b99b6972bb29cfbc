"""Regenerate a HELD-OUT test set of the run diagnosis from its case table (tests/fixtures/heldout*/cases.yaml).

The held-out sets are for scoring the run diagnosis ONLY: do not use them to tune, fit or develop the
diagnosis (rules, thresholds, references, candidate orders), and do not read their cases.yaml or labels.json
files while working on the diagnosis. Once a set has been used for tuning, the figure it gives no longer
measures diagnosis on faults nobody tuned to. Each cases.yaml says in its comments who made the set and
what they had and had not read.

Writes <out>/<case>/ (run.json, config.yaml, metrics.csv, labels.json) for each row of the table: each case
is trained with `gsolve train` (one process at a time, `nice -n 10`), and for a faulty case its fix (the
same run without the planted keys, i.e. with what the preset, the RL Zoo's entry or the defaults give them)
is trained too. A case is written only when it behaves as declared: a faulty run must not solve and its fix
must; a healthy run must solve.

A row of cases.yaml (under `cases:`): case, config_id, seed, cause, and for a faulty case budget, planted,
fault_type, expected_key, expected_direction and optionally acceptable_keys; any row may have `base`.
`planted` are the overrides that make the fault (reverting them is the verified fix); `budget` is
max_env_steps, kept for both runs and at least 1.5x the preset's slowest measured solve (docs/presets.md).
`base` are overrides that belong to the environment, not to the fault, kept in both runs like `budget`: a
reward_threshold for an environment whose spec has none, env_kwargs such as {is_slippery: false}, and
env_package=[PKG], which is passed as `--env-package PKG` (the one way a package's ids are imported), and
env_class=MODULE:CLASS for a user's own environment class (config_id names the id it trains as, e.g.
Corridor-v0:ppo), passed as `--env-class MODULE:CLASS`; the module must import from the repository's root
(e.g. tests.envs.my_env:Corridor).
labels.json's overrides are the budget's max_env_steps, then `base`, then `planted`. Healthy rows have no
`planted`. tests/test_heldout_cases.py holds every table to the labels.json files it produced.

    .venv/bin/python scripts/make_heldout.py                 # tests/fixtures/heldout, every case
    .venv/bin/python scripts/make_heldout.py --only h03_s1   # some cases
    git archive HEAD | tar -x -C /tmp/src && .venv/bin/python scripts/make_heldout.py --src /tmp/src
                                                             # train with committed code, not a dirty tree
    .venv/bin/python scripts/make_heldout.py --cases tests/fixtures/heldout2/cases.yaml
                                                             # another set (written beside its cases.yaml)

The first set takes about 30-40 min of one core on the shared 2-core VM (every faulty case is also
trained once more with its fix).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from gymnasium_solver.config.model import CLASS_PATH  # the pattern --env-class itself checks

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "fixtures" / "heldout"
PYTHON = Path(sys.executable)  # the interpreter running this script (a clone of the repo may have no .venv of its own)
SRC: Path | None = None  # --src: train with this checkout's code (e.g. a clean `git archive HEAD`)
COPIED = ("run.json", "config.yaml", "metrics.csv")

FIELDS = ("case", "config_id", "seed", "budget", "base", "planted", "fault_type", "cause", "expected_key",
          "expected_direction", "acceptable_keys")
REQUIRED = ("case", "config_id", "seed", "cause")
FAULT_REQUIRED = ("budget", "fault_type", "expected_key", "expected_direction")
Case = dict[str, Any]


class CasesError(ValueError):
    """A case table that cannot be used, said in one sentence naming the file and the row."""


def _check_row(i: int, row: object) -> Case:
    where = f"case #{i + 1}"
    if not isinstance(row, dict):
        raise CasesError(f"{where} is a {type(row).__name__}, not a mapping of {', '.join(REQUIRED)}, ...")
    where = f"case {row.get('case')!r}" if isinstance(row.get("case"), str) else where
    unknown = sorted(set(row) - set(FIELDS))
    if unknown:
        raise CasesError(f"{where} has unknown field(s) {', '.join(map(str, unknown))}; "
                         f"the fields are {', '.join(FIELDS)}")
    needed = REQUIRED + (FAULT_REQUIRED if row.get("planted") else ())
    missing = [k for k in needed if row.get(k) is None]
    if missing:
        kind = "a faulty case (it has planted keys)" if row.get("planted") else "every case"
        raise CasesError(f"{where} lacks {', '.join(missing)}, which {kind} needs")
    for key, typ in (("seed", int), ("budget", int)):
        if key in row and (not isinstance(row[key], typ) or isinstance(row[key], bool) or row[key] < 0):
            raise CasesError(f"{where} has {key}={row[key]!r}; it must be a whole number >= 0")
    for key in ("base", "planted", "acceptable_keys"):
        if key in row and not (isinstance(row[key], list) and all(isinstance(v, str) for v in row[key])):
            raise CasesError(f"{where} has {key}={row[key]!r}; it must be a list of strings such as [n_envs=8]")
    for key in ("case", "config_id", "fault_type", "cause", "expected_key", "expected_direction"):
        if key in row and not isinstance(row[key], str):
            raise CasesError(f"{where} has {key}={row[key]!r}; it must be a string")
    _check_env_modules(where, row)
    return row


ENV_MODULE_KEYS = ("env_package", "env_class")  # imported only by the command line's flags, never by --set


def _check_env_modules(where: str, row: dict) -> None:
    """env_package and env_class belong to the environment (base), each in the form its flag takes."""
    for key in ("planted", "acceptable_keys"):
        for name in ENV_MODULE_KEYS:
            if any(v.partition("=")[0].strip() == name for v in row.get(key, [])):
                raise CasesError(f"{where} names {name} in {key}; it belongs to the environment: put it in base")
    for pair in row.get("base", []):
        key, _, value = pair.partition("=")
        if key.strip() == "env_package" and not _package_names(value):
            raise CasesError(f"{where} has base entry {pair!r}; env_package must be a package name or a list of "
                             "them, such as env_package=[minigrid]")
        if key.strip() == "env_class" and not _class_path(value):
            raise CasesError(f"{where} has base entry {pair!r}; env_class must be MODULE:CLASS, such as "
                             "env_class=tests.envs.my_env:Corridor")


def _class_path(value: str) -> str:
    """The MODULE:CLASS of an `env_class=` value, '' if it is not one (the check `gsolve train --env-class` makes)."""
    return value.strip() if CLASS_PATH.fullmatch(value.strip()) else ""


def _package_names(value: str) -> list[str]:
    """The package names of an `env_package=` value (`minigrid` or `[minigrid, other]`); [] if it is not that."""
    try:
        parsed = yaml.safe_load(value)
    except yaml.YAMLError:
        return []
    names = parsed if isinstance(parsed, list) else [parsed]
    return [str(n) for n in names] if names and all(isinstance(n, str) and n for n in names) else []


def load_cases(path: Path) -> list[Case]:
    """The rows of a held-out case table (tests/fixtures/heldout*/cases.yaml), checked; CasesError if unusable."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise CasesError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}" if mark is not None else ""
        raise CasesError(f"{path}: not valid YAML{at}") from None
    extra = sorted(map(str, set(data) - {"cases"})) if isinstance(data, dict) else []
    if extra:
        raise CasesError(f"{path}: unknown top-level key(s) {', '.join(extra)}; only 'cases' is read")
    if not isinstance(data, dict) or not isinstance(data.get("cases"), list) or not data["cases"]:
        raise CasesError(f"{path}: expected a mapping with a non-empty list under 'cases:'")
    try:
        rows = [_check_row(i, row) for i, row in enumerate(data["cases"])]
    except CasesError as exc:
        raise CasesError(f"{path}: {exc}") from None
    seen: set[str] = set()
    for row in rows:
        if row["case"] in seen:
            raise CasesError(f"{path}: case {row['case']!r} appears twice")
        seen.add(row["case"])
    return rows


def kept_overrides(row: Case) -> list[str]:
    """The overrides both the faulty run and its fix train with: the budget, then the row's `base`."""
    return ([f"max_env_steps={row['budget']}"] if row.get("budget") else []) + list(row.get("base", []))


def declared_labels(row: Case) -> dict[str, Any]:
    """What a case declares, as written into its labels.json (the rest of labels.json is measured)."""
    base = kept_overrides(row)
    return {
        "case": row["case"],
        "fault_type": row.get("fault_type"),
        "config_id": row["config_id"],
        "seed": row["seed"],
        "overrides": base + list(row.get("planted", [])),
        "cause": row.get("cause"),
        "healthy": not row.get("planted"),
        "expected_key": row.get("expected_key"),
        "expected_direction": row.get("expected_direction"),
        "acceptable_keys": row.get("acceptable_keys", []),
    }


def _package_args(overrides: list[str]) -> tuple[list[str], list[str]]:
    """`env_package=[a, b]` overrides as `--env-package a --env-package b`, `env_class=M:C` as `--env-class M:C`
    (--set refuses both keys), and the rest."""
    flags, rest = [], []
    for pair in overrides:
        key, _, value = pair.partition("=")
        if key.strip() == "env_package":
            for pkg in _package_names(value):
                flags += ["--env-package", pkg]
        elif key.strip() == "env_class":
            flags += ["--env-class", _class_path(value)]
        else:
            rest.append(pair)
    return flags, rest


def _train(config_id: str, seed: int, overrides: list[str], runs_dir: Path) -> tuple[Path, dict, float]:
    flags, overrides = _package_args(overrides)
    cmd = ["nice", "-n", "10", str(PYTHON), "-m", "gymnasium_solver.cli.app", "train", config_id, "--seed", str(seed),
           "--runs-dir", str(runs_dir), "--quiet", "--no-fail", *flags]  # unsolved: exit 0, not 3
    if overrides:
        cmd += ["--set", *overrides]
    t0 = time.monotonic()
    env = dict(os.environ, PYTHONPATH=str(SRC)) if SRC else None
    proc = subprocess.run(cmd, cwd=SRC or ROOT, capture_output=True, text=True, env=env)
    took = time.monotonic() - t0
    if proc.returncode not in (0, 1) or not proc.stdout.strip():
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    run_dir = Path(proc.stdout.strip().splitlines()[-1].strip())
    info = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    print(f"  {proc.stdout.strip().splitlines()[0]}  [{info['stop_reason']}, {took:.0f} s]", flush=True)
    return run_dir, info, took


def _outcome(info: dict) -> dict:
    best = info.get("best_eval") or {}
    return {"solved": bool(info["solved"]), "best_eval": best.get("return_mean"),
            "threshold": info["reward_threshold"], "env_steps": info["progress"]["env_steps"]}


def make_case(row: Case, runs_dir: Path, skip_fix: bool) -> bool:
    declared = declared_labels(row)
    healthy = declared["healthy"]
    base = kept_overrides(row)
    overrides = declared["overrides"]
    print(f"{row['case']}: {row['config_id']} seed {row['seed']}", flush=True)
    run_dir, info, _ = _train(row["config_id"], row["seed"], overrides, runs_dir)
    outcome = _outcome(info)
    if outcome["solved"] != healthy:
        print(f"  SKIPPED: expected solved={healthy}, got {outcome['solved']}", flush=True)
        return False
    fix = None
    if not healthy and not skip_fix:
        _, fix_info, _ = _train(row["config_id"], row["seed"], base, runs_dir)
        fix = {"overrides": base, "solved": bool(fix_info["solved"]),
               "env_steps": (fix_info.get("solved_at") or fix_info["progress"])["env_steps"]}
        if not fix["solved"]:
            print("  SKIPPED: reverting the planted keys did not solve", flush=True)
            return False
    labels = {**declared_labels(row), "fix_verified": fix, "outcome": outcome}
    dest = OUT / row["case"]
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    for name in COPIED:
        shutil.copy2(run_dir / name, dest / name)
    (dest / "labels.json").write_text(json.dumps(labels, indent=2) + "\n", encoding="utf-8")
    return True


def verify_fix(row: Case, runs_dir: Path) -> bool:
    """Train only the fix of an already written faulty case and record it in its labels.json."""
    path = OUT / row["case"] / "labels.json"
    labels = json.loads(path.read_text(encoding="utf-8"))
    if labels["healthy"]:
        return True
    base = kept_overrides(row)
    print(f"{row['case']} (fix): {row['config_id']} seed {row['seed']}", flush=True)
    _, info, _ = _train(row["config_id"], row["seed"], base, runs_dir)
    labels["fix_verified"] = {"overrides": base, "solved": bool(info["solved"]),
                              "env_steps": (info.get("solved_at") or info["progress"])["env_steps"]}
    path.write_text(json.dumps(labels, indent=2) + "\n", encoding="utf-8")
    return bool(info["solved"])


def main() -> int:
    global SRC, OUT
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", help="case names to (re)generate")
    parser.add_argument("--runs-dir", type=Path, help="keep the run folders here (default: a temp dir)")
    parser.add_argument("--skip-fix", action="store_true", help="do not train the fix runs")
    parser.add_argument("--fix-only", action="store_true",
                        help="only train the fixes of cases already written and record them in labels.json")
    parser.add_argument("--src", type=Path, help="train with the code of this checkout instead of the working tree")
    parser.add_argument("--cases", type=Path, default=OUT / "cases.yaml",
                        help=f"the case table, a YAML file (default: {(OUT / 'cases.yaml').relative_to(ROOT)})")
    parser.add_argument("--out", type=Path, help="write the cases here (default: the case table's folder)")
    args = parser.parse_args()
    SRC = args.src.resolve() if args.src else None
    try:
        cases = load_cases(args.cases)
    except CasesError as exc:
        print(f"make_heldout: {exc}", file=sys.stderr)
        return 2
    OUT = (args.out or args.cases.parent).resolve()
    unknown = sorted(set(args.only or ()) - {r["case"] for r in cases})
    if unknown:
        print(f"make_heldout: no case {', '.join(unknown)} in {args.cases}; its cases are "
              f"{', '.join(r['case'] for r in cases)}", file=sys.stderr)
        return 2
    rows = [r for r in cases if not args.only or r["case"] in args.only]
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        runs_dir = args.runs_dir or Path(tmp)
        if args.fix_only:
            bad = [r["case"] for r in rows if not verify_fix(r, runs_dir)]
        else:
            bad = [r["case"] for r in rows if not make_case(r, runs_dir, args.skip_fix)]
    print(f"{len(rows) - len(bad)} of {len(rows)} cases written in {time.monotonic() - t0:.0f} s"
          + (f"; not as declared: {', '.join(bad)}" if bad else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
