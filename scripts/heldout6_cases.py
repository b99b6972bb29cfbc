"""SIXTH HELD-OUT test set (tests/fixtures/heldout6): for scoring the run diagnosis ONLY, never to tune,
fit or develop it (rules, thresholds, references, candidate orders). Do not read these rows or the
labels.json files of tests/fixtures/heldout6 while working on the diagnosis: once used for tuning, the
figure no longer measures diagnosis on faults nobody tuned to.

Written without reading the diagnosis code, the references, docs/diagnostics.md, the diagnosis tests,
the corpus contents or any fixture's labels/metrics (only the corpus folder names and the case,
config_id, planted and fault_type columns of scripts/make_heldout.py and heldout2..5_cases.py were looked
at, to pick other (algorithm, setting) pairs). Focused on the ON-POLICY algorithms (PPO, SB3's A2C,
REINFORCE); scripts/heldout7_cases.py (built at the same time by someone else) covers off-policy ones.
Meant to be scored mainly with `--no-preset` (as an imported run or a user's own config).

    mkdir -p /tmp/h6src && git archive HEAD | tar -x -C /tmp/h6src
    .venv/bin/python scripts/make_heldout.py --cases scripts/heldout6_cases.py --out tests/fixtures/heldout6 \\
        --src /tmp/h6src --runs-dir /tmp/h6gen_runs
    .venv/bin/python scripts/score_heldout.py tests/fixtures/heldout6

Same columns as CASES in scripts/make_heldout.py: case, config_id, seed, budget, planted, fault_type,
cause, expected_key, expected_direction, acceptable_keys. `budget` (max_env_steps, kept for the fix run
too) is at least 1.5x the preset's slowest measured solve (docs/presets.md): CartPole-v1:ppo 2k-18k,
CartPole-v1:reinforce 22k-60k, Pendulum-v1:ppo 8k-12k; CartPole-v1:a2c 50k as in heldout3/4/5 (its
seed 201 preset solved at 45,056 when screening).

Dropped while screening (faulty run solved within the budget, one seed each): CartPole-v1:a2c vf_coef=100
(RMSprop is per-parameter, so the value gradient dominating the global clip hardly matters; solved at 4k),
CartPole-v1:a2c n_envs=1, CartPole-v1:a2c gamma=1.0, CartPole-v1:a2c ent_coef=0.5, CartPole-v1:reinforce
shared_network=true (solved at 95k of 100k), CartPole-v1:reinforce learning_rate={start: 1e-6, end: 0.006}
(inverted, warm-up-only schedule), CartPole-v1:reinforce hidden_sizes=[16]*8 (deep narrow tanh),
CartPole-v1:reinforce ent_coef=0.5, Acrobot-v1:reinforce normalize_observations=false,
Acrobot-v1:reinforce learning_rate={start: 0.006, end: 0.0}, Acrobot-v1:ppo vf_coef=100,
Acrobot-v1:ppo normalize_observations=true, Pendulum-v1:ppo ent_coef=0.1 (evaluation uses the Gaussian
mean), Pendulum-v1:ppo batch_size=16, Pendulum-v1:ppo log_std_init=3. Not allowed by the config:
CartPole-v1:a2c reward_scale=0.0001 (SB3 algorithms take no reward_scale). Not tried for cost: PPO
batch_size=1 (per-minibatch advantage normalisation of one sample), eval_freq above the budget (the run
still gets a final evaluation, so it can solve).
"""

CASES: list[dict] = [
    dict(case="r01_s201", config_id="CartPole-v1:a2c", seed=201, budget=50000,
         planted=["learning_rate=0.00001"],
         fault_type="a2c_lr_too_low",
         cause="an RMSprop learning rate of 1e-5 (350x below the preset) moves A2C's policy so little per update "
               "that after ~3,000 updates it is still close to its random start: losses and entropy stay nearly "
               "flat and the episode return creeps up far short of 475",
         expected_key="learning_rate", expected_direction="increase",
         acceptable_keys=[]),
    dict(case="r02_s209", config_id="CartPole-v1:reinforce", seed=209, budget=90000,
         planted=["learning_rate=0.00002"],
         fault_type="reinforce_lr_too_low",
         cause="an Adam learning rate of 2e-5 (300x below the preset) with one gradient step per 8 episodes gives "
               "REINFORCE only a few hundred tiny updates in the budget, so the policy's entropy barely drops and "
               "the return improves only slowly",
         expected_key="learning_rate", expected_direction="increase",
         acceptable_keys=[]),
    dict(case="r03_s203", config_id="CartPole-v1:ppo", seed=203, budget=40960,
         planted=["n_epochs=100"],
         fault_type="ppo_too_many_epochs_overfit_rollout",
         cause="100 passes (400 minibatch steps at a high learning rate) over each 256-sample rollout drive the "
               "policy far from the one that collected it (approx_kl ~0.2-0.3 per update, large clip fraction): "
               "the clipped objective cannot hold it and the policy turns near-deterministic early on a poor "
               "behaviour, so returns plateau far below 475",
         expected_key="n_epochs", expected_direction="decrease",
         acceptable_keys=["target_kl"]),
    dict(case="r04_s215", config_id="CartPole-v1:ppo", seed=215, budget=40960,
         planted=["env_kwargs={sutton_barto_reward: true}"],
         fault_type="env_reward_variant_threshold_unreachable",
         cause="CartPole's sutton_barto_reward option pays 0 per step and -1 on failure, so the best possible "
               "return is 0 and the 475 threshold (set for the +1-per-step reward) can never be met, although "
               "the agent learns to balance (episode length grows to 500 in evaluation)",
         expected_key="env_kwargs", expected_direction="disable",
         acceptable_keys=["reward_threshold"]),
    dict(case="r05_s218", config_id="Pendulum-v1:ppo", seed=218, budget=40960,
         planted=["gamma=0.5"],
         fault_type="ppo_pendulum_discount_myopic",
         cause="gamma 0.5 gives a horizon of about two steps, while swinging the pendulum up means accepting "
               "worse cost for tens of steps to pump energy; the myopic values reward only greedy torque towards "
               "upright, so the policy never learns the swing-up and stays far below -200",
         expected_key="gamma", expected_direction="increase",
         acceptable_keys=[]),
    dict(case="r06_s221", config_id="Acrobot-v1:reinforce", seed=221, cause="the unmodified preset"),
    dict(case="r07_s222", config_id="Pendulum-v1:ppo", seed=222, cause="the unmodified preset"),
]
