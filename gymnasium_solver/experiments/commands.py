"""The `gsolve train` command lines a fix's winner, a sweep's report and a diagnosis print: what a person pastes
to reproduce a run."""

from __future__ import annotations

import shlex
from typing import Any

from gymnasium_solver.config.env_modules import env_flags
from gymnasium_solver.launcher import override_pairs, zoo_flag


def command_line(config_id: str, set_args: list[str], flags: list[str] | None = None, use_zoo: bool = True) -> str:
    """The `gsolve train` command line of ``config_id`` with ``set_args`` (KEY=VALUE). ``flags``: the
    --env-package/--env-class the run needs (default: those this process was granted); ``use_zoo=False``: a run
    that took gsolve's defaults where the RL Zoo has an entry (``--no-zoo``)."""
    return " ".join(["gsolve", "train", config_id, *zoo_flag(use_zoo),
                     *(f"--set {shlex.quote(a)}" for a in set_args),
                     *map(shlex.quote, env_flags(config_id) if flags is None else flags)])


def train_command(config_id: str, overrides: dict[str, Any], use_zoo: bool = True) -> str:
    """The `gsolve train` command line that runs ``config_id`` with ``overrides`` (``--no-zoo`` when not ``use_zoo``)."""
    return command_line(config_id, override_pairs(overrides), use_zoo=use_zoo)
