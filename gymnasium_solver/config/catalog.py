"""Which environments can be trained and where their settings would come from: our (or the user's)
preset, the RL Zoo's entry, or gsolve's defaults only (``gsolve list-envs --all``, MCP list_environments).
Reads Gymnasium's registry without creating any environment."""

from __future__ import annotations

from typing import NamedTuple

from gymnasium_solver.config.atari import ZOO_ATARI_ENTRY, is_ale_game, register_ale
from gymnasium_solver.config.presets import list_env_files, list_variants
from gymnasium_solver.config.zoo import zoo_algos_by_env, zoo_atari_algos

MAX_CATALOG_ROWS = 200  # registered ids are 400+; a page of them is enough to read


class EnvironmentSettings(NamedTuple):
    env_id: str
    settings: str  # 'preset', 'zoo' or 'default': the chain's first match for the environment's best-covered algorithm
    preset_variants: dict[str, str]  # variant -> algorithm
    zoo_algos: list[str]  # the algorithms the RL Zoo has an entry for (exact id), or whose atari entry gsolve trains
    zoo_entry: str | None = None  # 'atari' when zoo_algos are the Zoo's generic entry for ALE games, else None


class Catalog(NamedTuple):
    environments: list[EnvironmentSettings]
    total: int  # how many matched the filter before the page was cut


def _registered() -> list[str]:
    import gymnasium as gym

    register_ale()  # the atari extra's games, when it is installed: Gymnasium lists them only once ale_py is imported
    return sorted(str(k) for k in gym.registry)


def environment_catalog(contains: str | None = None, *, registered: bool = True, offset: int = 0,
                        limit: int = 50, only: list[str] | None = None) -> Catalog:
    """The environments whose id contains ``contains`` (case-insensitive): those with presets, then (with
    ``registered``) every id Gymnasium registers, each with where its settings come from. One page of
    at most ``limit`` (<= MAX_CATALOG_ROWS) rows from ``offset``. ``only``: these ids instead, in this order."""
    limit = max(1, min(limit, MAX_CATALOG_ROWS))
    presets = list_env_files()
    zoo = zoo_algos_by_env()
    atari = zoo_atari_algos()
    if only is not None:
        ids = only
    else:
        ids = list(presets) + ([e for e in _registered() if e not in presets] if registered else [])
    needle = (contains or "").lower()
    ids = [e for e in ids if needle in e.lower()]
    rows = []
    for env_id in ids[offset:offset + limit]:
        try:
            variants = list_variants(env_id) if env_id in presets else {}
        except ValueError:
            variants = {}
        algos = zoo.get(env_id, [])
        generic = not algos and bool(atari) and is_ale_game(env_id)
        algos = list(atari) if generic else algos
        settings = "preset" if env_id in presets else ("zoo" if algos else "default")
        rows.append(EnvironmentSettings(env_id, settings, variants, algos, ZOO_ATARI_ENTRY if generic else None))
    return Catalog(rows, len(ids))


def no_match_note(contains: str) -> str:
    """Why a filter listed nothing, and where else an id could come from."""
    from gymnasium_solver.config.build import close_matches

    close = close_matches(contains, _registered())
    near = f" (did you mean {' or '.join(map(repr, close))}?)" if close else ""
    return (f"no environment id contains {contains!r}{near}; ids a package registers are listed once it is "
            "imported: add --env-package PKG (e.g. minigrid for MiniGrid-*)")


def page_note(shown: int, total: int, contains: str | None, offset: int = 0) -> str:
    """What `gsolve list-envs --all` says after its count: which page this is and how to get the next, or that the
    filter matched nothing."""
    if offset + shown < total:  # a page holds at most MAX_CATALOG_ROWS ids: --offset pages on
        return (f" (ids {offset + 1}-{offset + shown} of {total}: the next page with --offset {offset + shown}, or "
                "narrow with --filter)")
    if offset and total:
        return f" (ids {min(offset + 1, total)}-{offset + shown} of {total}: the last page)" if shown else \
               f" (--offset {offset} is past the last of {total}: use 0..{total - 1})"
    return f" ({no_match_note(contains)})" if not total and contains else ""
