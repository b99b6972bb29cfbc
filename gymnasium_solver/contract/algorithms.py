"""What each training algorithm is, declared once: the ``Algo`` names and one row per algorithm
(``ALGORITHMS``). Every other list of algorithms (on/off-policy, replay, soft targets, epsilon-greedy,
the action spaces each takes, ours or Stable-Baselines3's, the metrics.csv columns each writes) is
derived from this table; tests/test_algorithms.py holds the code to that. Part of the contract:
imports nothing of ours but the metric names, never torch."""

from __future__ import annotations

from enum import StrEnum
from typing import NamedTuple

from gymnasium_solver.contract.metric_names import (
    ACTOR_CRITIC_PART_COLUMNS,
    COMMON_COLUMNS,
    PPO_COLUMNS,
    Q_NETWORK_PART_COLUMNS,
    REPLAY_COLUMNS,
    M,
)


class Algo(StrEnum):
    """The training algorithms; the one list argparse choices, MCP schemas and the config derive from."""

    PPO = "ppo"
    REINFORCE = "reinforce"
    DQN = "dqn"
    QRDQN = "qrdqn"
    A2C = "a2c"
    SAC = "sac"
    TD3 = "td3"
    TQC = "tqc"


# The action spaces an algorithm can act in: 'discrete' (Discrete) and 'box' (a 1-D Box), the kinds
# run.json's action_space records. Every algorithm takes Box observations (config/spaces.py).
DISCRETE, BOX = "discrete", "box"
OURS = "gymnasium-solver"  # the package an algorithm of our own ships in (gymnasium_solver/agents/)


class AlgoSpec(NamedTuple):
    """One algorithm. ``trainer`` is ``module:Class``: one of our agents (gymnasium_solver/agents/), or the
    Stable-Baselines3 class gymnasium_solver/agents/sb3.py drives, from the pip package ``package``."""

    algo: Algo
    title: str  # as papers and docs name it
    on_policy: bool  # learns only from experience its current policy collected
    replay: bool  # samples minibatches from a replay buffer
    soft_target: bool  # Polyak-averaged target networks by default (tau < 1); DQN copies (tau = 1)
    epsilon_greedy: bool  # explores by acting at random with probability epsilon (the DQN family)
    max_entropy: bool  # maximum-entropy RL with a learned temperature (ent_coef_auto: SAC, TQC)
    gae: bool  # an on-policy critic whose advantages are GAE(lambda) (gae_lambda)
    epochs: bool  # reuses each rollout for several epochs of minibatches (PPO); on-policy without: one step per update
    action_kinds: tuple[str, ...]
    trainer: str
    package: str
    zoo: bool  # the RL Zoo ships tuned hyperparameters for it under the same name (config/zoo.py)
    columns: tuple[str, ...]  # the metrics.csv columns a run of it writes, in order

    @property
    def native(self) -> bool:
        """Trained by our own agent (gymnasium_solver/agents/), not through Stable-Baselines3."""
        return self.package == OURS


_OFF_POLICY_COLUMNS = COMMON_COLUMNS + REPLAY_COLUMNS
_DQN_COLUMNS = _OFF_POLICY_COLUMNS + (M.TD_LOSS, M.EXPLORATION_RATE)
_SAC_COLUMNS = _OFF_POLICY_COLUMNS + (M.CRITIC_LOSS, M.ACTOR_LOSS, M.ENT_COEF_LOSS)
_TD3_COLUMNS = _OFF_POLICY_COLUMNS + (M.CRITIC_LOSS, M.ACTOR_LOSS)

# In this order: the on-policy family, then the DQN family, then off-policy actor-critics (the order
# messages list algorithms in; the Algo enum keeps its own order for argparse and schemas).
# fmt: off
ALGORITHMS: dict[Algo, AlgoSpec] = {spec.algo: spec for spec in (
    #       algo        title        on-pol replay soft   eps    maxent gae    epochs action kinds     trainer                    package              zoo    columns
    AlgoSpec(Algo.PPO, "PPO",        True,  False, False, False, False, True,  True,  (DISCRETE, BOX), "gymnasium_solver.agents.ppo:PPO",          OURS,                True,  PPO_COLUMNS),
    AlgoSpec(Algo.A2C, "A2C",        True,  False, False, False, False, True,  False, (DISCRETE, BOX), "gymnasium_solver.agents.a2c:A2C",          OURS,                True,  COMMON_COLUMNS),
    AlgoSpec(Algo.REINFORCE, "REINFORCE", True, False, False, False, False, False, False, (DISCRETE, BOX), "gymnasium_solver.agents.reinforce:Reinforce", OURS,     False, COMMON_COLUMNS),
    AlgoSpec(Algo.DQN, "DQN",        False, True,  False, True,  False, False, False, (DISCRETE,),     "gymnasium_solver.agents.dqn:DQN",          OURS,                True,  _DQN_COLUMNS),
    AlgoSpec(Algo.QRDQN, "QR-DQN",   False, True,  False, True,  False, False, False, (DISCRETE,),     "sb3_contrib:QRDQN",       "sb3-contrib",       True,  _DQN_COLUMNS),
    AlgoSpec(Algo.SAC, "SAC",        False, True,  True,  False, True,  False, False, (BOX,),          "stable_baselines3:SAC",   "stable-baselines3", True,  _SAC_COLUMNS),
    AlgoSpec(Algo.TD3, "TD3",        False, True,  True,  False, False, False, False, (BOX,),          "stable_baselines3:TD3",   "stable-baselines3", True,  _TD3_COLUMNS),
    AlgoSpec(Algo.TQC, "TQC",        False, True,  True,  False, True,  False, False, (BOX,),          "sb3_contrib:TQC",         "sb3-contrib",       True,  _SAC_COLUMNS),
)}
# fmt: on


def spec_of(algo: str) -> AlgoSpec | None:
    """The row of ``algo`` (an Algo or its name), None for a name we do not train (an imported run's)."""
    return ALGORITHMS.get(Algo(algo)) if algo in Algo._value2member_map_ else None


def _where(flag: str) -> frozenset[Algo]:
    return frozenset(a for a, s in ALGORITHMS.items() if getattr(s, flag))


# Derived lists. Algo is a StrEnum, so ``"sac" in SOFT_TARGET`` holds for plain strings too.
NATIVE = _where("native")
SB3 = frozenset(ALGORITHMS) - NATIVE
ON_POLICY = _where("on_policy")
OFF_POLICY = frozenset(ALGORITHMS) - ON_POLICY
REPLAY = _where("replay")
SOFT_TARGET = _where("soft_target")
HARD_TARGET = REPLAY - SOFT_TARGET  # a target network copied every target_update_interval (DQN, QR-DQN)
EPSILON_GREEDY = _where("epsilon_greedy")
MAX_ENTROPY = _where("max_entropy")
GAE = _where("gae")
# On-policy algorithms whose update is one gradient step on the rollout (A2C, REINFORCE): their update count is
# their gradient-step count.
ONE_STEP_UPDATE = ON_POLICY - _where("epochs")
ZOO = _where("zoo")
# Algorithm names in Algo order (argparse choices, messages).
NATIVE_ALGOS: tuple[Algo, ...] = tuple(a for a in Algo if a in NATIVE)


def takes(action_kind: str) -> list[str]:
    """The algorithms (names, in table order) that act in ``action_kind`` actions."""
    return [a.value for a, s in ALGORITHMS.items() if action_kind in s.action_kinds]


def grad_part_columns(algo: str) -> tuple[str, ...]:
    """The per-part gradient norm columns ``grad_norm_parts: true`` adds for an algorithm: ours only (SB3's
    algorithms do not expose their gradients); none for the others."""
    if algo == Algo.DQN:
        return Q_NETWORK_PART_COLUMNS
    return ACTOR_CRITIC_PART_COLUMNS if algo in ON_POLICY else ()


def columns_for(algo: str, grad_norm_parts: bool = False) -> tuple[str, ...]:
    """The metrics.csv columns the trainer writes for an algorithm (the common ones for a name we do
    not train), with the per-part gradient norms after them when ``grad_norm_parts`` is on."""
    spec = spec_of(algo)
    columns = spec.columns if spec is not None else COMMON_COLUMNS
    return columns + grad_part_columns(algo) if grad_norm_parts else columns
