"""Vectorised Gymnasium environments and the space descriptions the rest of the trainer needs.

We rely on Gymnasium 1.x NEXT_STEP autoreset (the default for its vector envs and for
CartPole's numpy-vectorised implementation): see ``advantages.py`` for what that means for the
learning targets and ``rollout.py`` for how the reset step is masked out.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, NamedTuple, SupportsFloat

import gymnasium as gym
import numpy as np

from gymnasium_solver.config import Config
from gymnasium_solver.config.atari import (
    ATARI_FIRE,
    ATARI_FRAME_SKIP,
    ATARI_FRAME_STACK,
    ATARI_NOOP_MAX,
    ATARI_SCREEN_SIZE,
    base_frameskip,
    is_ale_game,
    looks_like_ale,
)
from gymnasium_solver.config.env_modules import require_config
from gymnasium_solver.config.spaces import install_hint, observation_plan, space_kind
from gymnasium_solver.contract.run_folder import ActionSpaceInfo
from gymnasium_solver.vector_envs import FASTER


class SpaceSpec(NamedTuple):
    """What the networks need to know about an environment's spaces."""

    obs_dim: int
    observation_shape: tuple[int, ...]
    discrete: bool
    n_actions: int  # discrete: number of actions; box: action dimension
    action_low: np.ndarray | None
    action_high: np.ndarray | None
    # uint8 images [C, H, W] (Atari frame stacks): kept as uint8 from the env to the network
    # (a 4x84x84 frame stack is 28 KB as uint8, 113 KB as float32), never flattened.
    pixels: bool = False


ATARI_INSTALL = 'pip install "gymnasium-solver[atari]" (or: pip install "ale-py>=0.9" opencv-python-headless)'


def register_atari() -> None:
    """Register the ALE environments with Gymnasium (ale-py >= 0.9 ships the ROMs: nothing is
    downloaded). ValueError with the pip command when the atari extra is not installed."""
    try:
        import ale_py
    except ImportError:
        raise ValueError(f"atari_wrappers: true needs the ALE, which is not installed; {ATARI_INSTALL}") from None
    gym.register_envs(ale_py)


def _check_ale_game(env_id: str) -> None:
    # An unknown id passes: gym.make_vec says so, with close matches.
    if env_id in gym.registry and not is_ale_game(env_id):
        raise ValueError(f"atari_wrappers: true needs an ALE game such as PongNoFrameskip-v4; {env_id!r} is not "
                         "one (set atari_wrappers: false and network: mlp)")


class FireAtLifeStart(gym.Wrapper):
    """Presses FIRE after a reset and after every lost life, in a game whose action 1 is FIRE: Breakout and many
    others wait for it to start a life, and a policy that has not learnt to press it (an untrained one, or any
    deterministic one that never picks it) would stand still until the ALE truncates the game at 108,000
    frames: every evaluation game minutes long. SB3's AtariWrapper (the RL Zoo's, CleanRL's) gets the same
    from FireResetEnv at reset with an episode per life. The FIRE step's reward counts in the step it
    follows; a FIRE that ends the game ends the step's episode."""

    def __init__(self, env: gym.Env):
        super().__init__(env)
        self._ale = env.unwrapped.ale  # type: ignore[attr-defined]
        self._lives = 0

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        obs, _, terminated, truncated, info = self.env.step(ATARI_FIRE)
        if terminated or truncated:  # cannot happen in an ALE game's first step; SB3's FireResetEnv guards it too
            obs, info = self.env.reset(**kwargs)
        self._lives = self._ale.lives()
        return obs, info

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        if not (terminated or truncated) and self._ale.lives() < self._lives:
            obs, fire_reward, terminated, truncated, info = self.env.step(ATARI_FIRE)
            reward = float(reward) + float(fire_reward)
        self._lives = self._ale.lives()
        return obs, reward, terminated, truncated, info


def waits_for_fire(env: gym.Env) -> bool:
    """The ALE game's action 1 is FIRE (SB3's FireResetEnv's condition)."""
    meanings = env.unwrapped.get_action_meanings()  # type: ignore[attr-defined]
    return len(meanings) > ATARI_FIRE and meanings[ATARI_FIRE] == "FIRE"


def atari_wrappers(env: gym.Env) -> gym.Env:
    """Noop reset, frame skip 4 with max-pooling, 84x84 grayscale, not terminal on life loss
    (Gymnasium's default and Machado et al. 2018's advice; SB3's AtariWrapper/CleanRL end an episode
    per life instead, which Pong, with no lives, does not notice), FIRE at the start of every life in
    a game that has it (FireAtLifeStart), then a stack of the last 4 frames.
    Rewards are left alone: clipping is the learner's business (config ``reward_clip``) so that
    episode returns and evaluations stay in game score."""
    fire = waits_for_fire(env)
    env = gym.wrappers.AtariPreprocessing(
        env, noop_max=ATARI_NOOP_MAX, frame_skip=ATARI_FRAME_SKIP, screen_size=ATARI_SCREEN_SIZE,
        terminal_on_life_loss=False, grayscale_obs=True, scale_obs=False,
    )
    if fire:
        env = FireAtLifeStart(env)
    return gym.wrappers.FrameStackObservation(env, ATARI_FRAME_STACK)


def flat_observations(env: gym.Env) -> gym.Env:
    """The observation wrapper every env factory applies (ours in training, evaluation and every checkpoint
    reload; SB3's through ``wrapper_class``), so a policy always sees the same vector: Box observations as
    they are; Discrete one-hot, and MultiDiscrete, Dict and Tuple flattened with Gymnasium's
    FlattenObservation, a Dict's text entries dropped first (config/spaces.OBSERVATION_KINDS says which).
    ConfigError (a ValueError) in one line for observations no algorithm takes."""
    spec_id = env.spec.id if env.spec is not None else type(env.unwrapped).__name__
    plan = observation_plan(env.observation_space, spec_id)
    if plan.drop:
        keep = [k for k in env.observation_space.spaces if str(k) not in plan.drop]  # type: ignore[attr-defined]
        env = gym.wrappers.FilterObservation(env, keep)
    return gym.wrappers.FlattenObservation(env) if plan.flatten else env


def _vector_spec(env_id: str) -> gym.envs.registration.EnvSpec | str:
    """The spec make_vec builds a numpy-vectorised ``env_id`` from: with our faster drop-in
    (gymnasium_solver.vector_envs, the same episodes) as its vector entry point where we have one."""
    spec = gym.spec(env_id)
    faster = FASTER.get(str(spec.vector_entry_point))
    return dataclasses.replace(spec, vector_entry_point=faster) if faster is not None else env_id


def _has_vector_entry_point(env_id: str) -> bool:
    try:
        return gym.spec(env_id).vector_entry_point is not None
    except gym.error.Error:
        return False


def make_vec_env(cfg: Config, num_envs: int, render_mode: str | None = None) -> gym.vector.VectorEnv:
    """Create ``num_envs`` copies of ``cfg.env_id``: numpy-vectorised where Gymnasium has one
    (``vectorization: auto``), else a sync (or ``async``) vector env; with ``render_mode`` (e.g.
    'rgb_array', for a video) always sync, so ``render()`` returns each copy's frame. Raises ValueError
    for an unknown environment id or an unsupported space."""
    require_config(cfg)  # its env_package/env_class: imported only when this command's line granted them
    kwargs: dict[str, Any] = dict(cfg.env_kwargs)
    wrappers: list[Any] = [flat_observations]
    if render_mode is not None:
        kwargs["render_mode"] = render_mode
        mode = "sync"
    elif cfg.vectorization == "auto" and _has_vector_entry_point(cfg.env_id):
        mode = "vector_entry_point"
    else:
        mode = "async" if cfg.vectorization == "async" else "sync"
    if cfg.atari_wrappers:
        register_atari()
        _check_ale_game(cfg.env_id)
        if "frameskip" not in kwargs and base_frameskip(cfg.env_id) != 1:
            # ALE/...-v5 skips 4 frames inside the emulator: AtariPreprocessing skips them here instead (it
            # refuses a skipping env), and v5's sticky actions, applied per emulator frame, stay as they are.
            kwargs["frameskip"] = 1
        mode = "sync" if render_mode is not None or cfg.vectorization != "async" else "async"
        wrappers.insert(0, atari_wrappers)
    if mode != "vector_entry_point":  # Gymnasium's numpy-vectorised envs (classic control) have Box observations
        kwargs["wrappers"] = wrappers
    try:
        env_id = _vector_spec(cfg.env_id) if mode == "vector_entry_point" else cfg.env_id
        env = gym.make_vec(env_id, num_envs=num_envs, vectorization_mode=mode, **kwargs)
    except gym.error.DependencyNotInstalled as exc:  # Box2D, MuJoCo: the extra's pip command, in one line
        raise ValueError(install_hint(exc, cfg.env_id)) from exc
    except gym.error.Error as exc:
        needs = looks_like_ale(cfg.env_id) and not cfg.atari_wrappers
        hint = f" (an ALE game needs atari_wrappers: true and {ATARI_INSTALL})" if needs else ""
        raise ValueError(f"cannot create environment {cfg.env_id!r}: {exc}{hint}") from exc
    except ValueError as exc:
        if not cfg.atari_wrappers:
            raise
        # AtariPreprocessing refuses an ALE env that already skips frames (ALE/Pong-v5 skips 4).
        raise ValueError(f"cannot apply atari_wrappers to {cfg.env_id!r}: {exc}; set env_kwargs.frameskip=1 or leave it "
                         "unset (atari_wrappers skips 4 frames itself)") from exc
    try:
        check_network_fits(cfg.network, space_spec(env))  # fail early, with a sentence, on what we cannot learn on
    except ValueError:
        env.close()
        raise
    return env


def check_network_fits(network: str, spec: SpaceSpec) -> None:
    """ValueError unless pixel observations go to the CNN and flat ones to the MLP."""
    if spec.pixels and network != "nature_cnn":
        raise ValueError(f"the observations are {'x'.join(map(str, spec.observation_shape))} uint8 images; "
                         "set network: nature_cnn (and atari_wrappers: true for an ALE game)")
    if not spec.pixels and network == "nature_cnn":
        raise ValueError(f"network: nature_cnn needs 4x84x84 uint8 frame stacks, but the observations are "
                         f"{spec.observation_shape}; set atari_wrappers: true with an ALE game, or network: mlp")


def batch_obs(raw: Any, spec: SpaceSpec, n: int) -> np.ndarray:
    """A vector env's observations as the policy takes them: ``[n, obs_dim]`` float32, or
    ``[n, C, H, W]`` uint8 for pixels (converted to float inside the network, never before)."""
    if spec.pixels:
        return np.asarray(raw, dtype=np.uint8).reshape(n, *spec.observation_shape)
    return np.asarray(raw, dtype=np.float32).reshape(n, spec.obs_dim)


def space_spec(env: gym.vector.VectorEnv) -> SpaceSpec:
    """Describe a vector env's single observation and action spaces (flat Box obs; Discrete or Box actions)."""
    obs_space = env.single_observation_space
    act_space = env.single_action_space
    if not isinstance(obs_space, gym.spaces.Box):  # make_vec_env flattens every space it takes (flat_observations)
        raise ValueError(f"only Box observation spaces reach the networks, got {obs_space}")
    obs_shape = tuple(int(d) for d in obs_space.shape)
    obs_dim = int(np.prod(obs_shape))
    pixels = obs_space.dtype == np.uint8 and len(obs_shape) == 3
    if isinstance(act_space, gym.spaces.Discrete):
        return SpaceSpec(obs_dim, obs_shape, True, int(act_space.n), None, None, pixels)
    if isinstance(act_space, gym.spaces.Box) and len(act_space.shape) == 1:
        low = act_space.low.astype(np.float32)
        high = act_space.high.astype(np.float32)
        return SpaceSpec(obs_dim, obs_shape, False, int(act_space.shape[0]), low, high, pixels)
    raise ValueError(f"only Discrete and 1-D Box action spaces are supported, got {act_space}")


def action_space_info(spec: SpaceSpec) -> ActionSpaceInfo:
    """The run.json description of the action space (max_entropy = log(n) for Discrete)."""
    if spec.discrete:
        return ActionSpaceInfo(kind="discrete", n=spec.n_actions, max_entropy=math.log(spec.n_actions))
    assert spec.action_low is not None and spec.action_high is not None
    return ActionSpaceInfo(
        kind="box",
        shape=[spec.n_actions],
        low=[float(x) for x in spec.action_low],
        high=[float(x) for x in spec.action_high],
    )


def observation_kind(env: gym.vector.VectorEnv) -> str | None:
    """The kind of the environment's own observation space, before flat_observations ('discrete': one-hot encoded,
    'box', 'multi_discrete', 'dict', 'tuple'); None when the vector env does not expose its sub-envs."""
    sub = getattr(env, "envs", None)
    if not sub:
        return None if not isinstance(env.single_observation_space, gym.spaces.Box) else "box"
    inner = sub[0]
    while isinstance(inner, (gym.wrappers.FlattenObservation, gym.wrappers.FilterObservation)):
        inner = inner.env
    return space_kind(inner.observation_space)
