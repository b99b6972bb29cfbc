"""The metric vocabulary: every metrics.csv column name, what it means, and which columns each
algorithm writes. Documented in docs/metrics.md; part of the run-folder contract (run_folder.py
re-exports it, so ``run_folder.M`` is this ``M``). Which algorithm writes which columns is its row in
algorithms.py. Imports nothing of ours, never torch."""

from __future__ import annotations


class M:
    """Metric column names. Import these; never spell a metric name as a string literal."""

    ITERATION = "iteration"
    ENV_STEPS = "env_steps"
    WALL_SECONDS = "time/wall_seconds"
    FPS = "time/fps"
    ROLLOUT_SECONDS = "time/rollout_seconds"
    UPDATE_SECONDS = "time/update_seconds"

    EP_RETURN_MEAN = "rollout/ep_return_mean"
    EP_RETURN_STD = "rollout/ep_return_std"
    EP_LEN_MEAN = "rollout/ep_len_mean"
    EPISODES = "rollout/episodes"

    EVAL_RETURN_MEAN = "eval/return_mean"
    EVAL_RETURN_STD = "eval/return_std"
    EVAL_EP_LEN_MEAN = "eval/ep_len_mean"

    POLICY_LOSS = "train/policy_loss"
    VALUE_LOSS = "train/value_loss"
    ENTROPY = "train/entropy"
    GRAD_NORM = "train/grad_norm"
    # Per part of the network, with grad_norm_parts: true (gsolve's own PPO, A2C, REINFORCE and DQN).
    GRAD_NORM_ACTOR = "train/grad_norm_actor"
    GRAD_NORM_CRITIC = "train/grad_norm_critic"
    GRAD_NORM_TRUNK = "train/grad_norm_trunk"
    GRAD_NORM_HEAD = "train/grad_norm_head"
    LEARNING_RATE = "train/learning_rate"
    ENT_COEF = "train/ent_coef"
    EXPLAINED_VARIANCE = "train/explained_variance"
    ACTION_STD = "train/action_std"

    APPROX_KL = "train/approx_kl"
    CLIP_FRACTION = "train/clip_fraction"
    CLIP_RANGE = "train/clip_range"
    EPOCHS_COMPLETED = "train/epochs_completed"

    # Stable-Baselines3 algorithms (gymnasium_solver/agents/sb3.py): replay-buffer and Q-learning quantities.
    Q_MEAN = "train/q_mean"
    TD_LOSS = "train/td_loss"
    CRITIC_LOSS = "train/critic_loss"
    ACTOR_LOSS = "train/actor_loss"
    ENT_COEF_LOSS = "train/ent_coef_loss"
    EXPLORATION_RATE = "train/exploration_rate"
    REPLAY_FILL = "train/replay_fill"
    N_UPDATES = "train/n_updates"


COMMON_COLUMNS: tuple[str, ...] = (
    M.ITERATION,
    M.ENV_STEPS,
    M.WALL_SECONDS,
    M.FPS,
    M.ROLLOUT_SECONDS,
    M.UPDATE_SECONDS,
    M.EP_RETURN_MEAN,
    M.EP_RETURN_STD,
    M.EP_LEN_MEAN,
    M.EPISODES,
    M.EVAL_RETURN_MEAN,
    M.EVAL_RETURN_STD,
    M.EVAL_EP_LEN_MEAN,
    M.POLICY_LOSS,
    M.VALUE_LOSS,
    M.ENTROPY,
    M.GRAD_NORM,
    M.LEARNING_RATE,
    M.ENT_COEF,
    M.EXPLAINED_VARIANCE,
    M.ACTION_STD,
)
PPO_COLUMNS: tuple[str, ...] = COMMON_COLUMNS + (
    M.APPROX_KL,
    M.CLIP_FRACTION,
    M.CLIP_RANGE,
    M.EPOCHS_COMPLETED,
)

# With grad_norm_parts: true, after the algorithm's columns: the actor-critic agents' parts, and DQN's.
ACTOR_CRITIC_PART_COLUMNS: tuple[str, ...] = (M.GRAD_NORM_ACTOR, M.GRAD_NORM_CRITIC, M.GRAD_NORM_TRUNK)
Q_NETWORK_PART_COLUMNS: tuple[str, ...] = (M.GRAD_NORM_TRUNK, M.GRAD_NORM_HEAD)

# Every off-policy algorithm writes the common columns (those it cannot measure stay empty), these,
# and its own (algorithms.py).
REPLAY_COLUMNS: tuple[str, ...] = (M.Q_MEAN, M.REPLAY_FILL, M.N_UPDATES)

METRIC_DESCRIPTIONS: dict[str, str] = {
    M.ITERATION: "training iteration, from 1: one rollout + one update (on-policy), or iteration_steps env "
    "steps with their gradient steps among them (off-policy)",
    M.ENV_STEPS: "environment steps so far, every sub-environment step counted once; monotonic",
    M.WALL_SECONDS: "seconds since the environments were created",
    M.FPS: "environment steps per second over this iteration (rollout + update)",
    M.ROLLOUT_SECONDS: "seconds this iteration spent collecting: on-policy, its rollout; off-policy, everything "
    "but the gradient steps (acting, env steps, storing transitions)",
    M.UPDATE_SECONDS: "seconds this iteration spent learning: on-policy, computing the targets (GAE or returns) "
    "and the update; off-policy, its gradient steps and the measures after them",
    M.EP_RETURN_MEAN: "mean undiscounted return of training episodes finished recently (last 100); "
    "empty until one finishes",
    M.EP_RETURN_STD: "standard deviation of those training-episode returns",
    M.EP_LEN_MEAN: "mean length of those training episodes",
    M.EPISODES: "training episodes finished so far",
    M.EVAL_RETURN_MEAN: "mean return of deterministic evaluation episodes of the current policy; "
    "empty on iterations without an evaluation",
    M.EVAL_RETURN_STD: "standard deviation of the evaluation returns",
    M.EVAL_EP_LEN_MEAN: "mean evaluation episode length",
    M.POLICY_LOSS: "policy (actor) loss, mean over the update's minibatches",
    M.VALUE_LOSS: "value (critic) loss, mean over minibatches; empty for REINFORCE without a baseline",
    M.ENTROPY: "mean policy entropy (nats) over the update's samples",
    M.GRAD_NORM: "global gradient L2 norm before clipping, mean over minibatches",
    M.GRAD_NORM_ACTOR: "grad_norm_parts: gradient L2 norm of the policy's own parameters (its hidden layers "
    "unless shared, its head, the log std), before clipping, mean over minibatches; a part's norms add up to "
    "train/grad_norm in squares",
    M.GRAD_NORM_CRITIC: "grad_norm_parts: gradient L2 norm of the value function's own parameters (its hidden "
    "layers unless shared, its head), before clipping; empty without a critic (REINFORCE without a baseline)",
    M.GRAD_NORM_TRUNK: "grad_norm_parts: gradient L2 norm of the layers actor and critic share (shared_network, "
    "nature_cnn's convolutions and dense layer; empty when nothing is shared); DQN: its hidden layers",
    M.GRAD_NORM_HEAD: "grad_norm_parts, DQN: gradient L2 norm of the Q-network's output layer, before clipping",
    M.LEARNING_RATE: "learning rate used in this update (after the schedule)",
    M.ENT_COEF: "entropy coefficient used in this update (after the schedule)",
    M.EXPLAINED_VARIANCE: "1 - Var(returns - values) / Var(returns) of the value function on this "
    "rollout; 1 is perfect, <= 0 predicts nothing",
    M.ACTION_STD: "Box actions: the Gaussian policy's standard deviation exp(log_std), mean over action "
    "dimensions, after this update (the first row shows about the initial std); compare it with the "
    "action range's half-width (run.json action_space.high - low, halved); empty for Discrete actions",
    M.APPROX_KL: "approximate KL(old || new) of the policy update, (ratio - 1) - log ratio estimator "
    "(http://joschu.net/blog/kl-approx.html), mean over the last epoch",
    M.CLIP_FRACTION: "fraction of samples whose probability ratio was clipped",
    M.CLIP_RANGE: "PPO clip range used in this update (after the schedule)",
    M.EPOCHS_COMPLETED: "epochs run before target-KL early stopping (= n_epochs when not stopped)",
    M.Q_MEAN: "SB3 DQN/SAC/TD3: mean predicted Q-value of the action the policy takes (DQN: the greedy one; "
    "QR-DQN/TQC: mean over quantiles) on 256 replay samples after this iteration's updates; compare with the "
    "largest discounted return possible, max reward / (1 - gamma): far above it, the Q-values diverge",
    M.TD_LOSS: "SB3 DQN/QR-DQN: temporal-difference (Huber / quantile Huber) loss, mean over the iteration's updates",
    M.CRITIC_LOSS: "SB3 SAC/TD3/TQC: critic (Q) loss, mean over the iteration's updates",
    M.ACTOR_LOSS: "SB3 SAC/TD3/TQC: actor loss, mean over the iteration's updates",
    M.ENT_COEF_LOSS: "SB3 SAC/TQC with a learned entropy coefficient: its loss",
    M.EXPLORATION_RATE: "SB3 DQN/QR-DQN: epsilon of the epsilon-greedy exploration at the iteration's end",
    M.REPLAY_FILL: "SB3 off-policy: fraction of the replay buffer filled (1 = full; older transitions are "
    "overwritten from then on)",
    M.N_UPDATES: "SB3: gradient updates so far (DQN: the target network is copied every target_update_interval "
    "env steps, not updates)",
}

