"""The bounds the settings rules (rules/onpolicy_settings.py, rules/offpolicy_settings.py and the
settings checks of the older rule modules) size a run's settings against, each with its source: what
lets the diagnosis name a mechanism where there is no preset to compare with. Registered in
thresholds.ALL with the others when this module is imported (same Threshold type, same table in
docs/diagnostics.md); thresholds.py does not import it back, so there is no import cycle."""

from __future__ import annotations

from gymnasium_solver.diagnostics.thresholds import _t

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
VALUE_LOSS_MAX = _t(
    "value_loss_max", 1000.0,
    "an actor-critic's late median value loss above this: the critic misses its targets by ~30 reward units or "
    "more, and its squared error swamps the policy's gradient (one global grad-norm clip, one optimiser)",
    "Ours: healthy PPO and A2C runs of the corpus and blind sets <= 60, every other fault <= 560; above 1,000 "
    "only runs whose rewards were scaled up 10-1000x (heldout h08, heldout17 q06, heldout42 c02, heldout84 c03)",
)
REWARD_SCALE_SHRINKS = _t(
    "reward_scale_shrinks", 0.01,
    "an A2C or REINFORCE reward_scale at or below this with advantages not normalised, and a value scale (reward "
    "per step x reward_scale x horizon) under value_scale_small: the policy gradient is the advantages times the "
    "log-probability's gradient, so it shrinks with the rewards (RMSprop and Adam rescale it only down to their "
    "epsilon, and not against an entropy bonus or the critic's share)",
    "SB3 A2C (normalize_advantage=False by default); Ours: healthy preset and corpus runs' value scale 2-50",
)
VALUE_SCALE_SMALL = _t(
    "value_scale_small", 0.1,
    "a value scale below this with reward_scale <= reward_scale_shrinks: the advantages, and the policy gradient with them, "
    "are too small to move the policy in a normal budget",
    "Ours: healthy preset and corpus runs 2-50 (20x above this)",
)
ACTION_NOISE_MAX = _t(
    "action_noise_max", 1.0,
    "a TD3 action_noise_std (a fraction of the action half-range) at or above this: a third or more of the exploring "
    "actions are clipped to a bound, so the replay buffer holds bang-bang actions and the critic learns next to "
    "nothing about the policy's own",
    "TD3 paper and SB3/RL Zoo (0.1 of the range; Zoo entries 0.1-0.5)",
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
    "SB3 A2C default n_steps 5 (Mnih et al. 2016: 5-step rollouts); Ours: the CartPole-v1:a2c preset of "
    "2026-11-26 solved after ~47 updates (median 6,016 env steps of 128-step rollouts)",
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
    "PPO paper (0.1-0.3 tried, 0.2 best); RL Zoo ppo.yml (at most 0.4); Ours: CartPole-v1:ppo starts at 0.304",
)
ENTROPY_BONUS_REWARD_RATIO = _t(
    "entropy_bonus_reward_ratio", 0.5,
    "a fixed SAC/TQC entropy bonus (ent_coef x action dims x log 2, the most a squashed policy earns per step) "
    "above this fraction of the typical |reward| per step: randomness pays about as well as the task",
    "Haarnoja et al. 2018 (the temperature sets the reward/entropy trade-off; the learned one falls to ~0.1-0.2 "
    "on Pendulum); Ours: healthy Pendulum SAC ent_coef 0.15 x log 2 = 0.1 vs ~6 per step",
)
N_ENVS_MAX = _t(
    "n_envs_max", 32, "A2C/PPO/REINFORCE runs with more parallel envs than this are unusual: each update averages over "
    "so many env steps that a budget sized for the usual rollouts holds a fraction of the updates",
    "RL Zoo a2c.yml/ppo.yml: n_envs 1-32 (32 only for BipedalWalker); gsolve's default 8",
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
    "the PPO default, left a CartPole DQN run with lr 1e-5 unsolved in 64k steps; measured 2026-11-26)",
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
    "a replay minibatch (DQN/SAC/TD3/TQC batch_size) or a PPO minibatch below this: each gradient step follows "
    "a handful of samples, so the updates are mostly noise",
    "RL Zoo (smallest tuned batch 32, Atari DQN and PPO; 64-256 for classic control); SB3 defaults (DQN 32, "
    "SAC/TD3 256, PPO 64)",
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
PPO_EPOCHS_MAX = _t(
    "ppo_epochs_max", 30,
    "PPO passes over one rollout above this: the policy is fitted to one batch of samples until it leaves "
    "the region where their advantages hold (the clip stops a sample's gradient, not the drift of the others)",
    "PPO paper (3-15 epochs); RL Zoo ppo.yml (1-30); SB3 default 10; Ours: CartPole-v1:ppo uses 9",
)
PPO_EPOCHS_SUGGESTED = _t(
    "ppo_epochs_suggested", 10, "the n_epochs suggested for a PPO run that passes over its rollouts too often",
    "SB3 PPO default (PPO paper: 10 for MuJoCo)",
)
OFFPOLICY_LR_MAX = _t(
    "offpolicy_lr_max", 0.01,
    "an off-policy (DQN/SAC/TD3/TQC) learning rate above this: 1.5x above the highest the RL Zoo tunes for any "
    "of them (10x for SAC/TD3), so each step overshoots the Bellman targets it regresses on",
    "RL Zoo hyperparams (dqn up to 6.3e-3; sac/td3 3e-4 to 1e-3); Ours: presets use 1e-3 to 3.3e-3",
)
SOFT_TARGET_HORIZON_FRACTION = _t(
    "soft_target_horizon_fraction", 0.1,
    "a DQN target whose time constant (target_update_interval / tau env steps) is above this fraction of the "
    "budget: the target lags the online network by a large part of the run, 20x more than any tuned DQN's",
    "Mnih et al. 2015 (hard copy every 10k of 50M steps: 0.0002 of the budget); RL Zoo dqn.yml (tau 1, every "
    "10-600 env steps of 50k-120k on classic control: at most 0.005); Ours: CartPole-v1:dqn's is 10 of 100k",
)
NSTEP_RETURNS_MAX = _t(
    "nstep_returns_max", 10,
    "off-policy n-step returns (SB3's n_steps) longer than this: the replayed rewards come from older policies "
    "with no correction, and the TD target sums n of them before it bootstraps",
    "Rainbow (Hessel et al. 2018: n = 3); R2D2 (Kapturowski et al. 2019: n = 5-10, with recurrent state); "
    "Ours: LunarLander-v3:dqn uses 3",
)
LENGTH_GROWTH_MIN = _t(
    "length_growth_min", 3.0,
    "training episodes that grew at least this many times longer (longest / shortest mean) show the agent's "
    "behaviour changing; returns that stayed flat meanwhile do not pay for what changed",
    "Ours: CartPole episodes grow 20 -> 500 steps as it learns; with sutton_barto_reward every return stays in "
    "[-1, 0]",
)
RETURN_FLAT_GAP_FRACTION = _t(
    "return_flat_gap_fraction", 0.05,
    "returns whose whole range is below this fraction of their gap to the threshold count as flat",
    "Ours (a learning run closes a visible part of the gap)",
)
ACTOR_CRITIC_TRAIN_FREQ_MAX = _t(
    "actor_critic_train_freq_max", 8,
    "SAC/TD3/TQC collecting more env steps per sub-env than this between gradient phases: the actor acts that "
    "long with a policy that does not change, so a low replay ratio is fixed by training more often, not only more",
    "SB3 SAC/TD3 default train_freq 1; RL Zoo sac.yml/td3.yml (1, or 'episode' on a few MuJoCo tasks); Ours: "
    "Pendulum-v1:sac trains every 4",
)
DQN_TRAIN_FREQ_MAX = _t(
    "dqn_train_freq_max", 256,
    "DQN/QR-DQN collecting more env steps per sub-env than this between gradient phases: it acts epsilon-greedily "
    "that long on Q-values that do not change, so a low replay ratio is fixed by training more often",
    "SB3 DQN default train_freq 4; RL Zoo dqn.yml/qrdqn.yml 4-256 (256 only with gradient_steps 128)",
)
ACTOR_CRITIC_REPLAY_RATIO = _t(
    "actor_critic_replay_ratio", 1.0,
    "gradient steps per env step suggested when an SAC/TD3/TQC run trains too rarely",
    "SB3 SAC/TD3 default (train_freq 1, gradient_steps 1); Ours: half that (TD3 train_freq 2 for gradient_steps "
    "1) left a Pendulum TD3 run at -238 of -200 in 11k env steps, the default solved it",
)
EXPLORE_MAX_ENVS = _t(
    "explore_max_envs", 64,
    "a run that never found its reward, or a fix's explore rung, doubles an on-policy run's parallel envs up to "
    "this many: twice the episodes at once to find the reward, and updates from twice the samples",
    "RL Zoo (on-policy entries use 1-64 envs, MiniGrid's PPO 8-16); Ours: heldout15's u30 (MiniGrid-Empty-8x8 A2C, "
    "in-sample) solved 4 of 4 seeds with 16 envs where 8 solved 1",
)
