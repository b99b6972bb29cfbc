"""HELD-OUT test set: tests/fixtures/heldout is for scoring the run diagnosis ONLY. Do not use it to
tune, fit or develop the diagnosis (rules, thresholds, references, candidate orders); do not read
its labels.json files or this table while working on the diagnosis. Once it has been used for
tuning, the figure it gives no longer measures diagnosis on faults nobody tuned to.

Regenerates tests/fixtures/heldout/<case>/ (run.json, config.yaml, metrics.csv, labels.json):
each case in CASES is trained with `gsolve train` (one process at a time, `nice -n 10`), and for
a faulty case its fix (the same run with the planted keys reverted to the preset) is trained too.
A case is written only when it behaves as declared: a faulty run must not solve and its fix must;
a healthy run must solve.

    .venv/bin/python scripts/make_heldout.py                 # every case
    .venv/bin/python scripts/make_heldout.py --only h03_s1   # some cases
    git archive HEAD | tar -x -C /tmp/src && .venv/bin/python scripts/make_heldout.py --src /tmp/src
                                                             # train with committed code, not a dirty tree
    .venv/bin/python scripts/make_heldout.py --cases scripts/heldout2_cases.py --out tests/fixtures/heldout2
                                                             # another case table (a module defining CASES)

The full set takes about 30-40 min of one core on the shared 2-core VM (every faulty case is also
trained once more with its fix).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "fixtures" / "heldout"
PYTHON = ROOT / ".venv" / "bin" / "python"
SRC: Path | None = None  # --src: train with this checkout's code (e.g. a clean `git archive HEAD`)
COPIED = ("run.json", "config.yaml", "metrics.csv")

# One row per case. `planted` are the overrides that make the fault (reverting them to the preset
# is the verified fix); `budget` is max_env_steps, kept for both runs and at least 1.5x the
# preset's slowest measured solve (docs/presets.md). Healthy rows have no `planted`.
# Columns: case, config_id, seed, budget, planted, fault_type, cause, expected_key,
#          expected_direction, acceptable_keys
CASES: list[dict] = [
    dict(case="h01_s0", config_id="LunarLander-v3:ppo", seed=0, budget=458752,
         planted=["n_epochs=1", "batch_size=16384"],
         fault_type="too_few_gradient_steps",
         cause="one epoch over a single 16384-sample minibatch makes one gradient step per rollout, so a 450k budget "
               "gives only ~28 policy updates",
         expected_key="n_epochs", expected_direction="increase",
         acceptable_keys=["batch_size"]),
    dict(case="h02_s11", config_id="CartPole-v1:ppo", seed=11, cause="the unmodified preset"),
    dict(case="h03_s1", config_id="CartPole-v1:reinforce", seed=1, budget=120000,
         planted=["episodes_per_update=64"],
         fault_type="too_many_episodes_per_update",
         cause="64 complete episodes per single REINFORCE gradient step spends 8x the env steps per update, so the "
               "budget allows too few updates to learn",
         expected_key="episodes_per_update", expected_direction="decrease",
         acceptable_keys=["learning_rate"]),
    dict(case="h04_s0", config_id="Pendulum-v1:ppo", seed=0, budget=300000,
         planted=["gamma=0.999"],
         fault_type="discount_too_high",
         cause="gamma 0.999 on dense-reward Pendulum makes value targets span hundreds of steps of bootstrapped "
               "cost, so advantages are dominated by value error and credit for the swing-up is lost",
         expected_key="gamma", expected_direction="decrease",
         acceptable_keys=["gae_lambda"]),
    dict(case="h05_s1", config_id="CartPole-v1:ppo", seed=1, budget=40960,
         planted=["shared_network=true"],
         fault_type="shared_trunk_unscaled_value",
         cause="actor and critic share the hidden layers while value targets are unscaled (up to ~50), so the value "
               "loss gradient swamps the shared trunk and the policy features are overwritten",
         expected_key="shared_network", expected_direction="disable",
         acceptable_keys=["vf_coef", "reward_scale"]),
    dict(case="h06_s3", config_id="Pendulum-v1:ppo", seed=3, budget=300000,
         planted=["n_steps=16", "batch_size=128"],
         fault_type="rollout_too_short",
         cause="16-step rollouts (128 samples) cut every 200-step episode into fragments whose advantages lean on an "
               "untrained critic, and 5 epochs on each tiny batch overfit it",
         expected_key="n_steps", expected_direction="increase",
         acceptable_keys=["batch_size", "n_epochs"]),
    dict(case="h07_s12", config_id="Acrobot-v1:reinforce", seed=12, cause="the unmodified preset"),
    dict(case="h08_s0", config_id="Acrobot-v1:ppo", seed=0, budget=122880,
         planted=["reward_scale=10.0"],
         fault_type="reward_scale_too_large",
         cause="rewards scaled by 10 instead of 0.1 make value targets O(1000); the value loss dominates the global "
               "gradient-norm clip and the critic cannot fit, so the policy barely improves",
         expected_key="reward_scale", expected_direction="decrease",
         acceptable_keys=["vf_coef", "max_grad_norm"]),
    dict(case="h09_s1", config_id="Pendulum-v1:ppo", seed=1, budget=300000,
         planted=["clip_range_vf=0.001"],
         fault_type="value_clip_tiny",
         cause="a 0.001 value-function clip stops the critic moving away from its initial predictions, so GAE "
               "advantages are built on a near-constant baseline and are mostly noise",
         expected_key="clip_range_vf", expected_direction="disable",
         acceptable_keys=[]),
    dict(case="h10_s0", config_id="Pendulum-v1:ppo", seed=0, budget=300000,
         planted=["clip_range=1.0"],
         fault_type="clip_range_huge",
         cause="a clip range of 1.0 removes PPO's trust region on the sensitive Pendulum policy, so 5 epochs per "
               "rollout take steps large enough to collapse the Gaussian's exploration into a poor plateau",
         expected_key="clip_range", expected_direction="decrease",
         acceptable_keys=["target_kl", "n_epochs", "learning_rate"]),
]


def _train(config_id: str, seed: int, overrides: list[str], runs_dir: Path) -> tuple[Path, dict, float]:
    cmd = ["nice", "-n", "10", str(PYTHON), "-m", "gymnasium_solver.cli.app", "train", config_id, "--seed", str(seed),
           "--runs-dir", str(runs_dir), "--quiet"]
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


def make_case(row: dict, runs_dir: Path, skip_fix: bool) -> bool:
    healthy = not row.get("planted")
    base = [f"max_env_steps={row['budget']}"] if row.get("budget") else []
    overrides = base + list(row.get("planted", []))
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
    labels = {
        "case": row["case"],
        "fault_type": row.get("fault_type"),
        "config_id": row["config_id"],
        "seed": row["seed"],
        "overrides": overrides,
        "cause": row.get("cause"),
        "healthy": healthy,
        "expected_key": row.get("expected_key"),
        "expected_direction": row.get("expected_direction"),
        "acceptable_keys": row.get("acceptable_keys", []),
        "fix_verified": fix,
        "outcome": outcome,
    }
    dest = OUT / row["case"]
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    for name in COPIED:
        shutil.copy2(run_dir / name, dest / name)
    (dest / "labels.json").write_text(json.dumps(labels, indent=2) + "\n", encoding="utf-8")
    return True


def verify_fix(row: dict, runs_dir: Path) -> bool:
    """Train only the fix of an already written faulty case and record it in its labels.json."""
    path = OUT / row["case"] / "labels.json"
    labels = json.loads(path.read_text(encoding="utf-8"))
    if labels["healthy"]:
        return True
    base = [f"max_env_steps={row['budget']}"]
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
    parser.add_argument("--cases", type=Path, help="a Python file defining CASES to use instead of this file's table")
    parser.add_argument("--out", type=Path, default=OUT, help=f"write the cases here (default: {OUT.relative_to(ROOT)})")
    args = parser.parse_args()
    SRC = args.src.resolve() if args.src else None
    OUT = args.out.resolve()
    cases = CASES
    if args.cases:
        spec = importlib.util.spec_from_file_location("heldout_cases", args.cases)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        cases = module.CASES
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
