"""Regenerate the planted-fault corpus in tests/fixtures/corpus/ with real runs of our trainer.

Each case is a config override with a known cause (a learning rate far too high or too low, an
entropy bonus that drowns the reward, a starved value function, far too small a budget, a tiny
target_kl) or none (healthy runs, several seeds). For each run the fixture keeps run.json,
config.yaml and metrics.csv (no checkpoints, no log) plus labels.json:

    {"case": ..., "cause": ..., "fault_type": ..., "expected_rules": [...], "expected_key": ...,
     "expected_direction": ..., "outcome": {status, stop_reason, solved, env_steps, best_eval, ...}}

``fault_type`` names what was planted, shared by its seeds and environments ("healthy" for none);
held-out scores leave one type out at a time. One case is not a config fault: ``lunar_crashed``
SIGKILLs a trainer mid-run, so its run.json says running with a dead pid.

Usage (runs one training at a time; the whole corpus takes about half an hour on 2 shared cores):

    nice -n 10 .venv/bin/python scripts/make_corpus.py              # all cases
    nice -n 10 .venv/bin/python scripts/make_corpus.py lr_high      # cases whose name starts so, or of that fault type
    .venv/bin/python scripts/make_corpus.py --relabel               # rewrite labels.json only, no training
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from gymnasium_solver.config import parse_overrides, resolve_config
from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.train.training import train

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
    fault_type: str
    expected_rules: tuple[str, ...] = ()
    expected_key: str | None = None
    expected_direction: str | None = None
    # "train": a normal run; "crash": the trainer process is SIGKILLed mid-run (see run_crash_case).
    kind: str = "train"


def _seeds(
    name: str,
    seeds: range,
    *,
    config_id: str,
    overrides: tuple[str, ...],
    cause: str,
    fault_type: str = "",
    expected_rules: tuple[str, ...] = (),
    expected_key: str | None = None,
    expected_direction: str | None = None,
    kind: str = "train",
) -> list[Case]:
    # A fault type is what was planted, shared by its seeds and environments (lr_high covers
    # lr_very_high and acrobot_lr_high); held-out scoring leaves one type out at a time.
    fault_type = fault_type or ("healthy" if not expected_rules else name)
    return [
        Case(f"{name}_s{s}", config_id, (*overrides, f"seed={s}"), cause, fault_type, expected_rules,
             expected_key, expected_direction, kind)
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
    *_seeds("lr_very_high", fault_type="lr_high", seeds=range(3), config_id="CartPole-v1:ppo",
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
    *_seeds("budget_small_reinforce", fault_type="budget_small", seeds=range(2), config_id="CartPole-v1:reinforce",
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
    *_seeds("acrobot_lr_high", fault_type="lr_high", seeds=range(2), config_id="Acrobot-v1:ppo",
            overrides=("learning_rate=0.05", "max_env_steps=100000"),
            cause="learning rate far too high (0.05 vs the preset 3e-4)",
            expected_rules=("approx_kl_high", "clip_fraction_high", "entropy_collapse"),
            expected_key="learning_rate", expected_direction="decrease"),
    *_seeds("acrobot_lr_low", fault_type="lr_low", seeds=range(2), config_id="Acrobot-v1:ppo",
            overrides=("learning_rate=0.000001", "max_env_steps=100000"),
            cause="learning rate far too low (1e-6 vs the preset 3e-4)",
            expected_rules=("approx_kl_near_zero",),
            expected_key="learning_rate", expected_direction="increase"),
    *_seeds("acrobot_ent_high", fault_type="ent_high", seeds=range(2), config_id="Acrobot-v1:ppo",
            overrides=("ent_coef=10.0", "max_env_steps=100000"),
            cause="entropy bonus that drowns the reward (ent_coef 10 vs 0)",
            expected_rules=("entropy_bonus_dominates",),
            expected_key="ent_coef", expected_direction="decrease"),
    *_seeds("acrobot_vf_starved", fault_type="vf_starved", seeds=range(2), config_id="Acrobot-v1:ppo",
            overrides=("vf_coef=0.0", "max_env_steps=100000"),
            cause="starved value function (vf_coef 0: the critic never trains)",
            expected_rules=("explained_variance_low",),
            expected_key="vf_coef", expected_direction="increase"),
    *_seeds("acrobot_budget_small", fault_type="budget_small", seeds=range(2), config_id="Acrobot-v1:ppo",
            overrides=("max_env_steps=12000",),
            cause="far too small a budget (12k env steps; the preset solves in 25k-50k)",
            expected_rules=("budget_exhausted_improving",),
            expected_key="max_env_steps", expected_direction="increase"),
    *_seeds("acrobot_target_kl_tiny", fault_type="target_kl_tiny", seeds=range(2), config_id="Acrobot-v1:ppo",
            overrides=("target_kl=0.0001", "max_env_steps=100000"),
            cause="target_kl tiny (0.0001): early stopping cuts nearly every epoch",
            expected_rules=("target_kl_stops_epochs",),
            expected_key="target_kl", expected_direction="increase"),
    # Box actions: the entropy reference is the initial Gaussian entropy, not log(n).
    *_seeds("pendulum_healthy", range(2), config_id="Pendulum-v1:ppo", overrides=(),
            cause="none: preset config, should solve"),
    *_seeds("pendulum_lr_low", fault_type="lr_low", seeds=range(1), config_id="Pendulum-v1:ppo",
            overrides=("learning_rate=0.000001", "max_env_steps=120000"),
            cause="learning rate far too low (1e-6 vs the preset 1e-3)",
            expected_rules=("approx_kl_near_zero",),
            expected_key="learning_rate", expected_direction="increase"),
    *_seeds("pendulum_budget_small", fault_type="budget_small", seeds=range(1), config_id="Pendulum-v1:ppo",
            overrides=("max_env_steps=40000",),
            cause="far too small a budget (40k env steps; the preset solves in 100k-170k)",
            expected_rules=("budget_exhausted_improving",),
            expected_key="max_env_steps", expected_direction="increase"),
    # ---- Fault types added with train/action_std. Each budget is one the PRESET solves within
    # (docs/presets.md: CartPole ppo 6k-37k, reinforce 22k-60k; Acrobot ppo 8k-61k, reinforce
    # 16k-103k; Pendulum ppo 98k-172k; LunarLander ppo 229k-295k), so not solving is the fault's.
    *_seeds("healthy_lunar", range(1), config_id="LunarLander-v3:ppo", overrides=(),
            cause="none: preset config, should solve"),
    *_seeds("healthy_acrobot_reinforce", range(2), config_id="Acrobot-v1:reinforce", overrides=(),
            cause="none: preset config, should solve"),
    *_seeds("pendulum_healthy", fault_type="healthy", seeds=range(2, 3), config_id="Pendulum-v1:ppo",
            overrides=(), cause="none: preset config, should solve"),
    # One hidden unit. Not on CartPole: there hidden_sizes=[1] SOLVED (seed 0 at 36,864 env steps,
    # seed 1 at 18,432; a linear policy balances the pole, and one tanh of a linear projection is
    # one), so the planted network is on Acrobot, whose swing-up needs more than one feature.
    *_seeds("acrobot_tiny_network", fault_type="tiny_network", seeds=range(2), config_id="Acrobot-v1:ppo",
            overrides=("hidden_sizes=[1]", "max_env_steps=100000"),
            cause="network far too small (hidden_sizes [1] vs the preset [64, 64])",
            expected_rules=("network_too_small",), expected_key="hidden_sizes", expected_direction="increase"),
    *_seeds("acrobot_reinforce_tiny_network", fault_type="tiny_network", seeds=range(1),
            config_id="Acrobot-v1:reinforce", overrides=("hidden_sizes=[2]", "max_env_steps=200000"),
            cause="network far too small (hidden_sizes [2] vs the preset [64, 64])",
            expected_rules=("network_too_small",), expected_key="hidden_sizes", expected_direction="increase"),
    # gamma 0.5 (horizon ~2 steps) and lambda 0: the pole's fall a few steps ahead is invisible.
    *_seeds("short_horizon", range(2), config_id="CartPole-v1:ppo",
            overrides=("gamma=0.5", "gae_lambda=0.0", f"max_env_steps={FAULT_BUDGET}"),
            cause="horizon far too short (gamma 0.5, gae_lambda 0 vs the preset 0.98, 0.8)",
            expected_rules=("horizon_too_short",), expected_key="gamma", expected_direction="increase"),
    # gamma 0.8 (horizon ~5 steps of a 1000-step episode): the landing bonus never reaches the start.
    *_seeds("lunar_short_horizon", fault_type="short_horizon", seeds=range(1), config_id="LunarLander-v3:ppo",
            overrides=("gamma=0.8", "max_env_steps=400000"),
            cause="horizon far too short (gamma 0.8 vs the preset 0.999)",
            expected_rules=("horizon_too_short",), expected_key="gamma", expected_direction="increase"),
    # log_std_init 3: std e^3 = 20 against a torque range of [-2, 2]; nearly every action is clipped.
    *_seeds("pendulum_action_noise_high", fault_type="action_noise_high", seeds=range(1),
            config_id="Pendulum-v1:ppo", overrides=("log_std_init=3", "max_env_steps=250000"),
            cause="action noise far too high (log_std_init 3, std 20 vs the torque half-range 2)",
            expected_rules=("action_noise_too_high",), expected_key="log_std_init", expected_direction="decrease"),
    # log_std_init -4: std 0.018, 1% of the torque half-range; the policy barely explores.
    *_seeds("pendulum_action_noise_low", fault_type="action_noise_low", seeds=range(1),
            config_id="Pendulum-v1:ppo", overrides=("log_std_init=-4", "max_env_steps=250000"),
            cause="action noise far too low (log_std_init -4, std 0.018 vs the torque half-range 2)",
            expected_rules=("action_noise_too_low",), expected_key="log_std_init", expected_direction="increase"),
    # A tight global gradient-norm clip. Adam divides each step by the gradient's running RMS, so
    # scaling the gradient down changes nothing until it nears Adam's eps (1e-5): CartPole with
    # max_grad_norm=1e-4 SOLVED (seeds 0 and 1 at 24,576 env steps, as fast as the preset). At 1e-7
    # the per-parameter gradients (~1e-9) sit far below eps and every step shrinks ~1e-4-fold.
    *_seeds("grad_clip_tiny", range(2), config_id="CartPole-v1:ppo",
            overrides=("max_grad_norm=1e-7", f"max_env_steps={FAULT_BUDGET}"),
            cause="gradient-norm clip far too tight (max_grad_norm 1e-7, below Adam's eps, vs the preset 0.5)",
            expected_rules=("grad_clip_throttles",), expected_key="max_grad_norm", expected_direction="increase"),
    *_seeds("pendulum_grad_clip_tiny", fault_type="grad_clip_tiny", seeds=range(1), config_id="Pendulum-v1:ppo",
            overrides=("max_grad_norm=1e-7", "max_env_steps=250000"),
            cause="gradient-norm clip far too tight (max_grad_norm 1e-7, below Adam's eps, vs the preset 0.5)",
            expected_rules=("grad_clip_throttles",), expected_key="max_grad_norm", expected_direction="increase"),
    # REINFORCE has no KL or clip metrics: the fault shows as entropy collapse and flat returns.
    *_seeds("reinforce_lr_high", range(2), config_id="CartPole-v1:reinforce",
            overrides=("learning_rate=0.5", "max_env_steps=150000"),
            cause="learning rate far too high (0.5 vs the preset 0.006)",
            expected_rules=("learning_rate_too_high", "entropy_collapse"),
            expected_key="learning_rate", expected_direction="decrease"),
    *_seeds("acrobot_reinforce_lr_high", fault_type="reinforce_lr_high", seeds=range(1),
            config_id="Acrobot-v1:reinforce", overrides=("learning_rate=0.3", "max_env_steps=200000"),
            cause="learning rate far too high (0.3 vs the preset 0.006)",
            expected_rules=("learning_rate_too_high", "entropy_collapse"),
            expected_key="learning_rate", expected_direction="decrease"),
    # 67x the preset's rate; KL and clip fraction may stay under the absolute limits, so only the
    # comparison with the preset names it. Seed 0 SOLVED with it (-97.6 at 98,304 env steps, the
    # preset's slowest seed takes 61k), so only seed 1 is kept (-110.9 best at 102,400).
    *_seeds("acrobot_lr_high_relative", fault_type="lr_high_relative", seeds=range(1, 2),
            config_id="Acrobot-v1:ppo", overrides=("learning_rate=0.02", "max_env_steps=100000"),
            cause="learning rate far too high relative to the preset (0.02 vs 3e-4)",
            expected_rules=("learning_rate_too_high", "approx_kl_high", "clip_fraction_high", "entropy_collapse"),
            expected_key="learning_rate", expected_direction="decrease"),
    # Honest non-finite losses, measured (seed 0, step 2 of the corpus work):
    #   Pendulum-v1:ppo log_std_init=-40: inf gradient norm in the first update (4,096 env steps);
    #   log_std_init=-20: inf PPO loss at 24,576 env steps (6th update; the log-probs of a 2e-9 std
    #   Gaussian overflow once the mean moves); log_std_init=-10 and +60 stay finite (60 clips
    #   every action but exp(60) is still a float32).
    #   Pendulum-v1:ppo learning_rate=1000 max_grad_norm=null: nan gradient norm in the first update
    #   (4,096); CartPole-v1:ppo and :reinforce with the same stay finite (saturated, 9.9 / 14 eval).
    #   CartPole-v1:ppo reward_scale=1e19: inf value loss in the first update (512); 1e10 stays
    #   finite (and nearly solves, 464).
    *_seeds("pendulum_non_finite_log_std", fault_type="non_finite", seeds=range(2), config_id="Pendulum-v1:ppo",
            overrides=("log_std_init=-20", "max_env_steps=250000"),
            cause="log_std_init -20 (std 2e-9): the Gaussian log-probs overflow to inf",
            expected_rules=("non_finite_loss",), expected_key="log_std_init", expected_direction="increase"),
    *_seeds("pendulum_non_finite_lr", fault_type="non_finite", seeds=range(1), config_id="Pendulum-v1:ppo",
            overrides=("learning_rate=1000", "max_grad_norm=null", "max_env_steps=250000"),
            cause="learning rate 1000 without gradient clipping: the weights blow up to nan",
            expected_rules=("non_finite_loss",), expected_key="learning_rate", expected_direction="decrease"),
    *_seeds("non_finite_reward_scale", fault_type="non_finite", seeds=range(1), config_id="CartPole-v1:ppo",
            overrides=("reward_scale=1e19", f"max_env_steps={FAULT_BUDGET}"),
            cause="reward_scale 1e19: squared value errors overflow float32 to inf",
            expected_rules=("non_finite_loss",), expected_key="reward_scale", expected_direction="decrease"),
    # The ratio may move only 0.05% from 1 before the gradient is cut: updates barely change the policy.
    *_seeds("clip_range_tiny", range(2), config_id="CartPole-v1:ppo",
            overrides=("clip_range=0.0005", f"max_env_steps={FAULT_BUDGET}"),
            cause="clip range far too small (0.0005 constant vs the preset 0.2 decaying)",
            expected_rules=("approx_kl_near_zero", "clip_range_too_small"),
            expected_key="clip_range", expected_direction="increase"),
    # Not yet in the corpus: too_many_epochs on LunarLander-v3:ppo (n_epochs=40, 400k env steps) costs
    # 10x the preset's update time, several minutes on 2 shared cores; not measured yet.
    # Not a config fault: the trainer process is SIGKILLed mid-run; run.json still says running with
    # a dead pid, which the reader reports as crashed. Never blame a config key for it.
    *_seeds("lunar_crashed", fault_type="crashed", seeds=range(1), config_id="LunarLander-v3:ppo", overrides=(),
            cause="trainer process killed with SIGKILL mid-run (not a config fault)",
            expected_rules=("run_crashed",), kind="crash"),
    # Off-policy faults in Stable-Baselines3 DQN runs (rules/offpolicy.py). The CartPole-v1:dqn preset
    # solves in ~25k env steps; faulty runs get 20k with its exploration schedule, so the planted
    # setting, not the budget, decides. learning_starts_late is judged against its own budget.
    *_seeds("dqn_target_rare", range(1), config_id="CartPole-v1:dqn",
            overrides=("target_update_interval=100000", "max_env_steps=20000"),
            cause="target network never copied (target_update_interval 100000 vs the preset's 10)",
            expected_rules=("target_updates_too_rare",),
            expected_key="target_update_interval", expected_direction="decrease"),
    *_seeds("dqn_learning_starts_late", range(1), config_id="CartPole-v1:dqn",
            overrides=("learning_starts=15000", "max_env_steps=20000"),
            cause="learning starts after 75% of the budget (learning_starts 15000 vs the preset's 1000)",
            expected_rules=("learning_starts_too_late",),
            expected_key="learning_starts", expected_direction="decrease"),
    *_seeds("dqn_explore_never", range(1), config_id="CartPole-v1:dqn",
            overrides=("exploration_final_eps=0.9", "exploration_initial_eps=1.0", "max_env_steps=20000"),
            cause="exploration never ends (final epsilon 0.9 vs the preset's 0.04)",
            expected_rules=("exploration_never_ends",),
            expected_key="exploration_final_eps", expected_direction="decrease"),
    *_seeds("dqn_buffer_small", range(1), config_id="CartPole-v1:dqn",
            overrides=("buffer_size=300", "max_env_steps=20000"),
            cause="replay buffer of 300 transitions (vs the preset's 100000): full at once, then forgets",
            expected_rules=("replay_buffer_too_small",),
            expected_key="buffer_size", expected_direction="increase"),
    *_seeds("dqn_explore_short", range(1), config_id="CartPole-v1:dqn",
            overrides=("exploration_fraction=0.0001", "exploration_final_eps=0.0", "max_env_steps=20000"),
            cause="no exploration (epsilon 0 after 2 env steps vs the preset's 8k-step anneal)",
            expected_rules=("exploration_ends_too_early",),
            expected_key="exploration_fraction", expected_direction="increase"),
]

# The crash case's trainer is SIGKILLed once metrics.csv has this many rows (LunarLander: 16k env
# steps each, so mid-run of a budget that solves at ~230k).
CRASH_AFTER_ROWS = 4


def _train(case: Case, scratch: Path) -> Path:
    cfg = resolve_config(case.config_id, list(case.overrides))
    return train(cfg, scratch, overrides=parse_overrides(list(case.overrides))).run_dir


def run_crash_case(case: Case, scratch: Path) -> Path:
    """Start the trainer in its own process and SIGKILL it mid-run; return its run folder.

    The process calls ``training.train`` directly (what ``gsolve train`` calls) so the fixture does
    not depend on the CLI's imports; a SIGKILL gives it no chance to write a final state.
    """
    runs = scratch / case.name
    runs.mkdir(parents=True)
    code = ("import sys; from pathlib import Path; from gymnasium_solver.config import resolve_config, "
            "parse_overrides; from gymnasium_solver.train.training import train; ov = sys.argv[3:]; "
            "train(resolve_config(sys.argv[1], ov), Path(sys.argv[2]), overrides=parse_overrides(ov))")
    proc = subprocess.Popen([sys.executable, "-c", code, case.config_id, str(runs), *case.overrides], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    # Kill once a few iterations are written (start-up under load can take longer than that).
    deadline = time.monotonic() + 120.0
    while time.monotonic() < deadline and proc.poll() is None:
        csvs = list(runs.glob(f"*/{rf.METRICS_CSV}"))
        if csvs and csvs[0].read_text().count("\n") > CRASH_AFTER_ROWS:
            break
        time.sleep(0.2)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    (run_dir,) = [d for d in runs.iterdir() if d.is_dir()]
    return run_dir


def _outcome(run_dir: Path) -> dict[str, object]:
    """What the run did, from its run.json (as written: a killed run still says 'running')."""
    info = rf.read_run_info(run_dir)
    return {"status": str(info.status), "stop_reason": None if info.stop_reason is None else str(info.stop_reason),
            "solved": info.solved, "env_steps": info.progress.env_steps,
            "best_eval": None if info.best_eval is None else round(info.best_eval.return_mean, 2),
            "reward_threshold": info.reward_threshold}


def _labels(case: Case, outcome: dict[str, object]) -> dict[str, object]:
    return {
        "case": case.name,
        "config_id": case.config_id,
        "overrides": list(case.overrides),
        "cause": case.cause,
        "fault_type": case.fault_type,
        "healthy": not case.expected_rules,
        "expected_rules": list(case.expected_rules),
        "expected_key": case.expected_key,
        "expected_direction": case.expected_direction,
        "outcome": outcome,
    }


def _write_labels(out: Path, labels: dict[str, object]) -> None:
    (out / "labels.json").write_text(json.dumps(labels, indent=2) + "\n", encoding="utf-8")


def run_case(case: Case, scratch: Path) -> Path:
    run_dir = run_crash_case(case, scratch) if case.kind == "crash" else _train(case, scratch)
    out = CORPUS / case.name
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    for name in KEEP:
        shutil.copy2(run_dir / name, out / name)
    _write_labels(out, _labels(case, _outcome(out)))
    return out


def relabel(case: Case) -> Path | None:
    """Rewrite an existing fixture's labels.json from CASES (fault type, expected fix) and its
    run.json (outcome) without re-running it; None when the fixture does not exist yet."""
    out = CORPUS / case.name
    if not (out / rf.RUN_JSON).is_file():
        return None
    _write_labels(out, _labels(case, _outcome(out)))
    return out


def main(argv: list[str]) -> int:
    only_labels = "--relabel" in argv
    argv = [a for a in argv if a != "--relabel"]
    chosen = [c for c in CASES if not argv or any(c.name.startswith(a) or c.fault_type == a for a in argv)]
    if not chosen:
        print(f"no case matches {argv}; cases: {', '.join(c.name for c in CASES)}", file=sys.stderr)
        return 2
    if only_labels:
        for case in chosen:
            print(f"{case.name:32s} {'relabelled' if relabel(case) else 'missing: run it first'}")
        return 0
    with tempfile.TemporaryDirectory(prefix="gsolve-corpus-") as tmp:
        for case in chosen:
            t0 = time.perf_counter()
            out = run_case(case, Path(tmp))
            labels = json.loads((out / "labels.json").read_text())
            print(f"{case.name:32s} {labels['outcome']} {time.perf_counter() - t0:.1f}s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
