"""`--env-package PKG` and `--env-class MODULE:CLASS`: the only way a gsolve command imports a module to make
an environment (config/env_modules.py has the rule; docs/security.md). Each command that makes or reloads
environments takes them; ``grant`` imports what they name before the command runs."""

from __future__ import annotations

import argparse
from pathlib import Path

from gymnasium_solver.config import ConfigError, env_modules, split_config_id


def add_env_module_flags(p: argparse.ArgumentParser, what: str = "the environment", *, served: bool = False) -> None:
    """The two flags; ``served``: a server's, which registers each class under an id of its own (CLASS-v0)."""
    registers = ("`gsolve mcp --env-class my_envs:MyEnv` registers it as MyEnv-v0 for the clients" if served else
                 "`gsolve train MyEnv-v0:ppo --env-class my_envs:MyEnv` registers it as MyEnv-v0")
    p.add_argument("--env-package", dest="env_packages", action="append", default=[], metavar="PKG",
                   help=f"import PKG before making {what}: a package whose import registers environment ids "
                   "(e.g. minigrid for MiniGrid-*); repeatable. Only for code you trust: gsolve never imports a "
                   "module because a run folder names it")
    p.add_argument("--env-class", dest="env_classes", action="append", default=[], metavar="MODULE:CLASS",
                   help=f"your own gymnasium.Env subclass; {registers} (MODULE importable from the current folder or "
                   "PYTHONPATH); a run of it is reloaded with the same flag")


def grant(args: argparse.Namespace) -> None:
    """Import what this command's --env-package/--env-class name (nothing when it has neither)."""
    env_modules.grant_from_flags(getattr(args, "env_packages", None), getattr(args, "env_classes", None))


def bind_env_class(config_id: str, classes: list[str]) -> None:
    """`gsolve train ENV_ID --env-class MODULE:CLASS` (and `gsolve config`): the class, granted by ``grant``,
    is registered as ENV_ID."""
    if not classes:
        return
    if len(classes) > 1:
        raise ConfigError(f"a run trains one environment: give one --env-class, got {len(classes)}")
    env_modules.bind_class(split_config_id(config_id)[0], classes[0])


def require_run(run_dir: Path) -> None:
    """Before a command trains from a run (fix, retry): what the run's environment needs, granted by this
    command's flags (its class registered under the run's id), else the one-sentence refusal naming the flag.
    A config.yaml that cannot be read is left to the command's own message."""
    from gymnasium_solver.config import config_from_yaml_text
    from gymnasium_solver.contract import run_folder as rf

    try:
        cfg = config_from_yaml_text((run_dir / rf.CONFIG_YAML).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ConfigError):
        return
    env_modules.require_config(cfg)
