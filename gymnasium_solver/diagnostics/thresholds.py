"""Every threshold the diagnostic rules use, in one place, each with where it comes from.

A threshold is a :class:`Threshold` (value, what it means, source). Sources are the literature
and library defaults practitioners calibrate against, then checked on real runs of our own trainer
(the planted-fault corpus in ``tests/fixtures/corpus``; measured values in ``docs/diagnostics.md``).
Abbreviations used in ``source``:

- PPO paper: Schulman et al. 2017, "Proximal Policy Optimization Algorithms", arXiv:1707.06347.
- Spinning Up: OpenAI Spinning Up, PPO documentation (``target_kl`` 0.01-0.05).
- SB3 docs: Stable-Baselines3 PPO documentation and ``common/utils.explained_variance``.
- 37 details: Huang et al. 2022, "The 37 Implementation Details of Proximal Policy Optimization",
  ICLR blog track (approx_kl with the (r-1)-log r estimator, clipfrac, early stopping).
- What matters: Andrychowicz et al. 2021, "What Matters in On-Policy RL", ICLR.
- Ours: measured on our corpus (healthy CartPole-v1 PPO runs, several seeds).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Threshold:
    name: str
    value: float
    meaning: str
    source: str


def _t(name: str, value: float, meaning: str, source: str) -> Threshold:
    t = Threshold(name, value, meaning, source)
    ALL[name] = t
    return t


ALL: dict[str, Threshold] = {}

# --- windows -------------------------------------------------------------------------------
MIN_UPDATES = _t(
    "min_updates", 8, "fewer updates than this: optimisation rules are not evaluated (too little data)",
    "Ours: the first updates of a healthy run are transient",
)
LATE_FRACTION = _t(
    "late_fraction", 0.5, "'late' window = the last half of the updates (rules on sustained behaviour)",
    "Ours",
)

# --- approximate KL (PPO) ------------------------------------------------------------------
APPROX_KL_HIGH = _t(
    "approx_kl_high", 0.05,
    "median approx_kl per update above this is a policy moving too far per update",
    "Spinning Up target_kl upper end 0.05; PPO paper adaptive-KL target 0.01; "
    "Ours: healthy runs' median 0.003-0.019",
)
APPROX_KL_LOW = _t(
    "approx_kl_low", 1e-4,
    "median approx_kl below this over the run: the policy barely changes (nothing is learning)",
    "PPO paper (target 0.01, 100x below is negligible movement); Ours: healthy medians 0.003-0.019, "
    "lr=1e-5 runs ~1e-6",
)
CLIP_FRACTION_HIGH = _t(
    "clip_fraction_high", 0.3,
    "median clip fraction above this: most samples hit the clip, updates are too large",
    "37 details (clipfrac ~0.1-0.2 in healthy Atari/MuJoCo runs); Ours: healthy medians 0.03-0.17",
)
CLIP_FRACTION_LOW = _t(
    "clip_fraction_low", 1e-3,
    "median clip fraction below this together with tiny KL: updates too small to matter",
    "37 details; Ours",
)
EPOCHS_CUT_FRACTION = _t(
    "epochs_cut_fraction", 0.5,
    "median epochs_completed / n_epochs below this: target-KL early stopping cuts most epochs",
    "37 details (early stopping on approx_kl, implementation detail 'target_kl'); SB3 docs",
)

# --- value function ------------------------------------------------------------------------
EXPLAINED_VARIANCE_LOW = _t(
    "explained_variance_low", 0.2,
    "late median explained variance below this: the value function predicts little of the returns",
    "SB3 docs (ev = 0: as good as predicting zero, 1: perfect, < 0: worse); "
    "Ours: healthy PPO runs with >= 20 updates: late median 0.945-0.999; vf_coef=0 runs -1.2..0.04",
)
EXPLAINED_VARIANCE_MIN_UPDATES = _t(
    "explained_variance_min_updates", 40,
    "the low-explained-variance rule needs this many updates (unless vf_coef starves the critic): "
    "early in a healthy run, with short episodes, explained variance is legitimately low",
    "Ours: healthy CartPole runs sit at 0-0.6 for their first ~20 updates, then > 0.9",
)
EXPLAINED_VARIANCE_COLLAPSE_FROM = _t(
    "explained_variance_collapse_from", 0.7,
    "explained variance peaked above this ...",
    "Ours",
)
EXPLAINED_VARIANCE_COLLAPSE_TO = _t(
    "explained_variance_collapse_to", 0.2,
    "... and its late median fell below this: the value function collapsed",
    "Ours",
)
VALUE_LOSS_GROWTH = _t(
    "value_loss_growth", 100.0,
    "late median value loss more than this many times the early median: value loss exploding",
    "Ours: healthy runs 0.03-10x (the loss follows the return scale)",
)

# --- gradients -----------------------------------------------------------------------------
GRAD_NORM_GROWTH = _t(
    "grad_norm_growth", 20.0,
    "late median gradient norm more than this many times the early median: gradient explosion",
    "Ours: healthy runs 0.4-10x; max_grad_norm 0.5 is the SB3/37-details default clip",
)

# --- entropy -------------------------------------------------------------------------------
ENTROPY_COLLAPSE = _t(
    "entropy_collapse", 0.1,
    "entropy below this fraction of the action space's maximum (log n) before the run is solved",
    "What matters (entropy and exploration); Ours: healthy runs' late entropy 43-83% of log 2, "
    "lr>=0.05 runs ~0%",
)
EARLY_SPIKE_KL = _t(
    "early_spike_kl", 0.5,
    "an entropy collapse is blamed on the learning rate when approx_kl exceeded this in the first "
    "quarter of the updates (or the clip fraction exceeded early_spike_clip)",
    "Ours: healthy runs' early max approx_kl 0.014-0.15; learning_rate >= 0.05 runs 2-14",
)
EARLY_SPIKE_CLIP = _t(
    "early_spike_clip", 0.6,
    "see early_spike_kl: early max clip fraction above this is an oversized update",
    "Ours: healthy runs' early max clip fraction 0.10-0.46; learning_rate >= 0.05 runs 0.69-0.93",
)
ENTROPY_MIN_UPDATES = _t(
    "entropy_min_updates", 20,
    "'entropy never decreases' needs this many updates: the first updates of a healthy run move "
    "the entropy little",
    "Ours: budget-limited runs replayed live (10 updates) still had > 90% of log 2",
)
ENTROPY_NO_DECREASE = _t(
    "entropy_no_decrease", 0.975,
    "late entropy still above this fraction of the maximum (or of the initial entropy for Box): "
    "the policy never committed",
    "Ours: healthy runs with >= 20 updates end at 43-83% of the reference; healthy Acrobot runs "
    "solve within 6-11 updates at up to 99.5% of log 3 (entropy_min_updates keeps them out); "
    "ent_coef=10 and lr=1e-5/1e-6 runs 98.4-100%",
)

# --- returns -------------------------------------------------------------------------------
TREND_MIN_POINTS = _t(
    "trend_min_points", 5, "fewer points than this: the trend is 'unknown'", "Ours",
)
TREND_MATERIAL_FRACTION = _t(
    "trend_material_fraction", 0.05,
    "a trend counts only if the fitted change over its window exceeds this fraction of the "
    "threshold (or of the return range when there is no threshold)",
    "Ours: noise of eval returns on CartPole is ~5% of 475",
)
COLLAPSE_PEAK_FRACTION = _t(
    "collapse_peak_fraction", 0.5,
    "return collapse: the last evaluations fell below this fraction of the peak evaluation",
    "Ours",
)
COLLAPSE_MIN_GAIN = _t(
    "collapse_min_gain", 0.2,
    "return collapse needs the peak (of the 3-evaluation rolling median, so one lucky evaluation is "
    "not a peak) to have gained this fraction of the threshold over the first evaluation",
    "Ours: deterministic CartPole evaluations of an untrained policy swing by ~100",
)
NEAR_SOLVED_FRACTION = _t(
    "near_solved_fraction", 0.9,
    "within this fraction of the threshold counts as close to solving (budget rule); for a negative "
    "threshold T the bar is T - 0.1|T| (e.g. -110 for -100)",
    "Ours",
)
EVAL_TRAIN_GAP_FRACTION = _t(
    "eval_train_gap_fraction", 0.5,
    "train return solved while the best eval is below this fraction of the threshold (and reverse)",
    "Ours",
)

LIVE_MIN_PROGRESS = _t(
    "live_min_progress", 0.2,
    "a live run below this fraction of its budget is not judged on 'has not learned yet' rules "
    "(plateau, entropy never decreasing, KL near zero, explained variance low)",
    "Ours: replaying healthy corpus runs as live runs, these rules fired in the first ~5-10% of "
    "the budget (REINFORCE entropy falls slowly) and never later",
)

# --- throughput ----------------------------------------------------------------------------
FPS_DROP = _t(
    "fps_drop", 0.5,
    "late median fps below this fraction of the early median: throughput dropped",
    "Ours: healthy runs 0.54-2.9x on this shared 2-core machine; info severity only",
)

# --- suggestions ---------------------------------------------------------------------------
LR_STEP = _t("lr_step", 10.0, "learning-rate suggestions move by this factor", "What matters (lr ~3e-4)")
LR_SANE_MAX = _t(
    "lr_sane_max", 3e-3,
    "a 'learning rate too high' suggestion never stays above this (10x the usual Adam 3e-4)",
    "What matters (Adam lr ~3e-4 for PPO); SB3 PPO default 3e-4",
)
LR_SANE_MIN = _t(
    "lr_sane_min", 3e-4,
    "a 'learning rate too low' suggestion never stays below this (the usual Adam rate for PPO)",
    "What matters; SB3 PPO default 3e-4",
)
BUDGET_STEP = _t("budget_step", 3.0, "max_env_steps suggestions multiply the budget by this", "Ours")
TARGET_KL_SUGGESTED = _t(
    "target_kl_suggested", 0.03, "target_kl suggested when early stopping cuts most epochs",
    "Spinning Up (0.01-0.05); 37 details",
)
VF_COEF_SUGGESTED = _t("vf_coef_suggested", 0.5, "vf_coef suggested for a starved value function", "SB3 docs default")

# --- settings whose size alone explains a failure (rules/config_checks.py) -------------------
GRAD_CLIP_BINDING = _t(
    "grad_clip_binding", 20.0,
    "median pre-clip gradient norm above this many times max_grad_norm: the clip rescales every update",
    "Ours: healthy PPO presets run at 3-17x (CartPole 0.5 clip, norms 6.6-8.5); the clip is meant for spikes",
)
ADAM_STEP_FRACTION = _t(
    "adam_step_fraction", 0.5,
    "clipped per-parameter gradient g/sqrt(n_params) so small that Adam's step g/(g+eps) falls below this "
    "fraction of a normal step: the clip throttles learning, not just spikes",
    "Adam (Kingma & Ba 2015) update m/(sqrt(v)+eps); eps 1e-5 in our PPO (ppo2), 1e-8 in REINFORCE",
)
HORIZON_MIN_STEPS = _t(
    "horizon_min_steps", 5.0,
    "effective horizon 1/(1-gamma) at or below this many steps (with episodes at least 10x longer): "
    "the agent only values the next few rewards",
    "What matters (gamma 0.99 default, 0.9-0.999 tuned); Ours: presets use 10-1000 steps",
)
HORIZON_PRESET_RATIO = _t(
    "horizon_preset_ratio", 0.2, "horizon below this fraction of the preset's: far shorter than the task needs",
    "Ours",
)
NETWORK_MIN_WIDTH = _t(
    "network_min_width", 4, "a hidden layer this narrow or narrower cannot represent the policy or value",
    "Ours: presets use 64 units; What matters (64-256)",
)
NETWORK_PRESET_RATIO = _t(
    "network_preset_ratio", 0.125, "narrowest layer below this fraction of the preset's", "Ours",
)
ACTION_STD_HIGH = _t(
    "action_std_high", 3.0,
    "action std above this many half-ranges of a Box action space: almost every sampled action is out of "
    "range (clipped), so the gradient carries no signal about the mean",
    "Ours: presets start at std 1 for half-ranges of 1-2 (0.5-1.0)",
)
ACTION_STD_LOW = _t(
    "action_std_low", 0.03,
    "initial action std below this fraction of the half-range: nearly deterministic from the start, no "
    "exploration",
    "Ours; SB3 log_std_init default 0 (std 1)",
)
CLIP_RANGE_MIN = _t(
    "clip_range_min", 0.02, "PPO clip range below this: the ratio can barely move per update",
    "PPO paper (0.1-0.3); SB3 default 0.2",
)
BAND_RATIO_HIGH = _t(
    "band_ratio_high", 3.0,
    "a metric's median this many times the highest solved reference run's over the same env steps: "
    "far outside what works",
    "Ours: solved runs of one preset spread about 2-3x across seeds",
)
REINFORCE_LR_MAX = _t(
    "reinforce_lr_max", 0.05,
    "a REINFORCE learning rate above this, with an entropy collapse, is too high (no KL to show it)",
    "Ours: presets use 0.006; Adam rates above ~0.05 move a 64-unit policy to determinism in a few updates",
)
A2C_LR_MAX = _t(
    "a2c_lr_max", 0.01,
    "an A2C (RMSprop) learning rate above this, with an entropy collapse, is too high (no KL to show it)",
    "RL Zoo a2c.yml (7e-4 to 8.3e-4 for classic control and Box2D); Ours: CartPole-v1:a2c uses 3.5e-3",
)

# --- off-policy (Stable-Baselines3 DQN / SAC / TD3 runs) --------------------------------------
# Sources: DQN paper: Mnih et al. 2015, "Human-level control through deep RL" (epsilon annealed over
# 1M of 50M frames, replay 1M, target every 10k updates); SB3 docs (DQN exploration_fraction 0.1,
# learning_starts 100, SAC/TD3 tau 0.005); RL Zoo: rl_zoo3 hyperparams/dqn.yml, sac.yml.
EXPLORATION_MIN_FRACTION = _t(
    "exploration_min_fraction", 0.01,
    "epsilon reaches its final value within this fraction of the budget: too little random exploration "
    "before the policy commits",
    "SB3 docs (exploration_fraction 0.1 default); RL Zoo (0.06-0.2 tuned)",
)
EXPLORATION_HIGH = _t(
    "exploration_high", 0.3,
    "epsilon still above this over the late half of the run: most actions stay random, so the greedy "
    "policy's returns are never what training sees",
    "DQN paper and SB3 docs (final epsilon 0.01-0.1); RL Zoo (0.04-0.11)",
)
TARGET_COPIES_MIN = _t(
    "target_copies_min", 10,
    "fewer target-network copies than this over the budget: the bootstrapped targets barely move",
    "DQN paper (5,000 copies over 50M frames); RL Zoo CartPole (target every 10 steps of 5e4)",
)
TARGET_UPDATES_PER_COPY_MIN = _t(
    "target_updates_per_copy_min", 1.0,
    "fewer gradient updates per hard target copy than this (or tau above 0.5): the target is the online "
    "network, so the regression target moves with every step",
    "DQN paper (10,000 updates per copy); SB3 docs (soft tau 0.005)",
)
Q_DIVERGENCE_FACTOR = _t(
    "q_divergence_factor", 10.0,
    "|mean predicted Q| above this many times the largest return seen (episode or evaluation): the "
    "Q-values no longer estimate any return the policy can get",
    "Ours: healthy CartPole DQN q_mean stays below the best return (discounted); van Hasselt et al. 2018 "
    "'Deep RL and the deadly triad' (divergence = unbounded Q)",
)
REPLAY_FILLED_EARLY = _t(
    "replay_filled_early", 0.05,
    "the replay buffer is full within this fraction of the budget: from then on it forgets all but the "
    "most recent experience",
    "DQN paper (replay 1M of 50M frames fills at 2%, but holds ~1000 episodes); RL Zoo (buffers 5e4-1e6)",
)
REPLAY_MIN_TRANSITIONS = _t(
    "replay_min_transitions", 5000,
    "a replay buffer of fewer transitions than this (and full early) holds only a few episodes",
    "RL Zoo (smallest tuned buffer 1e4, MountainCar); SB3 docs (1e6 default)",
)
LEARNING_STARTS_LATE = _t(
    "learning_starts_late", 0.3,
    "no gradient update before this fraction of the budget: most of the budget is spent acting randomly",
    "SB3 docs (learning_starts 100 default); RL Zoo (0-10,000 of 2e4-1e6 budgets)",
)
TARGET_HORIZONS = _t(
    "target_horizons", 2.0,
    "a DQN budget gives at least this many discount horizons 1/(1-gamma) of distinct target networks after "
    "learning_starts (one target period = max(target_update_interval, train_freq x n_envs) env steps, since SB3 "
    "trains once per train_freq and every copy in between copies the same weights): each target network backs "
    "the values up by one step, so fewer periods leave the Q-values short of the horizon",
    "Fitted Q-iteration (Ernst et al. 2005: k iterations = a k-step horizon); RL Zoo dqn.yml budgets give 2-4 "
    "horizons (CartPole 5e4 steps = 195 periods of 256 at H=100; LunarLander 1e5 = 400 of 250); Ours: "
    "CartPole-v1:dqn solved at 26,624-34,816 env steps (5 seeds) with periods of 256",
)
Q_STILL_RISING = _t(
    "q_still_rising", 0.1,
    "mean Q over the last half of the run rose by more than this fraction of its final level (Theil-Sen "
    "slope, 95% interval above 0): the bootstrapped values were still propagating when the budget ended",
    "Ours: the off-policy corpus runs cut at 20k steps had mean Q 19-63 and rising (CartPole's discounted "
    "ceiling ~99); a run whose target never moved stayed at 1.17",
)
BUDGET_MAX_FACTOR = _t(
    "budget_max_factor", 10.0,
    "a budget suggestion never exceeds this many times the run's budget (a projection from a slow slope "
    "can be arbitrarily far)",
    "Ours",
)

# --- mechanisms named from the run's own settings (rules/mechanisms.py): no preset needed --------
VF_COEF_MIN = _t(
    "vf_coef_min", 1e-3,
    "an A2C vf_coef below this: the value loss reaches the gradient 500x weaker than SB3's default, so the "
    "critic stays at its initialisation",
    "SB3 docs (A2C/PPO vf_coef 0.5); RL Zoo (0.2-1)",
)
VALUE_CLIP_ERROR_FRACTION = _t(
    "value_clip_error_fraction", 0.01,
    "clip_range_vf below this fraction of the critic's typical early error (sqrt of the value loss): each "
    "sample's value gradient is cut after a sliver of the way to its target",
    "PPO's value clip (ppo2; 37 details: clip_range_vf = clip_range 0.2 with returns of order 1-10, i.e. 2-20% "
    "of the errors); Ours: clip_range_vf 0.001 against errors of ~4 left Pendulum PPO unsolved in 300k env steps; "
    "without it the same run solved at 106k",
)
REWARD_CLIP_RATIO = _t(
    "reward_clip_ratio", 10.0,
    "the typical |reward| per step (after reward_scale) above this many times reward_clip: almost every "
    "reward is clipped to +-reward_clip, so good and bad steps look alike",
    "DQN paper (clip 1 for Atari rewards of about 1 per scoring step); Ours: every preset's ratio <= 1",
)
VALUE_SCALE_MAX = _t(
    "value_scale_max", 200.0,
    "reward per step x reward_scale x discount horizon above this: value targets in the hundreds or "
    "thousands, whose squared error swamps the policy's gradient (global grad-norm clip, shared Adam)",
    "Ours: healthy preset and corpus runs 2-50 (CartPole 50, Acrobot 10, LunarLander <= 14, Pendulum 6-24); "
    "SB3's VecNormalize keeps returns near 1-10",
)
VALUE_SCALE_TARGET = _t(
    "value_scale_target", 20.0, "the value scale a reward_scale suggestion aims for", "Ours (healthy 2-50)",
)
PPO_STEPS_PER_ROLLOUT_MIN = _t(
    "ppo_steps_per_rollout_min", 2,
    "PPO gradient steps per rollout (n_epochs x minibatches) at or below this: each sample is used once or "
    "twice, losing what PPO's clipped objective exists for (many safe steps on the same data)",
    "PPO paper (3-10 epochs of 32-64 minibatches); SB3 default 10 epochs x 32 minibatches",
)
REPLAY_RATIO_MIN_DQN = _t(
    "replay_ratio_min_dqn", 1 / 32,
    "DQN/QR-DQN gradient steps per env step (gradient_steps / (train_freq x n_envs)) below this (8x below SB3's "
    "default): each transition is learned from too rarely and the network barely trains over the budget",
    "SB3 DQN default 1/4 (train_freq 4, gradient_steps 1); RL Zoo classic control 0.5-1",
)
REPLAY_RATIO_MIN_AC = _t(
    "replay_ratio_min_ac", 1 / 8,
    "SAC/TD3/TQC gradient steps per env step below this (8x below SB3's default)",
    "SB3 SAC/TD3 default 1 (train_freq 1, gradient_steps 1); RL Zoo Pendulum 1; Ours: Pendulum-v1:sac 0.5",
)
REPLAY_RATIO_SUGGESTED = _t(
    "replay_ratio_suggested", 0.5, "gradient steps per env step suggested for a replay ratio near zero",
    "RL Zoo CartPole/LunarLander DQN (train_freq 256 / gradient_steps 128; 4 / -1)",
)
OFFPOLICY_LR_MIN = _t(
    "offpolicy_lr_min", 3e-5,
    "an off-policy (DQN/SAC/TD3/TQC) or A2C learning rate below this: 3x below the lowest the RL Zoo tunes "
    "for any of them, so the networks barely move in a normal budget",
    "RL Zoo hyperparams (dqn 1e-4 Atari to 6.3e-3; sac/td3 3e-4 to 1e-3; a2c 7e-4)",
)
TARGET_LAG_FRACTION = _t(
    "target_lag_fraction", 0.25,
    "a soft-updated target network's half-life (ln 0.5 / ln(1 - tau) target updates) longer than this "
    "fraction of the run's target updates: the targets trail the critic by a large part of the run",
    "SB3 default tau 0.005 (half-life 138 updates, ~1% of a 10k-step run); TD3 and SAC papers (tau 0.005)",
)
ACTOR_UPDATES_MIN = _t(
    "actor_updates_min", 100,
    "TD3 actor updates in the run (gradient steps / policy_delay) below this: the deterministic policy "
    "stays near its random initialisation",
    "TD3 paper (policy_delay 2); Ours: Pendulum-v1:td3 solves after ~3,000 actor updates",
)
GAE_CREDIT_MIN = _t(
    "gae_credit_min", 2.0,
    "a GAE credit horizon 1/(1 - gamma x lambda) below this many steps: advantages are one-step TD errors "
    "and rest entirely on a critic that starts out wrong",
    "GAE paper (Schulman et al. 2016: lambda 0.92-0.99); RL Zoo's lowest lambda 0.8 (4.6 steps at gamma 0.98)",
)
A2C_UPDATES_MIN = _t(
    "a2c_updates_min", 50,
    "A2C updates in the whole budget (max_env_steps / (n_envs x n_steps)) below this, with a rollout longer "
    "than A2C's usual: one gradient step per huge rollout",
    "SB3 A2C default n_steps 5 (Mnih et al. 2016: 5-step rollouts); Ours: CartPole-v1:a2c solves after ~32 updates",
)
A2C_N_STEPS_MAX = _t(
    "a2c_n_steps_max", 32, "A2C rollouts per env longer than this are unusual (the suggestion stays within it)",
    "SB3 default 5; RL Zoo a2c.yml 5-32 for classic control",
)
TEMPERATURE_RUNAWAY = _t(
    "temperature_runaway", 100.0,
    "SAC/TQC's learned entropy coefficient grew by more than this factor over the run: the entropy never meets "
    "its target, and the soft Q-values grow with the temperature",
    "Haarnoja et al. 2018 (SAC with learned temperature: alpha falls as the policy reaches its target); Ours: "
    "healthy Pendulum SAC runs' ent_coef falls 0.74 -> 0.15",
)
ENT_COEF_TUNED_MAX = _t(
    "ent_coef_tuned_max", 0.05,
    "an entropy bonus above this can outweigh the reward; at or below it (where tuned configs sit) a policy "
    "that stays near uniform is not updating enough",
    "RL Zoo ppo.yml/a2c.yml (ent_coef 0-0.01 for classic control and Box2D, 0.01 Atari); SB3 default 0",
)
CLIP_RANGE_MAX = _t(
    "clip_range_max", 0.5,
    "a PPO clip range above this hardly bounds an update (ratios up to 1.5x or more pass unclipped)",
    "PPO paper (0.1-0.3 tried, 0.2 best); RL Zoo ppo.yml (at most 0.4); Ours: CartPole-v1:ppo starts at 0.386",
)
ENTROPY_BONUS_REWARD_RATIO = _t(
    "entropy_bonus_reward_ratio", 0.5,
    "a fixed SAC/TQC entropy bonus (ent_coef x action dims x log 2, the most a squashed policy earns per step) "
    "above this fraction of the typical |reward| per step: randomness pays about as well as the task",
    "Haarnoja et al. 2018 (the temperature sets the reward/entropy trade-off; the learned one falls to ~0.1-0.2 "
    "on Pendulum); Ours: healthy Pendulum SAC ent_coef 0.15 x log 2 = 0.1 vs ~6 per step",
)
PPO_N_STEPS_MAX = _t(
    "ppo_n_steps_max", 2048, "PPO rollouts per env longer than this are unusual (the suggestion stays within it)",
    "SB3 PPO default 2048 (the longest of the PPO paper's and the RL Zoo's usual 128-2048)",
)
PPO_UPDATES_MIN = _t(
    "ppo_updates_min", 10,
    "PPO updates in the whole budget (max_env_steps / (n_envs x n_steps)) below this, with a rollout longer than "
    "PPO's usual: the run ends before the policy has been updated enough to show anything",
    "Ours: every PPO preset's budget holds >= 28 updates; min_updates (8) is what the trend rules need",
)
OFFPOLICY_LR_SUGGESTED = _t(
    "offpolicy_lr_suggested", 1e-3,
    "the learning rate suggested for an off-policy or A2C run whose rate is below anything tuned",
    "RL Zoo classic control: dqn 6.3e-4 to 2.3e-3, sac/td3 1e-3, a2c 7e-4; SB3 TD3 default 1e-3 (3e-4, "
    "the PPO default, left a CartPole DQN run with lr 1e-5 unsolved in 64k steps; measured stop 17)",
)
EXPLORATION_INITIAL_MIN = _t(
    "exploration_initial_min", 0.5,
    "a DQN exploration_initial_eps below this: most actions are greedy on an untrained Q-network from the start",
    "SB3 default and every RL Zoo dqn.yml entry start at 1.0 (Mnih et al. 2015: 1.0 annealed to 0.1)",
)
HORIZON_EPISODE_FRACTION = _t(
    "horizon_episode_fraction", 1 / 30,
    "a discount horizon 1/(1-gamma) below this fraction of episodes that all run to the time limit: the agent "
    "cannot value reaching the end it has never seen (Acrobot's goal, a landing)",
    "RL Zoo's shortest horizon on a time-limited task: Pendulum PPO gamma 0.9 (10 steps of 200 = 1/20); Ours: "
    "Acrobot REINFORCE at gamma 0.9 (10 of 500) never reached the goal in 160k env steps, at 0.99 it did",
)
TIME_LIMITED_FRACTION = _t(
    "time_limited_fraction", 0.95,
    "every late episode-length mean at least this fraction of the longest: episodes run to the time limit",
    "Ours (training means over 100 episodes: a few early terminations move them by < 5%)",
)
MINIBATCH_MIN = _t(
    "minibatch_min", 8,
    "a replay minibatch (DQN/SAC/TD3/TQC batch_size) below this: each gradient step follows a handful of "
    "transitions, so the updates are mostly noise",
    "RL Zoo (smallest tuned batch 32, Atari DQN; 64-256 for classic control); SB3 defaults (DQN 32, SAC/TD3 256)",
)
EPISODES_PER_UPDATE_MIN = _t(
    "episodes_per_update_min", 4,
    "REINFORCE updates from fewer episodes than this are mostly noise: a mismatch with n_envs is fixed by "
    "raising the episodes (up to 16 envs), not by dropping envs",
    "Williams 1992 / Sutton & Barto 13.3 (a Monte-Carlo gradient's variance falls with the episodes averaged); "
    "Ours: REINFORCE presets use 8",
)
RETURN_FIT_MIN_SPREAD = _t(
    "return_fit_min_spread", 5,
    "episode-length means must span at least this many steps before returns are read as a function of length",
    "Ours (fewer points of a line fit anything)",
)
RETURN_FIT_TOLERANCE = _t(
    "return_fit_tolerance", 0.01,
    "returns count as (reward per step) x length + constant when no training-return mean is further than this "
    "fraction of their range from the fitted line",
    "Ours: CartPole fits exactly (+1 per step); Acrobot within 1 step (-1 per step, 0 on the goal step)",
)
TIME_LIMIT_EVALS = _t(
    "time_limit_evals", 3,
    "evaluations whose mean episode length equals the longest seen (every episode ran exactly that long) that "
    "mark it as the time limit",
    "Ours: an evaluation mean of 10 episodes lands exactly on one length only when they all hit the same cap",
)
REINFORCE_LR_MIN = _t(
    "reinforce_lr_min", 1e-4,
    "a REINFORCE (Adam) learning rate below this: 60x below our presets' and 100x below PyTorch's REINFORCE "
    "example's, so the policy barely moves over a normal budget",
    "Ours: REINFORCE presets use 6e-3; PyTorch examples/reinforcement_learning/reinforce.py uses 1e-2",
)
REINFORCE_LR_SUGGESTED = _t(
    "reinforce_lr_suggested", 3e-3,
    "the learning rate suggested for a REINFORCE run whose rate is below anything tuned",
    "between our presets' 6e-3 and the usual Adam 1e-3",
)
