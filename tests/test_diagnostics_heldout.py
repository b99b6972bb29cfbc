"""The held-out sets (tests/fixtures/heldout to heldout53) as regression tests of the diagnosis.

Each was scored once blind (1/8, 2/7, 5/6, 8/8, 6/7, 4/5, 6/6, 7/7, 6/6; with no preset 1/6, 4/8, 0/7,
3/5, 3/6, 6/7, 5/6; docs/diagnostics.md). The diagnosis changed after each of them (their misses were read to write the
settings rules), so every figure here is in-sample. These pin today's figures so a change
that loses a case says so; they are not the accuracy figure (that is the first, blind scoring of a
set nobody tuned to).
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def score() -> ModuleType:
    spec = importlib.util.spec_from_file_location("score_heldout", ROOT / "scripts" / "score_heldout.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("score_heldout", module)
    spec.loader.exec_module(module)
    return module


def _line(faults: int, strict: int, lenient: int, healthy: int = 2) -> str:
    return (f"held-out fault runs: {faults}; top change moves the planted key the right way: {strict}/{faults} "
            f"({strict / faults:.0%}); an acceptable key: {lenient}/{faults} ({lenient / faults:.0%}); "
            f"healthy runs with a warning: 0/{healthy}")


@pytest.mark.parametrize(("folder", "no_preset", "expected"), [
    ("heldout", False, _line(8, 8, 8)),
    ("heldout2", False, _line(7, 7, 7)),
    # m01: the preset's target_entropy is null ("disable": SAC's auto target, -1, below the planted +5): a decrease
    # since the scorer takes a switch turned off as lowered (heldout21's shared_network, 2026-12-02)
    ("heldout3", False, _line(6, 6, 6)),
    # With nothing to revert (as an imported run or a user's own config): the mechanism alone.
    ("heldout", True, _line(8, 5, 5)),
    ("heldout2", True, _line(7, 6, 6)),
    ("heldout3", True, _line(6, 6, 6)),
    # heldout4's blind scoring (a813927) was 8/8 with its preset and 4/8 (5/8 lenient) with nothing to
    # revert; these are its figures after the three rules its misses prompted (docs/diagnostics.md).
    ("heldout4", False, _line(8, 8, 8)),
    ("heldout4", True, _line(8, 8, 8)),  # q-case SAC train_freq=200: train_freq lowered since stop 18
    # heldout5's blind scoring (56fb935) was 6/7 with its preset and 0/7 with nothing to revert; these are
    # its figures after the rules its misses prompted.
    ("heldout5", False, _line(7, 6, 6)),
    ("heldout5", True, _line(7, 5, 6)),
    # heldout6 and heldout7's blind scorings (678ab7b) were 4/5 and 6/6 with the preset, 3/5 and 3/6 with
    # nothing to revert; these are their figures after the rules their misses prompted (stop 18).
    ("heldout6", False, _line(5, 5, 5)),
    ("heldout6", True, _line(5, 5, 5)),
    ("heldout7", False, _line(6, 6, 6)),
    ("heldout7", True, _line(6, 6, 6)),
    # heldout8's blind scoring (4583494, diagnosis as at f15bac1) was 7/7 with its preset and 6/7 with
    # nothing to revert (t07: a 1e-8 gradient clip read as a learning rate too low); after grad_clip_throttles
    # outranked that reading where the clip provably shrinks Adam's step (stop 18), 7/7.
    ("heldout8", False, _line(7, 7, 7)),
    ("heldout8", True, _line(7, 7, 7)),
    # heldout9's blind scoring (4ddbf98, diagnosis as at 8aa7e96) was 6/6 with its preset and 5/6 strict,
    # 6/6 lenient with nothing to revert (u05, TD3 train_freq=200: gradient_steps raised, which did not solve);
    # since replay_ratio_too_low lowers an actor-critic's train_freq (stop 18), 6/6.
    ("heldout9", False, _line(6, 6, 6)),
    ("heldout9", True, _line(6, 6, 6)),
    # heldout10 (runs of environments with no preset of ours; issue 22): blind scoring at 87c8953 was 10/14 both
    # ways (v07 log_std_init=4 read as a learning rate too low; v10 PPO n_steps=2048 and v13 REINFORCE 500 episodes
    # per update read as a short budget or a slow learning rate; v11 a FrozenLake policy stuck by lr=0.3 read as
    # env_kwargs that stop the reward paying). After action noise explains a tiny KL, a rollout larger than the
    # defaults' is named when the budget holds too few updates, and a collapsed entropy explains unpaid longer
    # episodes (stop 23), 14/14.
    ("heldout10", False, _line(14, 14, 14, healthy=4)),
    ("heldout10", True, _line(14, 14, 14, healthy=4)),
    # heldout11 (no preset either; made blind while heldout10 was being read): blind at bf03b10 8/13 both ways.
    # Since a return of 0 in every row no longer reads as a reward fixed per step (a sparse goal never reached),
    # w03 (DQN with no exploration on FrozenLake) gets exploration_ends_too_early, an accepted key: 8/13 strict,
    # 9/13 lenient, in-sample. Stop 24, from its misses: a budget below the Zoo's is no suspect once the run's
    # curves are flat (w05 -> learning_rate_too_high), a horizon of <= 2 steps is myopic even in short episodes
    # (w07 -> gamma), a budget of too few updates names n_envs when it is the rollout key above the default (w14),
    # env_kwargs that do not name the reward cannot stop it paying and a DQN that trains every 1,000 steps is
    # told to train more often (w11 -> train_freq): 12/13 strict, 13/13 lenient, in-sample. Stop 27: a run built on
    # gsolve's defaults is held against them for the keys its overrides changed (w03, FrozenLake DQN with epsilon
    # 0, is told the defaults' exploration_final_eps=0.05 where it was told exploration_initial_eps=1.0): 13/13,
    # in-sample.
    ("heldout11", False, _line(13, 13, 13, healthy=4)),
    ("heldout11", True, _line(13, 13, 13, healthy=4)),
    # heldout12 (no preset; made blind while heldout11 was being read, stop 24): blind at 8db575a 14/15 both ways,
    # 0/4 healthy runs warned. x14 (A2C with far too many envs for its budget) got a larger budget. Since a run with
    # more envs than anyone tunes (> 32) is told to use the default 8 before a larger budget: 15/15, in-sample.
    ("heldout12", False, _line(15, 15, 15, healthy=4)),
    ("heldout12", True, _line(15, 15, 15, healthy=4)),
    # heldout13 (no preset; made blind in 12 minutes at the end of stop 24): blind at 2b6d18c 8/9 both ways, 0/2
    # healthy runs warned. y01 (A2C on Acrobot with far more envs than the Zoo's 16) got the Zoo's larger budget.
    # Since a larger rollout than the reference's leads a budget finding's reverts (before the budget): 9/9, in-sample.
    ("heldout13", False, _line(9, 9, 9, healthy=2)),
    ("heldout13", True, _line(9, 9, 9, healthy=2)),
    # heldout14 (no preset; made blind during stop 25): blind at e52df6a 10/11 both ways, 0/3 healthy runs warned.
    # z04 (the Zoo's CartPole DQN with SB3's default gradient_steps=1: its target copied before each of its rare
    # gradient steps) diverged and was told a smaller learning rate. Since a DQN whose target is copied before
    # every starved gradient step is told to take more gradient steps: 11/11, in-sample.
    ("heldout14", False, _line(11, 11, 11, healthy=3)),
    ("heldout14", True, _line(11, 11, 11, healthy=3)),
    # heldout15 (no preset; made blind during stop 26): blind at 098fe17 7/11 both ways, 0/3 healthy runs warned.
    # u04 and u05 (MountainCarContinuous PPO: the Zoo entry's log_std_init dropped, its learning rate 100x) were held
    # against the Zoo entry's raw numbers (a batch of 256 the trainer cannot take, no policy_kwargs), u10 (one epoch
    # of the whole rollout) was read as a low learning rate from a KL that is 0 by construction. Since the Zoo entry
    # is compared as gsolve trains it and a one-step-per-rollout KL is not read as the rate's: 10/11, in-sample.
    # Stop 27: u22 (reward_scale 0.01 over gsolve's defaults) is held against the defaults' 1.0: 11/11, in-sample.
    ("heldout15", False, _line(11, 11, 11, healthy=3)),
    ("heldout15", True, _line(11, 11, 11, healthy=3)),
    # heldout16 and heldout17 (stop 27): blind at f1375d4 13/13 and at ff9b8e8 11/11 both ways, 0/3 and 0/4 healthy
    # runs warned; unchanged since.
    ("heldout16", False, _line(13, 13, 13, healthy=3)),
    ("heldout16", True, _line(13, 13, 13, healthy=3)),
    ("heldout17", False, _line(11, 11, 11, healthy=4)),
    ("heldout17", True, _line(11, 11, 11, healthy=4)),
    # heldout18 (stop 27): blind at 4828ba7 6/10 both ways, 0/4 healthy runs warned. Its four misses (reward_clip
    # far too tight) got the right key and the exact fix, reward_clip=null, the defaults' value; the scorer held
    # that "disable" against the label's "increase". Since a limit's null counts as no limit (turning it off
    # raises it), for the scorer and for which deviations a mechanism explains: 10/10, in-sample.
    ("heldout18", False, _line(10, 10, 10, healthy=4)),
    ("heldout18", True, _line(10, 10, 10, healthy=4)),
    # heldout19 (stop 28): blind at 94f344c 7/8 both ways, 0/4 healthy runs warned. Its miss, r38 (PPO on
    # InvertedPendulum-v4 with 16 envs x SB3's 2,048-step rollout: two updates in the budget), had the Zoo's own
    # gamma blamed level with the rollout. Since a finding that blames only the reference's values yields to the run's
    # differences whether another finding explains them or not: 8/8, in-sample.
    ("heldout19", False, _line(8, 8, 8, healthy=4)),
    ("heldout19", True, _line(8, 8, 8, healthy=4)),
    # heldout20 (2026-12-02): blind at b6a74ff 8/8 both ways, 0/4 healthy runs warned; nothing read since, so
    # this pin is still the blind figure.
    ("heldout20", False, _line(8, 8, 8, healthy=4)),
    ("heldout20", True, _line(8, 8, 8, healthy=4)),
    # heldout21 (2026-12-02): blind at fc7649d 5/7 strict, 6/7 lenient, 0/4 healthy runs warned. v81's top change
    # was its exact fix, shared_network=false ("disable"), which the scorer held against the label's "decrease";
    # since a switch turned off counts as lowered: 6/7 strict, 7/7 lenient, in-sample. Its other miss, v31
    # (reward_scale=0.01 with ent_coef=0.01), was given ent_coef=0.0, the acceptable key; since heldout73 (2026-12-06)
    # a reward scaled down explains entropy_no_decrease before an ent_coef in the tuned range: reward_scale=1.0,
    # 7/7 in-sample.
    ("heldout21", False, _line(7, 7, 7, healthy=4)),
    ("heldout21", True, _line(7, 7, 7, healthy=4)),
    # heldout22 (2026-12-02): blind at 8d49b84 5/8 strict, 6/8 lenient both ways, 0/4 healthy runs warned. v24 (PPO
    # n_steps=2048 with batch_size=2048: one minibatch per epoch) got a budget finding whose revert, n_steps=32, was
    # refused with the run's batch_size=2048, so it suggested nothing; a refused change set is now completed with
    # the revert of another deviation that makes it trainable (batch_size=32): 7/8 lenient, in-sample. v29 (DQN
    # tau=0.005, SAC's soft update) got a budget increase; a soft update's time constant (interval / tau) now sizes
    # the budget a DQN config needs, and a deviation that slows an off-policy run's pace (a lower tau, a later
    # start, fewer gradient steps, ...) explains its budget finding, whose revert then leads: 6/8 strict, 8/8
    # lenient, in-sample. v35 (hidden_sizes=[256, 256] with relu) gets activation=tanh, the acceptable key. Since
    # heldout72 (2026-12-06): a user's own classes, off-policy (tests/envs/heldout72.py: Slalom, continuous
    # steering for sac and td3, and Orchard for dqn and qrdqn). Blind at 3334fe2 (its merge; the diagnosis of
    # 41709b6) 5/5 strict and lenient both ways, 0/3 healthy runs warned; pinned after the scoring.
    ("heldout72", False, _line(5, 5, 5, healthy=3)),
    ("heldout72", True, _line(5, 5, 5, healthy=3)),
    # heldout73 (2026-12-06) a larger PPO minibatch explains budget_exhausted_improving first (PPO takes n_epochs /
    # batch_size gradient steps per env step): v24 gets batch_size=32 itself, 7/8 strict, in-sample.
    ("heldout22", False, _line(8, 7, 8, healthy=4)),
    ("heldout22", True, _line(8, 7, 8, healthy=4)),
    # heldout23 (2026-12-02): blind at c659719 5/6 strict, 6/6 lenient both ways, 0/3 healthy runs warned. Its miss,
    # v21 (A2C with SAC's hidden_sizes=[256, 256] and relu), gets activation=tanh first, the acceptable key, as
    # heldout22 v35 did: preset_deviation lists both reverts, and gsolve fix's winner there reverted both.
    ("heldout23", False, _line(6, 5, 6, healthy=3)),
    ("heldout23", True, _line(6, 5, 6, healthy=3)),
    # heldout24 (2026-12-02): blind at 4d7d00c 6/8 strict, 7/8 lenient both ways, 0/3 healthy runs warned. w06 (A2C
    # with SAC's network) gets activation=tanh first, the acceptable key, as heldout22 v35 and heldout23 v21 did.
    # w04 (PPO with the Zoo entry's normalize dropped) gets explained_variance_low with no change: the Zoo's on/off
    # keys are not compared. Comparing them (tried after the scoring) gave w04 normalize_observations but moved
    # heldout18 r18 and r49 (shared trunk and unnormalised returns) from shared_network to normalize_rewards, the
    # acceptable key: not adopted.
    ("heldout24", False, _line(8, 6, 7, healthy=3)),
    ("heldout24", True, _line(8, 6, 7, healthy=3)),
    # heldout25 (2026-12-02): blind at 1dcfe90 (the diagnosis of 9efb7a2) 7/7 strict and lenient both ways, 0/3
    # healthy runs warned; pinned here after the scoring, unread.
    ("heldout25", False, _line(7, 7, 7, healthy=3)),
    ("heldout25", True, _line(7, 7, 7, healthy=3)),
    # heldout26 (2026-12-02): blind at 0d3854a (the diagnosis of 2503689) 5/5 strict and lenient both ways, 0/3
    # healthy runs warned; pinned here after the scoring, unread.
    ("heldout26", False, _line(5, 5, 5, healthy=3)),
    ("heldout26", True, _line(5, 5, 5, healthy=3)),
    # heldout27 (2026-12-03): blind at 2a4a0e1 7/7 strict and lenient both ways, 0/3 healthy runs warned (its first
    # scoring, at 03c0f96, crashed on gradient_steps=0: cf7525f mended the division only); pinned after, unread.
    ("heldout27", False, _line(7, 7, 7, healthy=3)),
    ("heldout27", True, _line(7, 7, 7, healthy=3)),
    # heldout28 (2026-12-03): blind at f8b77dc 7/7 strict and lenient both ways, 0/3 healthy runs warned; pinned
    # after the scoring, unread.
    ("heldout28", False, _line(7, 7, 7, healthy=3)),
    ("heldout28", True, _line(7, 7, 7, healthy=3)),
    # heldout29 (2026-12-03): blind at f2674c8 (the merge) 7/7 strict and lenient both ways, 0/3 healthy runs warned;
    # pinned after the scoring, unread.
    ("heldout29", False, _line(7, 7, 7, healthy=3)),
    ("heldout29", True, _line(7, 7, 7, healthy=3)),
    # heldout30 (2026-12-03): blind at bb92ee7 (the merge) 6/6 strict and lenient both ways, 0/3 healthy runs warned;
    # pinned after the scoring, unread.
    ("heldout30", False, _line(6, 6, 6, healthy=3)),
    ("heldout30", True, _line(6, 6, 6, healthy=3)),
    # heldout31 (2026-12-03): blind at 6984f98 (after the crash it hit, hidden_sizes=[], was mended) 3/5 strict and
    # lenient both ways, 0/3 healthy runs warned: q14 and q15 (no hidden layer) blamed the budget. Read after the
    # scoring; network_too_small then took hidden_sizes=[] for the smallest network (it had skipped the empty list
    # as no setting): 5/5 since (in-sample).
    ("heldout31", False, _line(5, 5, 5, healthy=3)),
    ("heldout31", True, _line(5, 5, 5, healthy=3)),
    # heldout32 (2026-12-03): blind at 69e7c9f (the merge) 6/6 strict and lenient both ways, 0/3 healthy runs warned;
    # pinned after the scoring, unread.
    ("heldout32", False, _line(6, 6, 6, healthy=3)),
    ("heldout32", True, _line(6, 6, 6, healthy=3)),
    # heldout33 (2026-12-03): blind at 9b74b25 (the merge) 6/6 strict and lenient both ways, 0/3 healthy runs warned;
    # pinned after the scoring, unread.
    ("heldout33", False, _line(6, 6, 6, healthy=3)),
    ("heldout33", True, _line(6, 6, 6, healthy=3)),
    # heldout34 (2026-12-03): blind at 29a27c4 (the merge) 5/5 strict and lenient both ways, 0/3 healthy runs warned;
    # pinned after the scoring, unread.
    ("heldout34", False, _line(5, 5, 5, healthy=3)),
    ("heldout34", True, _line(5, 5, 5, healthy=3)),
    # heldout35 (2026-12-03): blind at 85a3fa9 (the merge) 5/5 strict and lenient both ways, 0/3 healthy runs warned;
    # pinned after the scoring, unread.
    ("heldout35", False, _line(5, 5, 5, healthy=3)),
    ("heldout35", True, _line(5, 5, 5, healthy=3)),
    # heldout36 (2026-12-03): blind at 4e2aebb (the merge) 5/5 strict and lenient both ways, 0/3 healthy runs warned;
    # pinned after the scoring, unread.
    ("heldout36", False, _line(5, 5, 5, healthy=3)),
    ("heldout36", True, _line(5, 5, 5, healthy=3)),
    # heldout37 (2026-12-03): blind at cb50561 (the merge) 5/5 strict and lenient both ways, 0/3 healthy runs warned;
    # pinned after the scoring, unread.
    ("heldout37", False, _line(5, 5, 5, healthy=3)),
    ("heldout37", True, _line(5, 5, 5, healthy=3)),
    # heldout38 (2026-12-04): blind at 36332a0 (the merge) 3/4 strict and lenient both ways, 0/3 healthy runs warned;
    # read after the scoring: g02's buffer_size=256 (the Zoo's 100,000) ranked second, because the Zoo's off-policy
    # numbers were not among those a run is held against; with them (zoo._COMPARED), 4/4 (in-sample from now on).
    ("heldout38", False, _line(4, 4, 4, healthy=3)),
    ("heldout38", True, _line(4, 4, 4, healthy=3)),
    # heldout39 (2026-12-04): blind at 9d8f345 (the merge) 4/4 strict and lenient both ways, 0/3 healthy runs warned;
    # pinned after the scoring, unread.
    ("heldout39", False, _line(4, 4, 4, healthy=3)),
    ("heldout39", True, _line(4, 4, 4, healthy=3)),
    # heldout40 (2026-12-04): blind at a926b1d (the merge) 4/4 strict and lenient both ways, 0/3 healthy runs warned;
    # pinned after the scoring, unread.
    ("heldout40", False, _line(4, 4, 4, healthy=3)),
    ("heldout40", True, _line(4, 4, 4, healthy=3)),
    # heldout41 (2026-12-04): blind at f591262 (the merge) 5/5 strict and lenient both ways, 0/3 healthy runs warned;
    # pinned after the scoring, unread.
    ("heldout41", False, _line(5, 5, 5, healthy=3)),
    ("heldout41", True, _line(5, 5, 5, healthy=3)),
    # heldout42 (2026-12-04): blind at e2a8497 (the merge) 5/5 strict and lenient both ways, 0/3 healthy runs warned
    # (4 of the 5 faults outside MiniGrid: CartPole-v0 ppo/dqn, Taxi-v4 dqn, FrozenLake-v1 a2c); pinned after the
    # scoring, unread.
    ("heldout42", False, _line(5, 5, 5, healthy=3)),
    ("heldout42", True, _line(5, 5, 5, healthy=3)),
    # heldout43 (2026-12-04): blind at 2487854 (the merge) 4/4 strict and lenient both ways, 0/3 healthy runs warned
    # (no MiniGrid: Acrobot-v1 qrdqn, Taxi-v4 dqn, MountainCar-v0 dqn x2); pinned after the scoring, unread.
    ("heldout43", False, _line(4, 4, 4, healthy=3)),
    ("heldout43", True, _line(4, 4, 4, healthy=3)),
    # heldout44 (2026-12-04): blind at 98120d0 (the merge) 3/3 strict and lenient both ways, 0/3 healthy runs warned
    # (MountainCar-v0:dqn and Taxi-v4:dqn target_update_interval, CartPole-v0:qrdqn buffer_size=1); pinned after the
    # scoring, unread.
    ("heldout44", False, _line(3, 3, 3, healthy=3)),
    ("heldout44", True, _line(3, 3, 3, healthy=3)),
    # heldout45 (2026-12-05): blind at a3a8295 (the merge) 3/3 strict and lenient both ways, 0/3 healthy runs warned
    # (CartPole-v0:dqn and Acrobot-v1:dqn buffer_size=1, CartPole-v1:qrdqn batch_size=1); pinned after the scoring,
    # unread.
    ("heldout45", False, _line(3, 3, 3, healthy=3)),
    ("heldout45", True, _line(3, 3, 3, healthy=3)),
    # heldout46 (2026-12-05): blind at f4b5a01 (the merge) 3/3 strict and lenient both ways, 0/3 healthy runs warned
    # (FrozenLake-v1:qrdqn gamma=0.1, InvertedPendulum-v5:a2c and -v4:a2c reward_scale=0.0001); pinned after the
    # scoring, unread.
    ("heldout46", False, _line(3, 3, 3, healthy=3)),
    ("heldout46", True, _line(3, 3, 3, healthy=3)),
    # heldout47 (2026-12-05): blind at 051cf6d (the merge) 4/4 strict and lenient both ways, 0/3 healthy runs warned
    # (Acrobot-v1:a2c ent_coef=10, InvertedPendulum-v4:ppo max_grad_norm=1e-6, InvertedPendulum-v4:a2c ent_coef=100,
    # InvertedPendulum-v5:ppo target_kl=1e-6); pinned after the scoring, unread.
    ("heldout47", False, _line(4, 4, 4, healthy=3)),
    ("heldout47", True, _line(4, 4, 4, healthy=3)),
    # heldout48 (2026-12-05): blind at 75907b3 (the merge) 3/3 strict and lenient both ways, 0/3 healthy runs warned
    # (Acrobot-v1:a2c and MountainCarContinuous-v0:ppo max_grad_norm=1e-6, Taxi-v4:dqn gradient_steps=0); pinned after
    # the scoring, unread.
    ("heldout48", False, _line(3, 3, 3, healthy=3)),
    ("heldout48", True, _line(3, 3, 3, healthy=3)),
    # heldout49 (2026-12-05): blind at a1e54cd (the merge) 2/3 strict and lenient both ways, 0/3 healthy runs warned
    # (InvertedPendulum-v5:sac learning_starts=100000 named; CartPole-v1:qrdqn max_grad_norm=1e-6 named; CartPole-v0:qrdqn
    # max_grad_norm=1e-6 missed: its top finding asks for a longer budget); pinned after the scoring. 3/3 since a
    # mean Q that would stay a small fraction of its returns' values however long it rose is not "still learning"
    # (thresholds.Q_NEGLIGIBLE, 2026-12-06: in-sample, written after reading c06).
    ("heldout49", False, _line(3, 3, 3, healthy=3)),
    ("heldout49", True, _line(3, 3, 3, healthy=3)),
    # heldout50 (2026-12-05): blind at c88bc18 (the merge) 4/4 strict and lenient both ways, 0/3 healthy runs warned
    # (FrozenLake-v1:dqn buffer_size=64 and hidden_sizes=[1], FrozenLake8x8-v1:a2c vf_coef=0.0, CliffWalking-v1:dqn
    # learning_starts=1000000); pinned after the scoring, unread.
    ("heldout50", False, _line(4, 4, 4, healthy=3)),
    ("heldout50", True, _line(4, 4, 4, healthy=3)),
    # heldout51 (2026-12-05): blind at 47371a2 (the merge) 2/3 strict and lenient both ways, 0/3 healthy runs warned
    # (CartPole-v0:a2c reward_clip=0.0001 and InvertedPendulum-v4:td3 gradient_steps=0 named; CartPole-v0:ppo
    # adaptive_lr_kl=1e-6 scored a miss although its top change was adaptive_lr_kl=null: the scorer did not know that
    # null is no limit for adaptive_lr_kl, as for target_kl, so "disable" did not match the label's "increase").
    # Today 3/3 after that scorer fix (models.UNLIMITED_WHEN_NULL; no diagnosis output changed); the blind record in
    # bench/analysis/blind_heldout.json stays 2/3.
    ("heldout51", False, _line(3, 3, 3, healthy=3)),
    ("heldout51", True, _line(3, 3, 3, healthy=3)),
    # heldout52 (2026-12-06): blind at d9f3351 (the merge) 1/1 strict and lenient both ways, 0/3 healthy runs warned
    # (FrozenLake-v1:ppo clip_range=0.002; the helper kept 1 faulty row of 9 candidates); pinned after the scoring.
    ("heldout52", False, _line(1, 1, 1, healthy=3)),
    ("heldout52", True, _line(1, 1, 1, healthy=3)),
    # heldout53 (2026-12-06): blind at 7cb2a51 (after its merge 634550e and the scorer's reading of "change", decided
    # before the scoring) 3/3 strict and lenient both ways, 0/3 healthy runs warned; pinned after the scoring.
    ("heldout53", False, _line(3, 3, 3, healthy=3)),
    ("heldout53", True, _line(3, 3, 3, healthy=3)),
    # heldout55 (2026-12-06): blind at 52cf32d (its merge; the diagnosis of 41a95a6) 4/4 strict and lenient both ways,
    # 0/3 healthy runs warned; pinned after the scoring.
    ("heldout55", False, _line(4, 4, 4, healthy=3)),
    ("heldout55", True, _line(4, 4, 4, healthy=3)),
    # heldout56 (2026-12-06): blind at 6844d75 (its merge; the diagnosis of 41a95a6) 3/3 strict and lenient both ways,
    # 0/3 healthy runs warned; pinned after the scoring.
    ("heldout56", False, _line(3, 3, 3, healthy=3)),
    ("heldout56", True, _line(3, 3, 3, healthy=3)),
    # heldout54 (2026-12-06): blind at 67ce0c1 (its merge; the diagnosis of 41a95a6) 3/3 strict and lenient both ways,
    # 0/3 healthy runs warned; pinned after the scoring.
    ("heldout54", False, _line(3, 3, 3, healthy=3)),
    ("heldout54", True, _line(3, 3, 3, healthy=3)),
    # heldout57 (2026-12-06): blind at 068018f (its merge; the diagnosis of 41a95a6) 3/3 strict and lenient both ways,
    # 0/3 healthy runs warned; pinned after the scoring.
    ("heldout57", False, _line(3, 3, 3, healthy=3)),
    ("heldout57", True, _line(3, 3, 3, healthy=3)),
    # heldout58 (2026-12-06): blind at 7e1f726 (its merge; the diagnosis of 41a95a6) 2/2 strict and lenient both ways,
    # 0/3 healthy runs warned; pinned after the scoring.
    ("heldout58", False, _line(2, 2, 2, healthy=3)),
    ("heldout58", True, _line(2, 2, 2, healthy=3)),
    # heldout59 (2026-12-06): blind at 6a4017e (its merge; the diagnosis of 41a95a6) 2/3 strict and lenient both ways,
    # 0/3 healthy runs warned; pinned after the scoring. The miss, c09 (CartPole-v0:a2c shared_network=true, a
    # 30,000 budget where the set's healthy CartPole-v0:a2c run needed 40,000): budget_exhausted_improving.
    ("heldout59", False, _line(3, 2, 2, healthy=3)),
    ("heldout59", True, _line(3, 2, 2, healthy=3)),
    # heldout61 (2026-12-06): blind at 5142409 (its merge; the diagnosis of 41a95a6) 3/4 strict and lenient both ways,
    # 0/3 healthy runs warned; pinned after the scoring. The miss, c20 (FrozenLake-v1:dqn with env_kwargs map_name
    # 8x8: the planted key changes the task): budget_ends_while_learning.
    # In-sample since: c20 (the 8x8 map) gets threshold_set_for_default_task, env_kwargs={} (written after reading it).
    ("heldout61", False, _line(4, 4, 4, healthy=3)),
    ("heldout61", True, _line(4, 4, 4, healthy=3)),
    # heldout60 (2026-12-06): blind at d5e4c3d (its merge; the diagnosis of 41a95a6) 3/3 strict and lenient both ways,
    # 0/3 healthy runs warned; pinned after the scoring.
    ("heldout60", False, _line(3, 3, 3, healthy=3)),
    ("heldout60", True, _line(3, 3, 3, healthy=3)),
    # heldout62 (2026-12-06): blind at 071d2f0 (its merge; the diagnosis of 41a95a6) 1/2 strict and lenient both ways,
    # 0/3 healthy runs warned; pinned after the scoring. The miss, c05 (FrozenLake-v1:a2c on the 8x8 map: the planted
    # key changes the task): budget_exhausted_improving.
    # In-sample since: c05 gets threshold_set_for_default_task, env_kwargs={} (written after reading it).
    ("heldout62", False, _line(2, 2, 2, healthy=3)),
    ("heldout62", True, _line(2, 2, 2, healthy=3)),
    # heldout63 (2026-12-06): blind at ed8839c (its merge; the diagnosis of 41a95a6) 3/3 strict and lenient both ways,
    # 0/3 healthy runs warned; pinned after the scoring. Its c06 repeats heldout61 c11 (Taxi-v4:dqn n_steps=200) on
    # another seed: the two sets were made at once.
    ("heldout63", False, _line(3, 3, 3, healthy=3)),
    ("heldout63", True, _line(3, 3, 3, healthy=3)),
    # heldout64 (2026-12-06): blind at 10a3512 (its merge; the diagnosis of fc91518) 1/2 strict and lenient both ways,
    # 0/3 healthy runs warned; pinned after the scoring. The miss, c02 (FrozenLake-v1:ppo on the 8x8 map, a fault type
    # seen in heldout61/62 before threshold_above_optimum was written): reward_threshold=0.4 first, env_kwargs={}
    # second.
    ("heldout64", False, _line(2, 1, 1, healthy=3)),
    ("heldout64", True, _line(2, 1, 1, healthy=3)),
    # heldout65 (2026-12-06): blind at a0aeb4d (its merge; the diagnosis of eab7619) 0/2 strict and lenient both ways,
    # 0/3 healthy runs warned; pinned after the scoring. Both misses (Taxi-v4:dqn, exploration_initial_eps=0 and
    # exploration_fraction=0, runs that reached a perfect policy's level in their last 2 and 3 evaluations) got
    # threshold_above_optimum. In-sample since: that finding now needs the run to have sat at that level for as many
    # evaluations as a perfect policy needs to solve once (about 5 on Taxi-v4), so both get exploration_ends_too_early.
    ("heldout65", False, _line(2, 2, 2, healthy=3)),
    ("heldout65", True, _line(2, 2, 2, healthy=3)),
    # heldout66 (2026-12-06): blind at 9b0bd7c (its merge; the diagnosis of dde3df4) 3/3 strict and lenient both ways,
    # 0/3 healthy runs warned; pinned after the scoring.
    ("heldout66", False, _line(3, 3, 3, healthy=3)),
    ("heldout66", True, _line(3, 3, 3, healthy=3)),
    # heldout67 (2026-12-06): blind at 40efe66 (its merge; the diagnosis of dde3df4) 1/2 strict and lenient both ways,
    # 0/3 healthy runs warned; pinned after the scoring. The miss, c31 (MountainCarContinuous-v0:ppo ortho_init=true):
    # explained_variance_low, with no change to suggest.
    ("heldout67", False, _line(2, 1, 1, healthy=3)),
    ("heldout67", True, _line(2, 1, 1, healthy=3)),
    # heldout68 (2026-12-06): blind at c9d0a9b (its merge; the diagnosis of dde3df4) 3/3 strict and lenient both ways,
    # 0/3 healthy runs warned; pinned after the scoring.
    ("heldout68", False, _line(3, 3, 3, healthy=3)),
    ("heldout68", True, _line(3, 3, 3, healthy=3)),
    # heldout69 (2026-12-06): the first set on a user's own environment classes (tests/envs/heldout69.py, written by
    # the helper: nothing to revert to, no Zoo entry, no earlier run). Blind at dd78456 (its merge; the diagnosis of
    # dde3df4) 5/5 strict and lenient both ways, 0/3 healthy runs warned; pinned after the scoring.
    ("heldout69", False, _line(5, 5, 5, healthy=3)),
    ("heldout69", True, _line(5, 5, 5, healthy=3)),
    # heldout70 (2026-12-06): a user's own classes again (tests/envs/heldout70.py: LaneKeep, continuous steering, and
    # ShuttleDock). Blind at 250be23 (its merge; the diagnosis of dde3df4) 5/5 strict and lenient both ways, 0/3
    # healthy runs warned; pinned after the scoring.
    ("heldout70", False, _line(5, 5, 5, healthy=3)),
    ("heldout70", True, _line(5, 5, 5, healthy=3)),
    # heldout71 (2026-12-06): a user's own classes (tests/envs/heldout71.py: Elevator, a Dict observation, and
    # FruitCatch). Blind at 9f53b49 (its merge; the diagnosis of dde3df4) 5/5 strict and lenient both ways, 0/3
    # healthy runs warned; pinned after the scoring.
    ("heldout71", False, _line(5, 5, 5, healthy=3)),
    ("heldout71", True, _line(5, 5, 5, healthy=3)),
    # heldout73 (2026-12-06): a user's own classes (tests/envs/heldout73.py: FruitCatch, ShopShelf with a
    # MultiDiscrete observation) trained from a user's own tuned config (2-3 settings off gsolve's defaults in every
    # row's base), each fault one more key. Blind at 1c2877e (its merge; the diagnosis of dde3df4) 4/6 strict and
    # lenient both ways, 0/3 healthy runs warned; pinned after the scoring. The misses, c03 (a2c reward_scale=0.001)
    # and c07 (ppo batch_size=2048): horizon_too_short blamed the user config's own gamma (0.9 on 28-step episodes,
    # 0.95 on 70-step ones) by comparing it with gsolve's defaults, which are not tuned for the env. In-sample since:
    # against the defaults a horizon is too short only on episodes at least 10 horizons long, a reward scaled down
    # explains entropy_no_decrease (c03: reward_scale=1.0), and a larger PPO minibatch explains
    # budget_exhausted_improving first (c07: batch_size=64): 6/6.
    ("heldout73", False, _line(6, 6, 6, healthy=3)),
    ("heldout73", True, _line(6, 6, 6, healthy=3)),
    # heldout74 (2026-12-06): a user's own classes and tuned configs again (tests/envs/heldout74.py: MoleWhack and
    # PaintMixer, continuous actions). Blind at e690b93 (its merge; the diagnosis of 41709b6) 4/5 strict and lenient
    # both ways, 0/3 healthy runs warned; pinned after the scoring. The miss, c02 (a2c reward_scale=0.0001):
    # budget_exhausted_improving, blaming the user's n_steps. In-sample since: a policy still at entropy_no_decrease's
    # share of a uniform policy's entropy is not "still improving", so entropy_no_decrease leads with
    # reward_scale=1.0: 5/5.
    ("heldout74", False, _line(5, 5, 5, healthy=3)),
    ("heldout74", True, _line(5, 5, 5, healthy=3)),
    # heldout75 (2026-12-06): a user's own classes and tuned configs (tests/envs/heldout75.py: Angler and
    # RecyclingSorter, a Dict observation). Blind at af2a7eb (its merge; the diagnosis of de553fc) 5/5 strict and
    # lenient both ways, 0/3 healthy runs warned; pinned after the scoring.
    ("heldout75", False, _line(5, 5, 5, healthy=3)),
    ("heldout75", True, _line(5, 5, 5, healthy=3)),
    # heldout76 (2026-12-06): a user's own classes and tuned configs, off-policy (tests/envs/heldout76.py: Telescope
    # for SAC and TD3, Junction for DQN and QR-DQN). Blind at 059ae66 (its merge; the diagnosis of de553fc) 4/4
    # strict and lenient both ways, 0/3 healthy runs warned; pinned after the scoring.
    ("heldout76", False, _line(4, 4, 4, healthy=3)),
    ("heldout76", True, _line(4, 4, 4, healthy=3)),
    # heldout77 (2026-12-06): a user's own classes and tuned configs (tests/envs/heldout77.py: SafeCracker, a
    # MultiDiscrete observation, for PPO; PuttingGreen for A2C and REINFORCE). Blind at 87ea024 (its merge; the
    # diagnosis of de553fc) 5/5 strict and lenient both ways, 0/3 healthy runs warned; pinned after the scoring.
    ("heldout77", False, _line(5, 5, 5, healthy=3)),
    ("heldout77", True, _line(5, 5, 5, healthy=3)),
    # heldout78 (2026-12-06): a user's own classes and tuned configs, off-policy (tests/envs/heldout78.py:
    # Pollinator for SAC and TD3, GridBattery for DQN and QR-DQN). Blind at ae07684 (its merge; the diagnosis of
    # de553fc) 4/5 strict and lenient both ways, 0/3 healthy runs warned; pinned after the scoring. The miss, c02
    # (sac target_entropy=2.0): q_value_divergence, blaming the learning rate: the temperature rose 65x in the
    # 15,000-step run, under the 100x runaway bar. In-sample since: with a target no squashed policy can reach,
    # any rise of the temperature is the runaway, so the divergence is the temperature's and
    # entropy_target_unreachable leads with target_entropy=null: 5/5.
    ("heldout78", False, _line(5, 5, 5, healthy=3)),
    ("heldout78", True, _line(5, 5, 5, healthy=3)),
    # heldout79 (2026-12-06): a user's own classes and tuned configs (tests/envs/heldout79.py: SeasonalTrader, Box
    # actions, for PPO and A2C; Pancake, a Dict observation). Blind at 6ba3323 (its merge; the diagnosis of de553fc)
    # 5/5 strict and lenient both ways, 0/3 healthy runs warned; pinned after the scoring.
    ("heldout79", False, _line(5, 5, 5, healthy=3)),
    ("heldout79", True, _line(5, 5, 5, healthy=3)),
    # heldout80 (2026-12-06): a user's own classes and tuned configs (tests/envs/heldout80.py: Forager, a Tuple
    # observation, for PPO and A2C; Wildfire, a MultiBinary observation, for DQN and A2C). Blind at 1d011a6 (its
    # merge; the diagnosis of de553fc) 5/5 strict and lenient both ways, 0/3 healthy runs warned; pinned after the
    # scoring.
    ("heldout80", False, _line(5, 5, 5, healthy=3)),
    ("heldout80", True, _line(5, 5, 5, healthy=3)),
    # heldout81 (2026-12-06): a user's own classes and tuned configs (tests/envs/heldout81.py: TackingDinghy for
    # A2C and DQN, BalloonPilot, Box actions, for PPO). Blind at a1fcf6f (its merge; the diagnosis of 09d326e) 5/5
    # strict and lenient both ways, 0/3 healthy runs warned; pinned after the scoring.
    ("heldout81", False, _line(5, 5, 5, healthy=3)),
    ("heldout81", True, _line(5, 5, 5, healthy=3)),
    # heldout82 (2026-12-06): a user's own classes and tuned configs (tests/envs/heldout82.py: DrumTapper, a Dict
    # observation, for PPO and DQN; HandGameRival for A2C and DQN). Blind at 10a0dc9 (its merge; the diagnosis of
    # 09d326e) 5/5 strict and lenient both ways, 0/3 healthy runs warned; pinned after the scoring.
    ("heldout82", False, _line(5, 5, 5, healthy=3)),
    ("heldout82", True, _line(5, 5, 5, healthy=3)),
    # heldout83 (2026-12-06): a user's own classes and tuned configs, off-policy (tests/envs/heldout83.py:
    # GantryHoist for SAC and TD3, Sheepdog for DQN and QR-DQN). Blind at 56e5e9a (its merge; the diagnosis of
    # 09d326e) 6/6 strict and lenient both ways, 0/3 healthy runs warned; pinned after the scoring. Its c05 (SAC
    # target_entropy=2.0) is heldout78 c02's fault on another class: right, blind, since 09d326e.
    ("heldout83", False, _line(6, 6, 6, healthy=3)),
    ("heldout83", True, _line(6, 6, 6, healthy=3)),
    # heldout84 (2026-12-06): a user's own classes and tuned configs (tests/envs/heldout84.py: TrailHiker, a
    # MultiDiscrete observation, for PPO and REINFORCE; SheepHerder for A2C and PPO). Blind at 48b5e5d (its merge; the
    # diagnosis of 09d326e) 5/6 strict and lenient both ways, 0/3 healthy runs warned; pinned after the scoring. The
    # miss, c03 (a2c reward_scale=1000): budget_exhausted_improving, blaming the user's n_steps. Right since the
    # change written after reading it (value_targets_too_large for A2C too, and on the critic's measured value loss):
    # 6/6, in-sample.
    ("heldout84", False, _line(6, 6, 6, healthy=3)),
    ("heldout84", True, _line(6, 6, 6, healthy=3)),
    # heldout85 (2026-12-06): a user's own classes and tuned configs (tests/envs/heldout85.py: ToadCrossing, a Dict
    # observation, for PPO; GearShifter for PPO and REINFORCE). Blind at 9e61610 (its merge; the diagnosis of 54da58c)
    # 4/4 strict and lenient both ways, 0/3 healthy runs warned; pinned after the scoring.
    ("heldout85", False, _line(4, 4, 4, healthy=3)),
    ("heldout85", True, _line(4, 4, 4, healthy=3)),
    # heldout86 (2026-12-06): a user's own classes and tuned configs, off-policy (tests/envs/heldout86.py:
    # LaserEngraver for SAC and TD3, PitStrategist for DQN and QR-DQN). Blind at 6855eff (its merge; the diagnosis
    # of 54da58c) 5/5 strict and lenient both ways, 0/3 healthy runs warned; pinned after the scoring.
    ("heldout86", False, _line(5, 5, 5, healthy=3)),
    ("heldout86", True, _line(5, 5, 5, healthy=3)),
    # heldout87 (2026-12-06): a user's own classes and tuned configs, A2C first (tests/envs/heldout87.py:
    # SwitchboardOperator, a MultiBinary observation, for A2C; GlassBlower, Box actions, for A2C and PPO). Blind at
    # db366b4 (its merge; the diagnosis of 54da58c) 4/5 strict and lenient both ways, 0/3 healthy runs warned; pinned
    # after the scoring. The miss, c19 (a2c activation=relu on GlassBlower): budget_exhausted_improving, blaming the
    # user's n_steps. Right since the change written after reading it (a run is "close to solving" only when one of
    # its last evaluations is; grad_norm_explosion names ReLU layers a run chose over tanh): 5/5, in-sample.
    ("heldout87", False, _line(5, 5, 5, healthy=3)),
    ("heldout87", True, _line(5, 5, 5, healthy=3)),
    # heldout88 (2026-12-06): a user's own classes and tuned configs (tests/envs/heldout88.py: BarTap for PPO and
    # A2C; ChangeMaker, a MultiDiscrete observation, for REINFORCE). Blind at 96f0cea (its merge; the diagnosis of
    # 1509043) 3/5 strict and lenient both ways, 0/3 healthy runs warned; pinned after the scoring. The misses,
    # c17 (a2c reward_scale=0.001) and c25 (ppo n_epochs=1): budget_exhausted_improving, blaming the user's n_steps.
    # c17 is right since the rule written after reading it (reward_scale_shrinks_gradient), c25 since PPO's n_epochs
    # leads budget_exhausted_improving's reverts before the rollout's: 5/5, in-sample.
    ("heldout88", False, _line(5, 5, 5, healthy=3)),
    ("heldout88", True, _line(5, 5, 5, healthy=3)),
    # heldout89 (2026-12-06): a user's own classes and tuned configs, off-policy (tests/envs/heldout89.py:
    # PotteryWheel for SAC and TD3, FerryLoader for DQN and QR-DQN). Blind at 6317c06 (its merge; the diagnosis of
    # a252248) 4/5 strict and lenient both ways, 0/3 healthy runs warned; pinned after the scoring. The miss, c07
    # (td3 action_noise_std=10, a weak fault by the helper's account): return_collapse, blaming the user's batch_size.
    # Right since the rule written after reading it (action_noise_saturates): 5/5, in-sample.
    ("heldout89", False, _line(5, 5, 5, healthy=3)),
    ("heldout89", True, _line(5, 5, 5, healthy=3)),
    # heldout90 (2026-12-06): a user's own classes and tuned configs, off-policy (tests/envs/heldout90.py: Detectorist
    # for SAC and TD3, HeadWaiter for DQN and QR-DQN; 4 faulty rows, the helper's fifth dropped). Blind at 426b77a (its
    # merge; the diagnosis of 6e7d34d) 4/4 strict and lenient both ways, 0/3 healthy runs warned; pinned after the
    # scoring.
    ("heldout90", False, _line(4, 4, 4, healthy=3)),
    ("heldout90", True, _line(4, 4, 4, healthy=3)),
    # heldout91 (2026-12-06): a user's own classes and tuned configs, on-policy (tests/envs/heldout91.py: ScubaAscent
    # for PPO and REINFORCE, NightLamplighter, a MultiDiscrete observation, for A2C). Blind at 1d00256 (its merge; the
    # diagnosis of e0ceabc) 4/5 strict and lenient both ways, 0/3 healthy runs warned; pinned after the scoring. c03
    # (a2c reward_scale=0.0001) is reward_scale_shrinks_gradient's first blind catch. The miss, c08 (reinforce
    # normalize_advantages=false): budget_exhausted_improving, blaming the user's episodes_per_update. Right since the
    # change written after reading it (train_solved_eval_not names a policy that never committed, with A2C or
    # REINFORCE's advantages not normalised): 5/5, in-sample.
    ("heldout91", False, _line(5, 5, 5, healthy=3)),
    ("heldout91", True, _line(5, 5, 5, healthy=3)),
    # heldout92 (2026-12-06): a user's own classes and tuned configs, on-policy (tests/envs/heldout92.py: Archer for
    # PPO, HanoiPuzzle, a MultiDiscrete observation, for A2C and PPO). Blind at 0587219 (its merge; the diagnosis of
    # 6e7d34d) 4/5 strict and lenient both ways, 0/3 healthy runs warned; pinned after the scoring. The miss, c08 (ppo
    # shared_network=true, a fault that slows rather than breaks by the helper's account): budget_exhausted_improving,
    # blaming the user's batch_size.
    ("heldout92", False, _line(5, 4, 4, healthy=3)),
    ("heldout92", True, _line(5, 4, 4, healthy=3)),
])
def test_held_out_sets_keep_todays_scores(score: ModuleType, capsys: pytest.CaptureFixture[str],
                                          folder: str, no_preset: bool, expected: str) -> None:
    assert score.main(ROOT / "tests" / "fixtures" / folder, no_preset=no_preset) == 0
    assert capsys.readouterr().out.rstrip().endswith(expected)


def _screened(confirmed: int, planted: int, strict: int, lenient: int, lucky: str) -> str:
    return (f"confirmed faults (config fails >= 2 of 3 seeds): {confirmed} of {planted}; top change right: "
            f"{strict}/{confirmed}; acceptable key: {lenient}/{confirmed}; not faults (config solves 2+ of 3 seeds): "
            f"{lucky}")


# Issue 21: a planted case is a fault only if its config fails on at least 2 of 3 seeds
# (bench/screen_faults.py wrote each set's seed_screen.json: the case's seed plus seeds +1000 and +1001).
# 13 of the 62 planted faults solve on 2 of 3 seeds: their one-seed label was bad luck. These re-scores
# are in-sample (every set's misses were read after its blind scoring).
@pytest.mark.parametrize(("folder", "no_preset", "expected"), [
    ("heldout", False, _screened(5, 8, 5, 5, "h04_s0, h05_s1, h09_s1")),
    ("heldout", True, _screened(5, 8, 3, 3, "h04_s0, h05_s1, h09_s1")),
    ("heldout2", False, _screened(7, 7, 7, 7, "none")),
    ("heldout2", True, _screened(7, 7, 6, 6, "none")),
    ("heldout3", False, _screened(6, 6, 6, 6, "none")),
    ("heldout3", True, _screened(6, 6, 6, 6, "none")),
    ("heldout4", False, _screened(8, 8, 8, 8, "none")),
    ("heldout4", True, _screened(8, 8, 8, 8, "none")),
    ("heldout5", False, _screened(5, 7, 4, 4, "p01_s153, p08_s151")),
    ("heldout5", True, _screened(5, 7, 4, 4, "p01_s153, p08_s151")),
    ("heldout6", False, _screened(4, 5, 4, 4, "r03_s203")),
    ("heldout7", False, _screened(4, 6, 4, 4, "s01_s251, s03_s257")),
    ("heldout8", False, _screened(5, 7, 5, 5, "t02_s282, t03_s275")),
    ("heldout9", False, _screened(5, 6, 5, 5, "u03_s308")),
    ("heldout9", True, _screened(5, 6, 5, 5, "u03_s308")),
    ("heldout10", False, _screened(14, 14, 14, 14, "none")),
    ("heldout10", True, _screened(14, 14, 14, 14, "none")),
    ("heldout11", False, _screened(13, 13, 13, 13, "none")),
    ("heldout12", False, _screened(15, 15, 15, 15, "none")),
    ("heldout13", False, _screened(9, 9, 9, 9, "none")),
    ("heldout14", False, _screened(11, 11, 11, 11, "none")),
    ("heldout15", False, _screened(11, 11, 11, 11, "none")),
])
def test_held_out_sets_scored_on_confirmed_faults(score: ModuleType, capsys: pytest.CaptureFixture[str],
                                                  folder: str, no_preset: bool, expected: str) -> None:
    assert score.main(ROOT / "tests" / "fixtures" / folder, no_preset=no_preset) == 0
    assert expected in capsys.readouterr().out


def test_a_blind_scoring_is_recorded_once_with_the_commit_that_scored_it(score: ModuleType, tmp_path: Path) -> None:
    path = tmp_path / "blind.json"
    entry = score.record(ROOT / "tests" / "fixtures" / "heldout12", path)
    assert (entry["faults"], entry["healthy"]) == (15, 4)
    bare = score.score(ROOT / "tests" / "fixtures" / "heldout12", no_preset=True)
    assert entry["nothing_to_revert"]["strict"] == bare["strict"] and entry["with_config_id"]["healthy_warned"] == 0
    assert entry["commit"] == score.diagnosis_commit() and entry["commit"] != "unknown"
    with pytest.raises(ValueError, match="scored blind once"):
        score.record(ROOT / "tests" / "fixtures" / "heldout12", path)
    assert list(json.loads(path.read_text(encoding="utf-8"))["sets"]) == ["heldout12"]


def test_scoring_a_folder_that_is_not_a_held_out_set_is_one_sentence(tmp_path: Path) -> None:
    import subprocess

    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "score_heldout.py"), str(tmp_path / "nosuch"),
                           "--record"], capture_output=True, text=True, check=False)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().endswith("scripts/make_heldout.py makes one)") and "is not a held-out set" in proc.stderr
