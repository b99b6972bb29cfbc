"""SECOND HELD-OUT test set (tests/fixtures/heldout2): for scoring the run diagnosis ONLY, never to tune,
fit or develop it (rules, thresholds, references, candidate orders). Do not read these rows or the
labels.json files of tests/fixtures/heldout2 while working on the diagnosis: once used for tuning, the
figure no longer measures diagnosis on faults nobody tuned to.

Written without reading the diagnosis code, to replace tests/fixtures/heldout (which has been used to
tune). Fault mechanisms were chosen to differ from the corpus's and the first held-out set's.

    .venv/bin/python scripts/make_heldout.py --cases scripts/heldout2_cases.py --out tests/fixtures/heldout2
    .venv/bin/python scripts/score_heldout.py tests/fixtures/heldout2

Same columns as CASES in scripts/make_heldout.py: case, config_id, seed, budget, planted, fault_type,
cause, expected_key, expected_direction, acceptable_keys. `budget` (max_env_steps, kept for the fix run
too) is at least 1.5x the preset's slowest measured solve (docs/presets.md): Pendulum-v1:ppo 8k-12k,
Acrobot-v1:ppo 8k-25k, CartPole-v1:dqn 22.5k-41k, CartPole-v1:a2c a median of ~5k.
"""

CASES: list[dict] = [
    dict(case="k01_s31", config_id="Pendulum-v1:ppo", seed=31, budget=40960,
         planted=["reward_clip=0.002"],
         fault_type="reward_clip_flattens_shaping",
         cause="clipping the learning reward to +-0.002 (after the 0.2 scale) saturates the cost of every state "
               "except an almost exactly upright, still pendulum, so the dense swing-up shaping becomes a constant "
               "-0.002 per step and the policy gets no gradient toward the top",
         expected_key="reward_clip", expected_direction="disable",
         acceptable_keys=["reward_clip", "reward_scale"]),
    dict(case="k02_s32", config_id="Pendulum-v1:ppo", seed=32, budget=40960,
         planted=["use_sde=false"],
         fault_type="gsde_disabled",
         cause="without gSDE the policy explores with independent per-step Gaussian noise that averages out over "
               "the swing-up, so PPO finds the energy-pumping motion much more slowly and stalls short of -200 in "
               "a budget over 3x what the gSDE preset needs",
         expected_key="use_sde", expected_direction="enable",
         acceptable_keys=["sde_sample_freq", "log_std_init"]),
    dict(case="k03_s33", config_id="CartPole-v1:dqn", seed=33, budget=64000,
         planted=["gradient_steps=1"],
         fault_type="replay_ratio_too_low",
         cause="one gradient step per 64-step collection phase (4 envs) is 1/64 of the preset's replay ratio: "
               "about 250 Q-network updates over the whole budget leave the Q-function essentially untrained",
         expected_key="gradient_steps", expected_direction="increase",
         acceptable_keys=["train_freq"]),
    dict(case="k04_s37", config_id="CartPole-v1:a2c", seed=37, budget=30000,
         planted=["n_steps=1024"],
         fault_type="a2c_rollout_too_long",
         cause="A2C makes one gradient step per rollout, and 8 envs x 1024 steps = 8192 samples per rollout "
               "leaves only 4 updates in the budget",
         expected_key="n_steps", expected_direction="decrease",
         acceptable_keys=["n_envs"]),
    dict(case="k05_s47", config_id="Acrobot-v1:ppo", seed=47, budget=40960,
         planted=["gamma=0.5"],
         fault_type="discount_too_low_sparse",
         cause="with gamma 0.5 every state is worth about -2 whatever its distance to the line, so the -1-per-step "
               "reward gives no signal toward a goal reached only after a long, coordinated swing",
         expected_key="gamma", expected_direction="increase",
         acceptable_keys=["gae_lambda"]),
    dict(case="k06_s51", config_id="Pendulum-v1:ppo", seed=51, cause="the unmodified preset"),
    dict(case="k07_s63", config_id="CartPole-v1:dqn", seed=63, budget=64000,
         planted=["learning_rate=0.00001"],
         fault_type="dqn_lr_too_low",
         cause="a learning rate of 1e-5 (230x below the preset's 2.3e-3) moves the Q-network so little that the "
               "greedy policy stays at its initial, near-random behaviour for the whole budget",
         expected_key="learning_rate", expected_direction="increase",
         acceptable_keys=[]),
    dict(case="k08_s43", config_id="CartPole-v1:dqn", seed=43, budget=64000,
         planted=["gamma=0.5"],
         fault_type="dqn_discount_too_low",
         cause="gamma 0.5 makes every Q-value look about 2 steps ahead, so the greedy policy cannot tell a state "
               "that will fall in 10 steps from a safe one and keeps the pole up only for short stretches",
         expected_key="gamma", expected_direction="increase",
         acceptable_keys=[]),
    dict(case="k09_s52", config_id="CartPole-v1:dqn", seed=52, cause="the unmodified preset"),
]
