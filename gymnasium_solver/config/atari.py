"""ALE games as the settings chain sees them: which ids are ALE games, the numbers of the standard preprocessing
``atari_wrappers: true`` applies (declared once; envs.py applies them), and how the RL Zoo's
``env_wrapper: AtariWrapper`` with ``frame_stack`` reads onto it. Imports gymnasium (and ale_py) only when an
id is asked about, never torch."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

# The standard Atari preprocessing (Mnih et al. 2015; Machado et al. 2018 for the life-loss choice).
ATARI_FRAME_SKIP = 4
ATARI_NOOP_MAX = 30
ATARI_SCREEN_SIZE = 84
ATARI_FRAME_STACK = 4
# The action that starts a life in the games that wait for it (Breakout): ALE action 1, where a game has FIRE.
ATARI_FIRE = 1

# The RL Zoo's entry for every ALE game that has none of its own (rl_zoo3's ExperimentManager: is_atari).
ZOO_ATARI_ENTRY = "atari"
SB3_ATARI_WRAPPER = "stable_baselines3.common.atari_wrappers.AtariWrapper"
# SB3's AtariWrapper arguments gsolve's preprocessing reproduces, at the values it has them (any other refused).
_SAME_AS_OURS: dict[str, Any] = {"noop_max": ATARI_NOOP_MAX, "frame_skip": ATARI_FRAME_SKIP,
                                 "screen_size": ATARI_SCREEN_SIZE, "action_repeat_probability": 0.0}
# One sentence, said wherever the Zoo's AtariWrapper is read: what differs is said, not pretended away.
ATARI_WRAPPER_NOTE = ("env_wrapper AtariWrapper with frame_stack 4 -> atari_wrappers=true (noop reset, frame skip 4, "
                      "84x84 grayscale, 4 stacked frames), reward_clip=1.0 (its reward clipping by sign: the same for "
                      "the ALE's whole-number scores) and normalize_observations=false (the CNN scales pixels), except "
                      "that gsolve's preprocessing does not end an episode at a lost life, as SB3's AtariWrapper does; "
                      "both press FIRE where a game waits for it, gsolve at the start of every life (docs/atari.md)")


def looks_like_ale(env_id: str) -> bool:
    """An id the atari extra registers (the NoFrameskip ids and the ALE/ namespace), before it is registered."""
    return "NoFrameskip" in env_id or env_id.startswith("ALE/")


def register_ale() -> bool:
    """Register the ALE's games with Gymnasium when the atari extra is installed (Gymnasium 1.x registers them only
    once ale_py is imported; ale_py is one of our extras' packages, not a module a config names); False without it."""
    import gymnasium as gym

    try:
        import ale_py
    except ImportError:
        return False
    gym.register_envs(ale_py)
    return True


def is_ale_game(env_id: str) -> bool:
    """The RL Zoo's test (is_atari): the id's entry point is the ALE's AtariEnv. An unknown id is looked up again
    after registering the ALE's games when the atari extra is installed; False when it is still unknown."""
    import gymnasium as gym

    if env_id not in gym.registry and not register_ale():  # an ALE id exists once ale_py is imported
        return False
    try:
        return str(gym.spec(env_id).entry_point).startswith("ale_py")
    except gym.error.Error:
        return False


def base_frameskip(env_id: str) -> Any:
    """The frame skip the ALE applies inside ``env_id`` (its spec's ``frameskip``: 1 for NoFrameskip ids, 4 for
    ALE/...-v5); 1 for an id that is not the ALE's."""
    import gymnasium as gym

    try:
        return gym.spec(env_id).kwargs.get("frameskip", 1) if is_ale_game(env_id) else 1
    except gym.error.Error:
        return 1


def frameskip_note(env_id: str, env_kwargs: Mapping[str, Any]) -> str | None:
    """What atari_wrappers does to an ALE id that skips frames itself (ALE/Breakout-v5), in one sentence; None
    when it skips none or the config's env_kwargs set frameskip."""
    skip = base_frameskip(env_id)
    if skip == 1 or "frameskip" in env_kwargs:
        return None
    import gymnasium as gym

    sticky = gym.spec(env_id).kwargs.get("repeat_action_probability", 0.0)
    kept = f", keeping its sticky actions (repeat_action_probability={sticky:g})" if sticky else ""
    return (f"{env_id} skips frames itself (frameskip={skip}): atari_wrappers makes it with frameskip=1 and skips "
            f"{ATARI_FRAME_SKIP} frames itself, max-pooling the last two{kept}; set env_kwargs.frameskip to "
            "override (docs/atari.md)")


class AtariRead(NamedTuple):
    """A Zoo entry's AtariWrapper and frame_stack as our keys: what is set, what cannot be, what is noted."""

    settings: dict[str, Any]
    refused: list[str]  # "key: value (why)", as zoo.py writes its refusals
    notes: list[str]


def _wrapper_kwargs(raw: Any) -> dict[str, Any] | None:
    """The AtariWrapper's arguments when ``raw`` (an entry's env_wrapper) names it alone, else None."""
    wrappers = raw if isinstance(raw, list) else [raw]
    if len(wrappers) != 1:
        return None
    only = wrappers[0]
    if only == SB3_ATARI_WRAPPER:
        return {}
    if isinstance(only, dict) and list(only) == [SB3_ATARI_WRAPPER]:
        kwargs = only[SB3_ATARI_WRAPPER]
        return dict(kwargs) if isinstance(kwargs, dict) else {} if kwargs is None else None
    return None


def read_atari_wrapper(entry: Mapping[str, Any]) -> AtariRead | None:
    """An RL Zoo entry's ``env_wrapper: AtariWrapper`` (with ``frame_stack``) as ``atari_wrappers: true`` and
    reward_clip 1.0 (SB3's AtariWrapper clips rewards); None when the entry names no AtariWrapper alone."""
    kwargs = _wrapper_kwargs(entry.get("env_wrapper"))
    if kwargs is None:
        return None
    refused: list[str] = []
    stack = entry.get("frame_stack")
    if stack != ATARI_FRAME_STACK:
        refused.append(f"frame_stack: {stack} (gsolve's atari_wrappers stacks exactly {ATARI_FRAME_STACK} frames)")
    for key, value in kwargs.items():
        if key in _SAME_AS_OURS and value != _SAME_AS_OURS[key]:
            refused.append(f"env_wrapper: AtariWrapper {key}={value} (gsolve's atari_wrappers has it at "
                           f"{_SAME_AS_OURS[key]})")
        elif key not in _SAME_AS_OURS and key not in ("terminal_on_life_loss", "clip_reward"):
            refused.append(f"env_wrapper: AtariWrapper {key}={value} (gsolve's atari_wrappers has no such setting)")
    clip = kwargs.get("clip_reward", True)
    settings = {"atari_wrappers": True, "normalize_observations": False, **({"reward_clip": 1.0} if clip else {})}
    notes = [ATARI_WRAPPER_NOTE if kwargs.get("terminal_on_life_loss", True) else
             ATARI_WRAPPER_NOTE.replace("except that gsolve's preprocessing does not end an episode at a lost life, as "
                                        "SB3's AtariWrapper does; both", "neither ending an episode at a lost life; both")]
    if not clip:
        notes[0] = notes[0].replace("reward_clip=1.0 (its reward clipping by sign: the same for the ALE's "
                                    "whole-number scores)", "no reward_clip (clip_reward=false)")
    return AtariRead(settings, refused, notes)
