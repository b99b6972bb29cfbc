"""FOURTH HELD-OUT test set (tests/fixtures/heldout4): for scoring the run diagnosis ONLY, never to tune,
fit or develop it (rules, thresholds, references, candidate orders). Do not read these rows or the
labels.json files of tests/fixtures/heldout4 while working on the diagnosis: once used for tuning, the
figure no longer measures diagnosis on faults nobody tuned to.

Written without reading the diagnosis code, its docs or tests, the references or the corpus contents
(only the corpus folder names and the rows of scripts/make_heldout.py, heldout2_cases.py and
heldout3_cases.py were looked at, to avoid their (algorithm, key) pairs). Meant to be scored mainly
with `--no-preset` (as if the run were imported or a user's own config, with no preset to revert to),
so every fault is one whose mechanism is in principle visible from the run's own config values and
metrics.csv (learning rate, batch size, discount, gradient clip, network size, update frequency,
exploration noise; entropy, action std, q-values, update counts, explained variance, eval returns).

    git archive HEAD | tar -x -C /tmp/h4src
    .venv/bin/python scripts/make_heldout.py --cases scripts/heldout4_cases.py --out tests/fixtures/heldout4 \\
        --src /tmp/h4src --runs-dir /tmp/h4gen_runs
    .venv/bin/python scripts/score_heldout.py tests/fixtures/heldout4 --no-preset

Same columns as CASES in scripts/make_heldout.py: case, config_id, seed, budget, planted, fault_type,
cause, expected_key, expected_direction, acceptable_keys. Seeds are 110-125, used by no other set.
`budget` (max_env_steps, kept for the fix run too) is at least 1.5x the preset's slowest measured solve
(docs/presets.md and the earlier sets): CartPole-v1:a2c 50k (as heldout3), CartPole-v1:dqn 22.5k-41k
-> 64k, CartPole-v1:reinforce 22k-60k -> 100k, Acrobot-v1:reinforce 16k-103k -> 160k, Pendulum-v1:ppo
8k-12k -> 40,960, Pendulum-v1:sac 2k-5k and Pendulum-v1:td3 6k-7k -> 12k. Every faulty row's fix (the
same seed and budget without the planted keys) was seen to solve when screening.

Dropped while screening (single runs, seed in parentheses):
- CartPole-v1:reinforce ent_coef=1.0 (110): not solved but reached 457 of 475; ent_coef=3.0 (110)
  solved at 4k env steps: with a greedy (argmax) evaluation a near-uniform softmax policy still balances,
  so an entropy bonus does not make a discrete CartPole run fail. Same for CartPole-v1:a2c ent_coef=1.0
  (120): solved at the first evaluation.
- Pendulum-v1:sac learning_rate=0.05 (112), buffer_size=200 (112), gamma=0.999 (118),
  ent_coef_auto=false with ent_coef=3.0 (118): all solved within 12k (SAC on Pendulum is very robust).
- Pendulum-v1:td3 learning_rate=0.03 (113): solved at 7k, as the preset.
- CartPole-v1:ppo n_epochs=100 (121): solved at 22.5k (and took 2 min of CPU).
- Acrobot-v1:ppo n_envs=64 (8192-sample rollouts, 5 updates in 40,960) (122): solved at its last evaluation.
- Pendulum-v1:ppo log_std_init=-3 (114): not solved but still improving at the end of the budget;
  replaced by log_std_init=-5, a clear failure.
"""

CASES: list[dict] = [
    dict(case="q01_s111", config_id="CartPole-v1:a2c", seed=111, budget=50000,
         planted=["learning_rate=0.03"],
         fault_type="a2c_lr_too_high_policy_collapse",
         cause="an RMSprop learning rate of 0.03, about 9x the preset's 3.5e-3, makes the first A2C updates so "
               "large that the softmax policy saturates onto one action within the first rollouts: its entropy "
               "collapses to ~0, the policy gradient vanishes with it, and the cart is pushed one way for the "
               "rest of the run",
         expected_key="learning_rate", expected_direction="decrease",
         acceptable_keys=[]),
    dict(case="q02_s114", config_id="Pendulum-v1:ppo", seed=114, budget=40960,
         planted=["log_std_init=-5.0"],
         fault_type="initial_exploration_noise_tiny",
         cause="log_std_init -5 starts the gSDE exploration noise at exp(-5) ~ 0.007 of the feature scale, so "
               "the rollouts are almost deterministic torque sequences: PPO sees nearly no variation in the "
               "actions to credit, its clipped updates grow the std only slowly, and the policy never discovers "
               "the energy-pumping swing-up",
         expected_key="log_std_init", expected_direction="increase",
         acceptable_keys=["ent_coef"]),
    dict(case="q03_s115", config_id="CartPole-v1:dqn", seed=115, budget=64000,
         planted=["batch_size=1"],
         fault_type="replay_minibatch_single_sample",
         cause="every gradient step fits the Q-network to a single replayed transition, so at the preset's "
               "learning rate the TD updates are dominated by sampling noise: the Q-values drift upward past the "
               "1/(1-gamma) = 100 bound on CartPole's discounted return and the greedy policy balances only "
               "erratically",
         expected_key="batch_size", expected_direction="increase",
         acceptable_keys=["learning_rate"]),
    dict(case="q04_s116", config_id="Pendulum-v1:td3", seed=116, budget=12000,
         planted=["gamma=0.5"],
         fault_type="td3_discount_myopic",
         cause="gamma 0.5 gives TD3's critic an effective horizon of about 2 steps (Q is about twice the "
               "immediate cost), while the swing-up means first pushing away from the goal and pumping energy "
               "over tens of steps; a 2-step lookahead scores that as pure cost, so the deterministic actor "
               "never learns it",
         expected_key="gamma", expected_direction="increase",
         acceptable_keys=[]),
    dict(case="q05_s117", config_id="Acrobot-v1:reinforce", seed=117, budget=160000,
         planted=["gamma=0.9"],
         fault_type="reinforce_discount_short_horizon",
         cause="with gamma 0.9 each step's Monte-Carlo return counts only the next ~10 steps of -1 reward, so in "
               "episodes of hundreds of steps nearly every return is the same constant and only the last few "
               "steps before reaching the line carry any credit: the baseline-subtracted advantages are noise "
               "and the policy keeps timing out",
         expected_key="gamma", expected_direction="increase",
         acceptable_keys=[]),
    dict(case="q06_s118", config_id="Pendulum-v1:sac", seed=118, budget=12000,
         planted=["train_freq=200"],
         fault_type="sac_replay_ratio_too_low",
         cause="training only every 200 env steps with the preset's 2 gradient steps is 1 gradient step per 100 "
               "env steps (the preset does 1 per 2): about 120 updates in the whole budget leave SAC's critics "
               "and actor close to their initialisation",
         expected_key="train_freq", expected_direction="decrease",
         acceptable_keys=["gradient_steps"]),
    dict(case="q07_s119", config_id="CartPole-v1:reinforce", seed=119, budget=100000,
         planted=["max_grad_norm=1e-9"],
         fault_type="grad_clip_below_adam_eps",
         cause="a global gradient-norm clip of 1e-9 scales gradients of norm ~10 down by ~1e10, so every "
               "per-parameter gradient is far below Adam's epsilon (1e-8) and each step moves the weights by a "
               "tiny fraction of the learning rate: the policy stays uniform and the baseline never fits",
         expected_key="max_grad_norm", expected_direction="increase",
         acceptable_keys=[]),
    dict(case="q08_s123", config_id="CartPole-v1:dqn", seed=123, budget=64000,
         planted=["hidden_sizes=[2]"],
         fault_type="q_network_too_small",
         cause="a Q-network with one hidden layer of 2 ReLU units cannot represent CartPole's action values; "
               "fitted to bootstrapped targets, the underfit function extrapolates and its values climb without "
               "bound (far past 1/(1-gamma) = 100) while the greedy policy never balances",
         expected_key="hidden_sizes", expected_direction="increase",
         acceptable_keys=[]),
    dict(case="q09_s124", config_id="Acrobot-v1:ppo", seed=124, cause="the unmodified preset"),
    dict(case="q10_s125", config_id="CartPole-v1:reinforce", seed=125, cause="the unmodified preset"),
]
