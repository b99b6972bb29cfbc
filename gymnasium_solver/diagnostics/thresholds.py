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
MIN_UPDATES_ONE_STEP = _t(
    "min_updates_one_step", 30,
    "fewer updates than this in a whole unsolved budget, for algorithms that take one gradient step per update "
    "(A2C, REINFORCE): the budget gave the learner too few steps to learn, however much data each one saw",
    "Ours: the tuned CartPole-v1:reinforce (8 episodes per update) solved its reference seed 100 after 32 updates",
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
GREEDY_NEAR_TIES = _t(
    "greedy_near_ties", 0.8,
    "late entropy above this fraction of log(n) while the sampled policy's return reaches the threshold and the "
    "greedy one's does not: no action holds much more than half the probability, so the argmax picks among near-ties",
    "Ours: heldout91 c08 ended at 90-92% of log 3; a (0.7, 0.15, 0.15) policy is at 74%",
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
RARE_REWARD_FRACTION = _t(
    "rare_reward_fraction", 0.25,
    "reward rarely found: the training return's best window mean got less than this fraction of the way from the "
    "evaluations' constant value to the threshold",
    "Ours: a new user's MiniGrid-Empty-16x16 A2C runs at 20,000 env steps (best windows 5% and 20% of the way, every "
    "evaluation 0), chosen by hand, not tuned on a fault set: a run that is learning passes a quarter of the way in its "
    "training windows before its greedy evaluations all stay at the floor",
)
RARE_REWARD_MIN_EPISODES = _t(
    "rare_reward_min_episodes", 100,
    "reward rarely found: fewer training episodes than this in the whole run, so a budget with room for this many "
    "episodes of the length they ran is suggested too",
    "Ours: one window of rollout/ep_return_mean (the last 100 episodes, SB3's ep_info_buffer)",
)
COLLAPSE_PEAK_FRACTION = _t(
    "collapse_peak_fraction", 0.5,
    "return collapse: the last evaluations fell below this fraction of the peak evaluation",
    "Ours",
)
COLLAPSE_NOISE_ALPHA = _t(
    "collapse_noise_alpha", 0.05,
    "return collapse: the drop from the peak evaluations to the last ones must be significant at this level "
    "(one-sided Welch t-test over the evaluation episodes, divided by the number of evaluations the peak was "
    "the best of), or it is evaluation noise",
    "Ours: the usual 5% level with a Bonferroni correction, chosen by hand, not tuned on a fault set (a new user's "
    "Blackjack-v1 PPO run, returns -1/0/+1, had 10-episode evaluations swing from -0.7 to 0.7 with no trend)",
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
HORIZON_MYOPIC_STEPS = _t(
    "horizon_myopic_steps", 2.0,
    "effective horizon 1/(1-gamma) at or below this many steps (gamma <= 0.5), with episodes at least 3 horizons "
    "long: a reward k steps ahead counts gamma^k, under 1/8 of its value three steps out, so a goal that pays at "
    "the end of a short episode (a gridworld) is invisible from its start",
    "What matters (gamma 0.99 default, 0.9-0.999 tuned); Ours: no preset or RL Zoo entry goes below 0.9",
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
    "Ours: log_std_init 0 starts at std 1 without gSDE (0.5-1x half-ranges of 1-2); with gSDE the std is "
    "exp(log_std_init) x the features' scale: Pendulum-v1:ppo logs 3.3-3.7 at the start (1.6-1.9x its half-range 2)",
)
ACTION_STD_LOW = _t(
    "action_std_low", 0.03,
    "initial action std below this fraction of the half-range: nearly deterministic from the start, no "
    "exploration",
    "Ours; SB3 log_std_init default 0 (std 1 without gSDE, exp(0) x the features' scale with it)",
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
    "RL Zoo a2c.yml (7e-4 to 8.3e-4 for classic control and Box2D); Ours: CartPole-v1:a2c uses 1.6e-3",
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
    "learning_starts (one target period = max(target_update_interval / tau, train_freq x n_envs) env steps, since SB3 "
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
Q_NEGLIGIBLE = _t(
    "q_negligible", 0.1,
    "a mean Q still rising at its late slope for budget_max_factor x the budget would stay below this fraction of "
    "the values the run's returns imply (late median return, discounted over the shorter of the horizon and the "
    "episode): the values are not learning, so the run is not 'still learning' however its Q rises relative to "
    "its own near-zero level",
    "Ours: a QR-DQN with gradients clipped to 1e-6 (heldout49 c06, in-sample) rose from Q 0.054 to 0.080 against "
    "returns of ~22; every other rising Q of the corpus and held-out sets projects past 0.4x its returns' scale",
)
BUDGET_MAX_FACTOR = _t(
    "budget_max_factor", 10.0,
    "a budget suggestion never exceeds this many times the run's budget (a projection from a slow slope "
    "can be arbitrarily far)",
    "Ours",
)

# The bounds the settings rules size a setting against are in setting_bounds.py, which registers them
# in ALL when it is imported (the rules import it, so a loaded diagnosis has every threshold in ALL).
