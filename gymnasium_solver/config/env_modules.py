"""Which Python modules this process may import to make environments, and importing them.

Two ways to train an environment Gymnasium does not register by itself:

- ``--env-package PKG``: import PKG, whose import registers ids (``minigrid`` registers ``MiniGrid-*``);
- ``--env-class MODULE:CLASS``: register a ``gymnasium.Env`` subclass of the user's own module under the id
  ``gsolve train ENV_ID --env-class MODULE:CLASS`` names (Gymnasium imports MODULE when it makes the env).

A run records what it needed in its config (``env_package``, ``env_class``). The rule (docs/security.md):
a module is imported only when the person running this process named it: on this command's line
(``grant_packages``/``grant_class``, from the flags), for ``gsolve mcp`` on the server's own command line,
or in a preset of the user's own preset folder (or ours), which a CLI process trusts and the MCP server
does not (``distrust_presets``). A run folder's config.yaml or run.json naming a module never imports it:
``require`` refuses in one sentence naming the flag to pass. Part of the contract layer; imports gymnasium
only when a module is granted or required (never torch)."""

from __future__ import annotations

import difflib
import importlib
import os
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from gymnasium_solver.config.model import CLASS_PATH, MODULE_NAME, ConfigError

MAX_ENV_PACKAGES = 8  # a few packages register what one run needs; more is not a command line (the config's bound)
TRUST = "only for code you trust: a run folder never makes gsolve import anything (docs/security.md)"


class EnvModuleError(ConfigError):
    """A module that may not (or cannot) be imported; the message names the flag that would allow it."""


@dataclass
class _Grants:
    packages: dict[str, frozenset[str]] = field(default_factory=dict)  # package -> ids its import registered
    classes: set[str] = field(default_factory=set)  # MODULE:CLASS paths the command line named
    bound: dict[str, str] = field(default_factory=dict)  # env id -> MODULE:CLASS registered under it here
    presets_trusted: bool = True  # a CLI process trusts the user's presets; `gsolve mcp` does not


_GRANTS = _Grants()


def check_package_name(name: str) -> str:
    """``name`` when it is a dotted Python module name, else EnvModuleError (nothing is imported)."""
    if not isinstance(name, str) or not MODULE_NAME.fullmatch(name):
        raise EnvModuleError(f"--env-package takes a Python package name such as minigrid, got {name!r}")
    return name


def check_class_path(path: str) -> str:
    """``path`` when it reads MODULE:CLASS (dotted module, one class name), else EnvModuleError."""
    if not isinstance(path, str) or not CLASS_PATH.fullmatch(path):
        raise EnvModuleError(f"--env-class takes MODULE:CLASS, e.g. my_envs.corridor:Corridor, got {path!r}")
    return path


def _registered() -> set[str]:
    import gymnasium as gym

    return set(gym.registry)


def grant_packages(names: Iterable[str]) -> None:
    """Import each package now (the person running this process named it) and remember the ids it registered.
    EnvModuleError for a bad name or a package that cannot be imported (with the pip command)."""
    for name in names:
        check_package_name(name)
        if name in _GRANTS.packages:
            continue
        if len(_GRANTS.packages) >= MAX_ENV_PACKAGES:
            raise EnvModuleError(f"at most {MAX_ENV_PACKAGES} --env-package packages, got more")
        before = _registered()
        try:
            importlib.import_module(name)
        except ImportError as exc:
            raise EnvModuleError(f"--env-package {name}: cannot import it ({exc}); install it (pip install {name}, "
                                 "or gymnasium-solver[minigrid] for MiniGrid)") from None
        _GRANTS.packages[name] = frozenset(_registered() - before)


def grant_class(path: str) -> None:
    """Allow MODULE:CLASS (the person running this process named it): import MODULE now and check CLASS is a
    gymnasium.Env. EnvModuleError otherwise. It is registered under an id by :func:`bind_class`."""
    import gymnasium as gym

    module_name, _, class_name = check_class_path(path).partition(":")
    if os.getcwd() not in sys.path and "" not in sys.path:
        # `gsolve` is a console script: unlike `python -m`, it has no current folder on sys.path, where a
        # user's own module usually is. Appended: an installed package of the same name still wins.
        sys.path.append(os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise EnvModuleError(f"--env-class {path}: cannot import {module_name} ({exc}); run gsolve from the folder "
                             "that holds it, or add that folder to PYTHONPATH") from None
    cls = getattr(module, class_name, None)
    if not (isinstance(cls, type) and issubclass(cls, gym.Env)):
        envs = sorted(n for n, v in vars(module).items() if isinstance(v, type) and issubclass(v, gym.Env)
                      and v.__module__ == module.__name__)  # its own classes, not those it imports
        close = difflib.get_close_matches(class_name, envs, n=3, cutoff=0.5)
        raise EnvModuleError(f"--env-class {path}: {module_name} has no gymnasium.Env subclass named {class_name}"
                             + (f"; did you mean {' or '.join(f'{module_name}:{c}' for c in close)}?" if close else "")
                             + (f" (its gymnasium.Env classes: {', '.join(envs)})" if envs else ""))
    _GRANTS.classes.add(path)


def distrust_presets() -> None:
    """From now on a preset naming env_package/env_class is refused unless the command line granted it
    (the MCP server: it imports a user module only when started with --env-package/--env-class)."""
    _GRANTS.presets_trusted = False


def bind_class(env_id: str, path: str) -> None:
    """Register ``env_id`` as the granted class ``path`` (Gymnasium imports its module on make). EnvModuleError
    when ``env_id`` is already registered as something else."""
    import gymnasium as gym

    if path not in _GRANTS.classes:
        raise EnvModuleError(f"{env_id} is the class {path}, which gsolve imports only when you name it: pass "
                             f"--env-class {path} ({TRUST})")
    if _GRANTS.bound.get(env_id) == path:
        return
    if env_id in gym.registry and gym.spec(env_id).entry_point != path:  # the same class again: nothing to undo
        raise EnvModuleError(f"--env-class {path}: {env_id!r} is already registered as "
                             f"{gym.spec(env_id).entry_point}; name your environment with an id of its own, e.g. "
                             f"{path.rsplit(':', 1)[1]}-v0")
    if env_id not in gym.registry:
        gym.register(id=env_id, entry_point=path)
    _GRANTS.bound[env_id] = path


def served_id(path: str) -> str:
    """The id ``gsolve mcp --env-class MODULE:CLASS`` registers the class as: ``CLASS-v0``."""
    return f"{check_class_path(path).rsplit(':', 1)[1]}-v0"


def bind_granted_classes() -> dict[str, str]:
    """Register each granted class not yet bound to an id as :func:`served_id` (the MCP server: its clients name
    environments by id, and the operator named only the class). Returns id -> MODULE:CLASS for every bound class.
    EnvModuleError when that id is taken by another environment (the operator renames the class)."""
    unbound = sorted(_GRANTS.classes - set(_GRANTS.bound.values()))
    if not unbound:  # the MCP server calls this at start: without --env-class it must not import gymnasium
        return dict(_GRANTS.bound)
    import gymnasium as gym

    for path in unbound:
        env_id = served_id(path)
        if env_id in gym.registry and gym.spec(env_id).entry_point != path:
            raise EnvModuleError(f"--env-class {path}: gsolve mcp registers it as {env_id!r}, which is already "
                                 f"registered as {gym.spec(env_id).entry_point}; give the class another name")
        bind_class(env_id, path)
    return dict(_GRANTS.bound)


def granted_ids() -> dict[str, str]:
    """Each id this process's grants made trainable -> the flag that did (``--env-class M:C``: the ids its class
    is bound to, first; ``--env-package P``: the ids P registers), each kind sorted by id."""
    import gymnasium as gym

    out = {env_id: f"--env-class {path}" for env_id, path in sorted(_GRANTS.bound.items())}  # the user's own first
    for package, ids in _GRANTS.packages.items():
        # imported before it was granted (ids empty): its entry points say which ids are its own
        prefixes = (f"{package}.", f"{package}:")
        ids = ids or frozenset(str(k) for k, s in gym.registry.items() if str(s.entry_point).startswith(prefixes))
        for env_id in sorted(ids):
            out.setdefault(env_id, f"--env-package {package}")
    return out


def packages_registering(env_id: str) -> list[str]:
    """The granted packages whose import registered ``env_id`` (what a run of it records as env_package)."""
    import gymnasium as gym

    out = [p for p, ids in _GRANTS.packages.items() if env_id in ids]
    if not out and env_id in gym.registry:  # imported before it was granted: its entry point says whose it is
        entry = str(gym.spec(env_id).entry_point)
        out = [p for p in _GRANTS.packages if entry.startswith((f"{p}.", f"{p}:"))]
    return out


def bound_ids() -> list[str]:
    """The ids this process registered a user's class as (--env-class), sorted."""
    return sorted(_GRANTS.bound)


def bound_class(env_id: str) -> str | None:
    """The MODULE:CLASS ``env_id`` was registered as by this process (--env-class), or None."""
    return _GRANTS.bound.get(env_id)


def require(env_id: str, packages: Iterable[str], env_class: str | None, *, from_preset: bool = False) -> None:
    """Make what a config needs available: its packages imported, its class registered as ``env_id``, each
    only if granted (or, ``from_preset`` in a process that trusts presets, granted now). EnvModuleError in one
    sentence naming the flag otherwise: a run folder's config never imports anything by itself."""
    packages = list(packages)
    if from_preset and _GRANTS.presets_trusted:
        grant_packages(packages)
        if env_class is not None:
            grant_class(env_class)
    missing = [p for p in packages if p not in _GRANTS.packages]
    if missing:
        flags = " ".join(f"--env-package {p}" for p in missing)
        where = "a preset" if from_preset else "its config (env_package)"
        raise EnvModuleError(f"{env_id} is registered by {', '.join(repr(p) for p in missing)}, which {where} "
                             f"names and gsolve imports only when you name it: pass {flags} ({TRUST})")
    if env_class is not None:
        bind_class(env_id, env_class)


def require_config(cfg: Any, *, from_preset: bool = False) -> None:
    """:func:`require` for a Config (or anything with env_id, env_package and env_class)."""
    require(cfg.env_id, getattr(cfg, "env_package", ()) or (), getattr(cfg, "env_class", None),
            from_preset=from_preset)


def flags_for(cfg: Any) -> list[str]:
    """The command-line flags a child process (a trainer, fix, promote) needs for ``cfg``'s modules, each
    granted in this process (EnvModuleError otherwise: a child is never granted what its parent was not)."""
    require_config(cfg)
    out: list[str] = []
    for p in getattr(cfg, "env_package", ()) or ():
        out += ["--env-package", p]
    if getattr(cfg, "env_class", None):
        out += ["--env-class", cfg.env_class]
    return out


def env_flags(config_id: str) -> list[str]:
    """The flags that made ``config_id``'s environment in this process (for a command line a user copies)."""
    env_id = config_id.partition(":")[0]
    out = [f for p in packages_registering(env_id) for f in ("--env-package", p)] if env_id in _registered() else []
    path = bound_class(env_id)
    return out + (["--env-class", path] if path else [])


def recorded_flags(config: Mapping[str, Any]) -> list[str]:
    """The flags a run's recorded config (env_package, env_class) needs on a command line, as text: nothing
    is imported (what ``gsolve diagnose`` prints into the ``try:`` commands of a run it only reads)."""
    packages = config.get("env_package") or []
    out = [f for p in (packages if isinstance(packages, list) else [packages]) for f in ("--env-package", str(p))]
    return out + (["--env-class", str(config["env_class"])] if config.get("env_class") else [])


def granted_flags() -> list[str]:
    """Every grant of this process as flags (what ``gsolve mcp`` passes to a `gsolve fix` it starts)."""
    out: list[str] = []
    for p in _GRANTS.packages:
        out += ["--env-package", p]
    for c in sorted(_GRANTS.classes):
        out += ["--env-class", c]
    return out


def grant_from_flags(packages: Iterable[str] | None, classes: Iterable[str] | None) -> None:
    """The CLI's flags: each --env-package imported now, each --env-class allowed (imported, checked)."""
    grant_packages(packages or ())
    for path in classes or ():
        grant_class(path)


def snapshot() -> Any:
    """The grants as they are (tests restore them with :func:`restore`)."""
    return _Grants(dict(_GRANTS.packages), set(_GRANTS.classes), dict(_GRANTS.bound), _GRANTS.presets_trusted)


def restore(state: Any) -> None:
    global _GRANTS
    _GRANTS = state
