"""Regenerate the planted-fault corpus in tests/fixtures/corpus/ with real runs of our trainer.

Each case is a config override with a known cause (a learning rate far too high or too low, an
entropy bonus that drowns the reward, a starved value function, far too small a budget, a tiny
target_kl) or none (healthy runs, several seeds). For each run the fixture keeps run.json,
config.yaml and metrics.csv (no checkpoints, no log) plus labels.json:

    {"case": ..., "cause": ..., "expected_rules": [...], "expected_key": ..., "expected_direction": ...}

Usage (about a minute of CPU for the whole corpus on CartPole; runs one training at a time):

    nice -n 10 .venv/bin/python scripts/make_corpus.py            # all cases
    nice -n 10 .venv/bin/python scripts/make_corpus.py lr_high    # cases whose name starts so
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from gymnasium_solver import run_folder as rf
from gymnasium_solver.config import parse_overrides, resolve_config
from gymnasium_solver.training import train

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "fixtures" / "corpus"
KEEP = (rf.RUN_JSON, rf.CONFIG_YAML, rf.METRICS_CSV)

# Healthy CartPole-v1:ppo solves in 6k-37k env steps; faulty runs get 60k, so "not solved" is the
# fault's doing, not the budget's.
FAULT_BUDGET = 60_000


@dataclass(frozen=True)
class Case:
    name: str
    config_id: str
    overrides: tuple[str, ...]
    cause: str
    expected_rules: tuple[str, ...] = ()
    expected_key: str | None = None
    expected_direction: str | None = None


def _seeds(
    name: str,
    seeds: range,
    *,
    config_id: str,
    overrides: tuple[str, ...],
    cause: str,
    expected_rules: tuple[str, ...] = (),
    expected_key: str | None = None,
    expected_direction: str | None = None,
) -> list[Case]:
    return [
        Case(f"{name}_s{s}", config_id, (*overrides, f"seed={s}"), cause, expected_rules, expected_key,
             expected_direction)
        for s in seeds
    ]


CASES: list[Case] = [
    *_seeds("healthy", range(8), config_id="CartPole-v1:ppo", overrides=("max_env_steps=100000",),
            cause="none: preset config, should solve"),
    *_seeds("healthy_reinforce", range(3), config_id="CartPole-v1:reinforce", overrides=(),
            cause="none: preset config, should solve"),
    *_seeds("lr_high", range(4), config_id="CartPole-v1:ppo",
            overrides=("learning_rate=0.05", f"max_env_steps={FAULT_BUDGET}"),
            cause="learning rate far too high (0.05 constant vs the preset 0.004 decaying)",
            expected_rules=("approx_kl_high", "clip_fraction_high", "entropy_collapse"),
            expected_key="learning_rate", expected_direction="decrease"),
    *_seeds("lr_very_high", range(3), config_id="CartPole-v1:ppo",
            overrides=("learning_rate=0.1", f"max_env_steps={FAULT_BUDGET}"),
            cause="learning rate far too high (0.1 constant vs the preset 0.004 decaying)",
            expected_rules=("approx_kl_high", "clip_fraction_high", "entropy_collapse"),
            expected_key="learning_rate", expected_direction="decrease"),
    *_seeds("lr_low", range(3), config_id="CartPole-v1:ppo",
            overrides=("learning_rate=0.00001", f"max_env_steps={FAULT_BUDGET}"),
            cause="learning rate far too low (1e-5 vs the preset 0.004)",
            expected_rules=("approx_kl_near_zero",),
            expected_key="learning_rate", expected_direction="increase"),
    # CartPole's greedy evaluation still solves under ent_coef=1 (the bonus cannot flip an argmax),
    # so the planted bonus is large enough to keep the sampled AND the greedy policy from learning.
    *_seeds("ent_high", range(8), config_id="CartPole-v1:ppo",
            overrides=("ent_coef=10.0", f"max_env_steps={FAULT_BUDGET}"),
            cause="entropy bonus that drowns the reward (ent_coef 10 vs 0)",
            expected_rules=("entropy_bonus_dominates",),
            expected_key="ent_coef", expected_direction="decrease"),
    *_seeds("vf_starved", range(6), config_id="CartPole-v1:ppo",
            overrides=("vf_coef=0.0", f"max_env_steps={FAULT_BUDGET}"),
            cause="starved value function (vf_coef 0: the critic never trains)",
            expected_rules=("explained_variance_low",),
            expected_key="vf_coef", expected_direction="increase"),
    *_seeds("budget_small", range(3), config_id="CartPole-v1:ppo",
            overrides=("max_env_steps=6000",),
            cause="far too small a budget (6k env steps; the preset solves in 6k-37k)",
            expected_rules=("budget_exhausted_improving",),
            expected_key="max_env_steps", expected_direction="increase"),
    *_seeds("budget_small_reinforce", range(2), config_id="CartPole-v1:reinforce",
            overrides=("max_env_steps=10000",),
            cause="far too small a budget (10k env steps; the preset solves in 22k-60k)",
            expected_rules=("budget_exhausted_improving",),
            expected_key="max_env_steps", expected_direction="increase"),
    *_seeds("target_kl_tiny", range(3), config_id="CartPole-v1:ppo",
            overrides=("target_kl=0.0002", f"max_env_steps={FAULT_BUDGET}"),
            cause="target_kl tiny (0.0002): early stopping cuts nearly every epoch",
            expected_rules=("target_kl_stops_epochs",),
            expected_key="target_kl", expected_direction="increase"),
    # A second discrete environment (3 actions, returns -500..-60) with its own preset.
    *_seeds("acrobot_healthy", range(4), config_id="Acrobot-v1:ppo", overrides=(),
            cause="none: preset config, should solve"),
    *_seeds("acrobot_lr_high", range(2), config_id="Acrobot-v1:ppo",
            overrides=("learning_rate=0.05", "max_env_steps=100000"),
            cause="learning rate far too high (0.05 vs the preset 3e-4)",
            expected_rules=("approx_kl_high", "clip_fraction_high", "entropy_collapse"),
            expected_key="learning_rate", expected_direction="decrease"),
    *_seeds("acrobot_lr_low", range(2), config_id="Acrobot-v1:ppo",
            overrides=("learning_rate=0.000001", "max_env_steps=100000"),
            cause="learning rate far too low (1e-6 vs the preset 3e-4)",
            expected_rules=("approx_kl_near_zero",),
            expected_key="learning_rate", expected_direction="increase"),
    *_seeds("acrobot_ent_high", range(2), config_id="Acrobot-v1:ppo",
            overrides=("ent_coef=10.0", "max_env_steps=100000"),
            cause="entropy bonus that drowns the reward (ent_coef 10 vs 0)",
            expected_rules=("entropy_bonus_dominates",),
            expected_key="ent_coef", expected_direction="decrease"),
    *_seeds("acrobot_vf_starved", range(2), config_id="Acrobot-v1:ppo",
            overrides=("vf_coef=0.0", "max_env_steps=100000"),
            cause="starved value function (vf_coef 0: the critic never trains)",
            expected_rules=("explained_variance_low",),
            expected_key="vf_coef", expected_direction="increase"),
    *_seeds("acrobot_budget_small", range(2), config_id="Acrobot-v1:ppo",
            overrides=("max_env_steps=12000",),
            cause="far too small a budget (12k env steps; the preset solves in 25k-50k)",
            expected_rules=("budget_exhausted_improving",),
            expected_key="max_env_steps", expected_direction="increase"),
    *_seeds("acrobot_target_kl_tiny", range(2), config_id="Acrobot-v1:ppo",
            overrides=("target_kl=0.0001", "max_env_steps=100000"),
            cause="target_kl tiny (0.0001): early stopping cuts nearly every epoch",
            expected_rules=("target_kl_stops_epochs",),
            expected_key="target_kl", expected_direction="increase"),
    # Box actions: the entropy reference is the initial Gaussian entropy, not log(n).
    *_seeds("pendulum_healthy", range(2), config_id="Pendulum-v1:ppo", overrides=(),
            cause="none: preset config, should solve"),
    *_seeds("pendulum_lr_low", range(1), config_id="Pendulum-v1:ppo",
            overrides=("learning_rate=0.000001", "max_env_steps=120000"),
            cause="learning rate far too low (1e-6 vs the preset 1e-3)",
            expected_rules=("approx_kl_near_zero",),
            expected_key="learning_rate", expected_direction="increase"),
    *_seeds("pendulum_budget_small", range(1), config_id="Pendulum-v1:ppo",
            overrides=("max_env_steps=40000",),
            cause="far too small a budget (40k env steps; the preset solves in 100k-170k)",
            expected_rules=("budget_exhausted_improving",),
            expected_key="max_env_steps", expected_direction="increase"),
]


def run_case(case: Case, scratch: Path) -> Path:
    cfg = resolve_config(case.config_id, list(case.overrides))
    result = train(cfg, scratch, overrides=parse_overrides(list(case.overrides)))
    out = CORPUS / case.name
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    for name in KEEP:
        shutil.copy2(result.run_dir / name, out / name)
    labels = {
        "case": case.name,
        "config_id": case.config_id,
        "overrides": list(case.overrides),
        "cause": case.cause,
        "healthy": not case.expected_rules,
        "expected_rules": list(case.expected_rules),
        "expected_key": case.expected_key,
        "expected_direction": case.expected_direction,
        "outcome": {"status": str(result.status), "stop_reason": str(result.stop_reason),
                    "solved": result.solved, "env_steps": result.env_steps},
    }
    (out / "labels.json").write_text(json.dumps(labels, indent=2) + "\n", encoding="utf-8")
    return out


def main(argv: list[str]) -> int:
    chosen = [c for c in CASES if not argv or any(c.name.startswith(a) for a in argv)]
    if not chosen:
        print(f"no case matches {argv}; cases: {', '.join(c.name for c in CASES)}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="gsolve-corpus-") as tmp:
        for case in chosen:
            t0 = time.perf_counter()
            out = run_case(case, Path(tmp))
            labels = json.loads((out / "labels.json").read_text())
            print(f"{case.name:20s} {labels['outcome']} {time.perf_counter() - t0:.1f}s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
