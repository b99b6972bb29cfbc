"""Which observation and action spaces each algorithm takes (declared once, here), an environment's
spaces read from Gymnasium, the algorithm ``gsolve train ENV_ID`` picks for them, and the one-line
refusal when an algorithm cannot take them. Imports gymnasium only when an environment is asked about
(never torch)."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, NamedTuple

from gymnasium_solver.config.atari import is_ale_game, looks_like_ale, register_ale
from gymnasium_solver.config.env_modules import bound_ids
from gymnasium_solver.config.model import Algo, ConfigError
from gymnasium_solver.contract.algorithms import ALGORITHMS, ON_POLICY, takes

# Action spaces each algorithm acts in are its ``action_kinds`` (algorithms.py). Observations: every algorithm
# learns on flat vectors (or uint8 image stacks with network: nature_cnn), so every algorithm takes every kind
# below; the env factory (envs.flat_observations, in training, evaluation and every reload, ours and SB3's)
# turns the others into a flat vector with Gymnasium's own wrappers. A kind not named here is refused in one
# line (observation_plan). This table is the one list of what is taken and how.
OBSERVATION_KINDS: dict[str, str] = {
    "box": "as they are (flat vectors; uint8 image stacks need network: nature_cnn)",
    "discrete": "one-hot encoded (gymnasium.wrappers.FlattenObservation)",
    "multi_discrete": "one-hot encoded per entry and concatenated (FlattenObservation)",
    "multi_binary": "as a vector of 0/1 (FlattenObservation)",
    "dict": "each entry flattened (Discrete one-hot) and concatenated in key order (FlattenObservation); text "
            "entries such as MiniGrid's 'mission' are dropped first (FilterObservation)",
    "tuple": "each entry flattened (Discrete one-hot) and concatenated (FlattenObservation)",
}
# The algorithm `gsolve train ENV_ID` trains with: PPO acts in both kinds of action space and is the most
# forgiving of untuned settings (SB3's and the RL Zoo's default choice too). Discrete observations (a state
# index: Taxi, FrozenLake, CliffWalking) with Discrete actions get DQN, whose defaults there are a table
# (config/chain.py, TABULAR): PPO's network generalises across the one-hot states and never finds Taxi's goal.
DEFAULT_ALGO = Algo.PPO
TABULAR_ALGO = Algo.DQN

BOX2D_INSTALL = 'pip install "gymnasium-solver[box2d]"'
MUJOCO_INSTALL = 'pip install "gymnasium-solver[mujoco]"'
SB3_INSTALL = 'pip install "gymnasium-solver[sb3]"'  # stable-baselines3 and sb3-contrib


class EnvSpaces(NamedTuple):
    env_id: str
    observation: str  # e.g. 'Box(-inf, inf, (4,), float32)'
    observation_kind: str  # 'box', 'discrete', 'multi_discrete', 'dict', ...
    action: str
    action_kind: str
    observation_note: str | None = None  # how the observations are turned into a vector (None: as they are)
    observation_refusal: str | None = None  # why no algorithm can take them (None: they can)
    image: str | None = None  # uint8 HxWxC / CxHxW observations: 'channels_last' or 'channels_first'; None: not images
    action_half_range: float | None = None  # (high - low) / 2 of Box actions when every dimension has the same one


class ObservationPlan(NamedTuple):
    """What the env factory does to one environment's observations before the networks see them."""

    kind: str
    drop: tuple[str, ...]  # Dict keys removed first (text entries: no number to learn from)
    flatten: bool  # FlattenObservation (Discrete one-hot; Dict/Tuple entries concatenated)


def _is_text(space: Any) -> bool:
    """A space whose values are strings (Gymnasium's Text, MiniGrid's MissionSpace)."""
    import gymnasium as gym

    if isinstance(space, gym.spaces.Text):
        return True
    if type(space).__module__.startswith("gymnasium.spaces"):
        return False  # Gymnasium's other spaces: never strings (and Graph/Sequence sample slowly)
    try:
        return isinstance(space.sample(), str)
    except Exception:  # noqa: BLE001 - a third-party space that cannot sample is not text
        return False


def _flattenable(space: Any) -> bool:
    import gymnasium as gym

    try:
        gym.spaces.flatten_space(space)
    except (NotImplementedError, TypeError, ValueError):
        return False
    return not isinstance(space, gym.spaces.Graph | gym.spaces.Sequence | gym.spaces.Text)


def observation_plan(space: Any, env_id: str) -> ObservationPlan:
    """How ``space`` reaches the networks (OBSERVATION_KINDS); ConfigError in one line naming the space and
    the kinds taken when no algorithm can take it (a Graph, a Sequence, a text, a Dict of those)."""
    import gymnasium as gym

    kind = space_kind(space)
    if kind == "box":
        return ObservationPlan(kind, (), False)
    drop: tuple[str, ...] = ()
    rest = space
    if isinstance(space, gym.spaces.Dict):
        drop = tuple(str(k) for k, s in space.spaces.items() if _is_text(s))
        rest = gym.spaces.Dict({k: s for k, s in space.spaces.items() if str(k) not in drop})
    empty = isinstance(rest, gym.spaces.Dict) and not rest.spaces  # nothing left once the text is dropped
    if kind in OBSERVATION_KINDS and not empty and _flattenable(rest):
        return ObservationPlan(kind, drop, True)
    raise ConfigError(f"{env_id} has {describe_space(space)} observations ({kind}), which no gsolve algorithm takes: every algorithm "
                      f"learns on vectors, and these cannot be flattened into one (observations taken: "
                      f"{', '.join(OBSERVATION_KINDS)}; a Dict's text entries are dropped)")


def observation_note(plan: ObservationPlan, space: Any, env_id: str) -> str | None:
    """One sentence saying what the env factory does to these observations; None when nothing."""
    if not plan.flatten:
        return None
    import gymnasium as gym

    kept = gym.spaces.Dict({k: s for k, s in space.spaces.items() if str(k) not in plan.drop}) if plan.drop else space
    size = int(gym.spaces.flatdim(kept))
    dropped = f" (text entries dropped: {', '.join(repr(k) for k in plan.drop)})" if plan.drop else ""
    return (f"{env_id} has {describe_space(space)} observations: {OBSERVATION_KINDS[plan.kind].split(' (')[0]} into {size} numbers"
            f"{dropped}, the same in training, evaluation and every reload")


def space_kind(space: Any) -> str:
    """'discrete', 'box' (a 1-D Box for actions), or the space's class in snake case ('multi_discrete', 'dict')."""
    import gymnasium as gym

    if isinstance(space, gym.spaces.Discrete):
        return "discrete"
    if isinstance(space, gym.spaces.Box):
        return "box"
    name = type(space).__name__
    return "".join(f"_{c.lower()}" if c.isupper() and i else c.lower() for i, c in enumerate(name))


_SHOWN_BOUNDS = 8  # a Box with more per-dimension bounds than this is shown by their range


def describe_space(space: Any) -> str:
    """``str(space)`` in one short line: a Box's per-dimension bounds on one line, or, past _SHOWN_BOUNDS of them,
    as their range (BipedalWalker's 24 pairs would fill the screen); Dict and Tuple entries likewise; without the
    memory addresses a third-party space prints (MiniGrid's mission function)."""
    import gymnasium as gym
    import numpy as np

    if isinstance(space, gym.spaces.Box) and space.low.size > 1 and not (
            np.all(space.low == space.low.flat[0]) and np.all(space.high == space.high.flat[0])):
        if space.low.size > _SHOWN_BOUNDS:
            return (f"Box(bounds within {_bound(space.low.min())}..{_bound(space.high.max())}, each dimension its "
                    f"own, {space.shape}, {space.dtype})")
        low, high = (" ".join(_bound(x) for x in a.flat) for a in (space.low, space.high))
        return f"Box([{low}], [{high}], {space.shape}, {space.dtype})"
    if isinstance(space, gym.spaces.Dict):
        return "Dict(" + ", ".join(f"{k!r}: {describe_space(v)}" for k, v in space.spaces.items()) + ")"
    if isinstance(space, gym.spaces.Tuple):
        return "Tuple(" + ", ".join(describe_space(v) for v in space.spaces) + ")"
    return re.sub(r" at 0x[0-9a-f]+", "", str(space))


def _bound(x: Any) -> str:
    return f"{float(x) + 0.0:.4g}"  # + 0.0: LunarLander's -0. lower bounds read as 0


def install_hint(exc: BaseException, env_id: str) -> str:
    text = str(exc).lower()
    if "box2d" in text:
        return f"{env_id} needs Box2D, which is not installed: {BOX2D_INSTALL}"
    if "mujoco" in text:
        return f"{env_id} needs MuJoCo, which is not installed: {MUJOCO_INSTALL}"
    return f"{env_id} cannot be created: {exc}"


@lru_cache(maxsize=64)
def _spaces(env_id: str, kwargs_items: tuple[tuple[str, Any], ...]) -> EnvSpaces:
    import gymnasium as gym

    check_registered(env_id)
    try:
        env = gym.make(env_id, **dict(kwargs_items))
    except gym.error.DependencyNotInstalled as exc:
        raise ConfigError(install_hint(exc, env_id)) from None
    except (gym.error.Error, TypeError, ValueError, ImportError) as exc:
        raise ConfigError(install_hint(exc, env_id)) from None
    try:
        obs, act = env.observation_space, env.action_space
        act_kind = space_kind(act)
        if act_kind == "box" and len(act.shape or ()) != 1:
            act_kind = "box_nd"
        try:
            plan = observation_plan(obs, env_id)
        except ConfigError as exc:
            return EnvSpaces(env_id, describe_space(obs), space_kind(obs), str(act), act_kind, None, str(exc))
        return EnvSpaces(env_id, describe_space(obs), plan.kind, str(act), act_kind, observation_note(plan, obs, env_id),
                         image=image_layout(obs), action_half_range=half_range(act))
    finally:
        env.close()


def env_spaces(env_id: str, env_kwargs: dict[str, Any] | None = None) -> EnvSpaces:
    """The spaces of one ``gym.make(env_id, **env_kwargs)`` (made once per id and kwargs, then closed).
    ConfigError for an unknown id (with close matches) or a missing dependency (with the pip command).
    ``env_id`` must be a registered id (the config refuses ``module:EnvId``: nothing is imported here)."""
    try:
        items = tuple(sorted((env_kwargs or {}).items()))
        hash(items)
    except TypeError:  # an unhashable kwarg (a list): not cached
        return _spaces.__wrapped__(env_id, tuple(sorted((env_kwargs or {}).items())))
    return _spaces(env_id, items)


# Id prefixes of packages that register environments on import (--env-package), for the unknown-id hint.
PACKAGE_PREFIXES = {"MiniGrid-": "minigrid", "BabyAI-": "minigrid"}


def check_registered(env_id: str) -> None:
    """ConfigError naming close matches when Gymnasium has no environment ``env_id``."""
    import gymnasium as gym

    if ":" in env_id:  # Gymnasium would import the module before the id: never from here
        raise ConfigError(f"{env_id!r} names a Python module ('module:EnvId'); use a registered id")
    if env_id in gym.registry:
        return
    try:  # an old version of a registered id: Gymnasium's own sentence says which version replaced it
        gym.spec(env_id)
    except gym.error.DeprecatedEnv as exc:
        raise ConfigError(f"{env_id!r} is not registered: {exc} (Gymnasium {gym.__version__})") from None
    except gym.error.Error:
        pass
    from gymnasium_solver.config.build import did_you_mean

    # The atari extra's ids (ALE/..., ...NoFrameskip-v4, and the plain Breakout-v4 kind) exist once ale_py is imported.
    registered = register_ale()
    if registered and env_id in gym.registry:
        return
    ale = looks_like_ale(env_id)
    hint = (" (ALE games are registered by the atari extra, which is installed)" if registered else
            ' (ALE games need the atari extra: pip install "gymnasium-solver[atari]")' if ale else "")
    if not ale:  # an id of the user's own: their class, named on the command line
        own = bound_ids()
        package = next((pkg for prefix, pkg in PACKAGE_PREFIXES.items() if env_id.startswith(prefix)), None)
        hint = (f" (this process's own classes are {', '.join(own)})" if own else
                f" ({env_id.split('-')[0]}-* ids are registered by the {package} package: add --env-package {package})"
                if package else " (ids a package registers need --env-package PKG, e.g. minigrid; your own "
                "gymnasium.Env trains with --env-class MODULE:CLASS)")
    raise ConfigError(f"unknown environment {env_id!r}{did_you_mean(env_id, list(gym.registry))}{hint}; "
                      "`gsolve list-envs --all` lists the registered ids")


def check_algo_takes(algo: str, spaces: EnvSpaces) -> None:
    """ConfigError, in one line naming the space and the algorithms that would take it, when ``algo``
    cannot learn on these spaces."""
    if spaces.observation_refusal is not None:
        raise ConfigError(spaces.observation_refusal)
    kinds = ALGORITHMS[Algo(algo)].action_kinds if algo in Algo._value2member_map_ else ()
    if spaces.action_kind in kinds:
        return
    others = takes(spaces.action_kind)
    instead = f"algorithms that take them: {', '.join(others)}" if others else "no gsolve algorithm takes them"
    raise ConfigError(f"{spaces.env_id} has {spaces.action} actions, which {algo} cannot take; {instead}")


def half_range(space: Any) -> float | None:
    """(high - low) / 2 of a bounded Box shared by every dimension; None otherwise."""
    import gymnasium as gym
    import numpy as np

    if not (isinstance(space, gym.spaces.Box) and space.is_bounded()):
        return None
    half = (space.high.astype(np.float64) - space.low.astype(np.float64)) / 2
    # 6 significant digits: a float32 bound of 0.4 is 0.4000000059604645 in float64
    return float(f"{half.flat[0]:.6g}") if half.size and np.allclose(half, half.flat[0]) else None


def image_layout(space: Any) -> str | None:
    """'channels_last' (HxWxC, as renderers and CarRacing give them), 'channels_first' (CxHxW, a frame stack) for
    3-D uint8 Box observations (the pixels envs.space_spec sends to the CNN); None for anything else."""
    import gymnasium as gym
    import numpy as np

    if not (isinstance(space, gym.spaces.Box) and space.dtype == np.uint8 and len(space.shape) == 3):
        return None
    return "channels_last" if space.shape[-1] in (1, 3, 4) and space.shape[0] > 4 else "channels_first"


# What takes images: the Nature CNN (network: nature_cnn), a key of the on-policy algorithms only.
IMAGE_ALGOS = tuple(a.value for a in ALGORITHMS if a in ON_POLICY)
_STACK = ("gymnasium.wrappers.GrayscaleObservation, ResizeObservation((84, 84)) and FrameStackObservation(4) make "
          "4x84x84 frame stacks of them: register that wrapped environment in your own package and train its id "
          "with --env-package PKG (an ALE game's: atari_wrappers=true)")


# What trains an ALE game's raw frames with gsolve's defaults (the RL Zoo's atari entry sets the same).
ATARI_SETTINGS = "atari_wrappers=true network=nature_cnn normalize_observations=false reward_clip=1.0"


def check_images(algo: str, network: str, spaces: EnvSpaces) -> None:
    """ConfigError, in one line naming the space and the algorithms that would take it, for image observations
    this config cannot learn on: channels last (no gsolve network takes them), an algorithm without the CNN, or
    the CNN not chosen. Checked before a run folder exists (atari_wrappers configs make their own frame stacks)."""
    if spaces.image is None:
        return
    what = f"{spaces.env_id} has {spaces.observation} observations (images"
    if spaces.image == "channels_last" and is_ale_game(spaces.env_id):
        raise ConfigError(f"{what}, channels last) as the ALE gives them: train an ALE game with the standard Atari "
                          f"preprocessing, which makes 4x84x84 frame stacks for network: nature_cnn (with "
                          f"{', '.join(IMAGE_ALGOS)}): gsolve train {spaces.env_id}:ppo --set {ATARI_SETTINGS}")
    if spaces.image == "channels_last":
        raise ConfigError(f"{what}, channels last), which no gsolve algorithm takes: network: nature_cnn (with "
                          f"{', '.join(IMAGE_ALGOS)}) takes channels-first frame stacks; {_STACK}")
    if algo not in IMAGE_ALGOS:
        raise ConfigError(f"{what}), which {algo} cannot take; algorithms that take them with network: nature_cnn: "
                          f"{', '.join(IMAGE_ALGOS)}")
    if network != "nature_cnn":
        raise ConfigError(f"{what}), which {algo} takes with network: nature_cnn only: set network=nature_cnn and "
                          "normalize_observations=false (the CNN scales pixels itself)")


def choose_algo(spaces: EnvSpaces) -> tuple[str, str]:
    """(algorithm, why) for ``gsolve train ENV_ID``: TABULAR_ALGO for Discrete observations with actions it
    takes, else DEFAULT_ALGO when it takes the spaces, else the first algorithm that does; ConfigError when
    none does."""
    takers = takes(spaces.action_kind)
    tabular = spaces.observation_kind == "discrete" and TABULAR_ALGO.value in takers
    algo = TABULAR_ALGO.value if tabular else DEFAULT_ALGO.value if DEFAULT_ALGO.value in takers or not takers \
        else takers[0]
    check_algo_takes(algo, spaces)  # the observations, or actions nothing takes: one line saying which
    how = "learns a table over the states (a linear Q-network)" if tabular else "takes them"
    return algo, (f"{spaces.env_id} has {spaces.action} actions and {spaces.observation} observations: training with "
                  f"{algo}, which {how} (others that would: "
                  f"{', '.join(a for a in takes(spaces.action_kind) if a != algo) or 'none'}; "
                  f"choose one with {spaces.env_id}:ALGO)")


def observation_kind_of(env_id: str) -> str | None:
    """The kind of the registered ``env_id``'s observation space ('discrete', 'box', ...), for runs whose run.json
    does not record it; None when this machine cannot make the environment (a package it lacks, or not a registered
    id: nothing is imported here)."""
    import warnings

    try:
        with warnings.catch_warnings():  # an old version's deprecation notice is not the diagnosis' to print
            warnings.simplefilter("ignore")
            return env_spaces(env_id).observation_kind
    except ConfigError:
        return None
