"""FIFTH HELD-OUT test set (tests/fixtures/heldout5): for scoring the run diagnosis ONLY, never to tune,
fit or develop it (rules, thresholds, references, candidate orders). Do not read these rows or the
labels.json files of tests/fixtures/heldout5 while working on the diagnosis: once used for tuning, the
figure no longer measures diagnosis on faults nobody tuned to.

Written without reading the diagnosis code, the references, docs/diagnostics.md, the diagnosis tests or
the corpus contents (only the corpus folder names and the CASES of scripts/make_heldout.py,
heldout2_cases.py, heldout3_cases.py and heldout4_cases.py were looked at, to pick other (algorithm,
setting) mechanisms).
Meant to be scored mainly with `--no-preset` (as an imported run or a user's own config: no preset to
revert to), so every fault is a setting whose mechanism shows in the run's own config and metrics.csv:
environment counts against rollout, replay or episode settings, rollout length, episodes per update,
and reward thresholds that no run can reach.

    mkdir -p /tmp/h5src && git archive HEAD | tar -x -C /tmp/h5src
    .venv/bin/python scripts/make_heldout.py --cases scripts/heldout5_cases.py --out tests/fixtures/heldout5 \\
        --src /tmp/h5src --runs-dir /tmp/h5gen_runs
    .venv/bin/python scripts/score_heldout.py tests/fixtures/heldout5 --no-preset

Same columns as CASES in scripts/make_heldout.py: case, config_id, seed, budget, planted, fault_type,
cause, expected_key, expected_direction, acceptable_keys. `budget` (max_env_steps, kept for the fix run
too) is at least 1.5x the preset's slowest measured solve (docs/presets.md and the preset files):
Pendulum-v1:sac 2k-5k (12k), Pendulum-v1:ppo 8k-12k (40,960), CartPole-v1:reinforce 22k-60k (120k),
CartPole-v1:a2c a median of ~5k with a seed unsolved in 30k (50k, as heldout3), Acrobot-v1:ppo 8k-25k
(40,960). Every other faulty row was screened on its seed
(the faulty run did not solve in the budget and the preset, the planted keys reverted, did); p06 cannot
solve by construction and was checked at generation only. Two rows set a key of an earlier set in the
other direction, with another symptom: p05 (A2C n_steps=1, a collapse; heldout2's k04 has n_steps=1024,
too few updates) and p08 (REINFORCE episodes_per_update=1, a collapse; heldout's h03 has 64).

Dropped while screening (faulty run solved within the budget, or only just missed): Pendulum-v1:td3
n_steps=100 (solved at 9,000); CartPole-v1:a2c n_envs=1 (12,000), normalize_advantages=true (36,864),
max_grad_norm=null (38,912); Acrobot-v1:ppo vf_coef=100 (4,096), normalize_observations=true (12,288);
Acrobot-v1:reinforce normalize_observations=false (24,816), episodes_per_update=1 (131,720), gamma=0.9
(best -102.8: a near miss, and discount-too-low is already in earlier sets); Pendulum-v1:sac
ent_coef_auto=false with ent_coef 0 (4,000), gamma=0.999 (4,000), buffer_size=200 (11,000),
learning_starts=10000 (solved at its final evaluation, 12,000); CartPole-v1:reinforce gamma=0.8
(10,344), hidden_sizes=[256,256,256] (6,184); Pendulum-v1:ppo sde_sample_freq=1 (24,576),
max_grad_norm=null (8,192), normalize_observations=true (8,192), activation=relu (best -203.4 in 40,960:
relu makes gSDE's noise start at std ~5, which slows learning but does not break it); LunarLander-v3:ppo
normalize_advantages=false (229,376, as fast as the preset). Dropped for overlap with heldout4 (built at the
same time): CartPole-v1:dqn batch_size=1 (seed 157; it failed and its preset solved, but heldout4's q03 is
the same fault). p01 (SAC n_envs=8) shares its replay-ratio mechanism with heldout4's q06 (SAC
train_freq=200) but is set by another key, the env count. Two rows have an unreachable goal, by
different routes: p06 a threshold of the wrong sign, p09 one above the environment's maximum return (500
at CartPole's 500-step limit).
"""

CASES: list[dict] = [
    dict(case="p01_s153", config_id="Pendulum-v1:sac", seed=153, budget=12000,
         planted=["n_envs=8"],
         fault_type="offpolicy_envs_dilute_replay_ratio",
         cause="SB3 collects train_freq=4 steps in each of the 8 envs (32 env steps) before each phase of 2 "
               "gradient steps, so the replay ratio falls from 0.5 to 1/16 gradient step per env step: the 12k "
               "budget buys ~750 critic and actor updates, about half of what the 1-env preset uses to solve",
         expected_key="n_envs", expected_direction="decrease",
         acceptable_keys=["gradient_steps", "train_freq"]),
    dict(case="p02_s165", config_id="Pendulum-v1:ppo", seed=165, budget=40960,
         planted=["n_envs=1", "batch_size=64"],
         fault_type="single_env_correlated_rollouts",
         cause="with one environment a rollout is 64 consecutive steps, a third of one 200-step episode, and "
               "each update's 10 epochs fit that single correlated fragment of one swing (batch_size lowered "
               "to fit the rollout); the policy lurches from fragment to fragment and never learns the whole "
               "swing-up",
         expected_key="n_envs", expected_direction="increase",
         acceptable_keys=["n_steps"]),
    dict(case="p03_s179", config_id="Pendulum-v1:td3", seed=179, cause="the unmodified preset"),
    dict(case="p04_s176", config_id="CartPole-v1:reinforce", seed=176, budget=120000,
         planted=["n_envs=64"],
         fault_type="reinforce_envs_exceed_episodes_per_update",
         cause="REINFORCE steps all 64 envs from fresh resets until 8 episodes have ended and learns only from "
               "those 8, the shortest (earliest failures); the other 56 envs' steps are spent and discarded, "
               "so each update costs ~8x the env steps and is biased toward failing episodes",
         expected_key="n_envs", expected_direction="decrease",
         acceptable_keys=[]),
    dict(case="p05_s173", config_id="CartPole-v1:a2c", seed=173, budget=50000,
         planted=["n_steps=1"],
         fault_type="a2c_one_step_rollouts",
         cause="one-step rollouts make every A2C update an RMSprop step on 8 one-step TD advantages (not "
               "normalised), 16x as many updates per env step as the preset at the same lr 3.5e-3; the noisy, "
               "bootstrapped steps drive the policy to a deterministic losing action within a few thousand "
               "steps (entropy near 0)",
         expected_key="n_steps", expected_direction="increase",
         acceptable_keys=["learning_rate"]),
    dict(case="p06_s183", config_id="Acrobot-v1:ppo", seed=183, budget=40960,
         planted=["reward_threshold=100"],
         fault_type="reward_threshold_wrong_sign",
         cause="the reward threshold has the wrong sign: Acrobot pays -1 per step, so every return is at most "
               "0 and +100 can never be reached; the policy learns as usual but the run can only end by "
               "spending its budget",
         expected_key="reward_threshold", expected_direction="decrease",
         acceptable_keys=[]),
    dict(case="p07_s178", config_id="Acrobot-v1:ppo", seed=178, cause="the unmodified preset"),
    dict(case="p08_s151", config_id="CartPole-v1:reinforce", seed=151, budget=120000,
         planted=["episodes_per_update=1"],
         fault_type="single_episode_updates",
         cause="one episode per update: normalising advantages over a single ~10-step episode makes them "
               "mean-zero within it, erasing whether the episode was good or bad, and these high-variance "
               "single-episode steps at lr 0.006 collapse the policy to a deterministic early-failing action "
               "(entropy near 0) within the first few thousand env steps",
         expected_key="episodes_per_update", expected_direction="increase",
         acceptable_keys=[]),
    dict(case="p09_s152", config_id="CartPole-v1:reinforce", seed=152, budget=120000,
         planted=["reward_threshold=600"],
         fault_type="reward_threshold_above_max_return",
         cause="CartPole pays +1 per step and truncates episodes at 500 steps, so no return can exceed 500 "
               "and a threshold of 600 is unreachable; the policy learns to the 500 maximum but the run can "
               "only end by spending its budget",
         expected_key="reward_threshold", expected_direction="decrease",
         acceptable_keys=[]),
]
