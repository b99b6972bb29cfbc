"""What `gsolve train` and `gsolve train --seeds` resolve before training: the config from ENV[:VARIANT], --set,
--seed and --no-zoo, and the lines that say where its settings came from."""

from __future__ import annotations

import sys
from typing import Any

from gymnasium_solver.config import ConfigError, Resolved, parse_overrides, resolve_with_origin
from gymnasium_solver.config.presets import recorded_overrides


def resolve_for_training(config_id: str, sets: list[str], seed: int | None = None,
                         no_zoo: bool = False) -> tuple[Resolved, dict[str, Any]]:
    """The config `gsolve train` trains (``--set`` pairs, ``--seed``, ``--no-zoo``) and its overrides as run.json
    records them (our key names)."""
    overrides = parse_overrides(sets)
    if seed is not None:
        if seed < 0:
            raise ConfigError(f"--seed must be >= 0, got {seed}")
        if overrides.get("seed", seed) != seed:  # one would silently win over the other
            raise ConfigError(f"--seed {seed} and --set seed={overrides['seed']} disagree; give the seed once")
        overrides["seed"] = seed
    # Recorded in our names (run.json overrides); the resolution notes what was read from the Zoo's names.
    resolved = resolve_with_origin(config_id, overrides, use_zoo=not no_zoo)
    return resolved, recorded_overrides(overrides, resolved.config)


def say_origin(resolved: Resolved) -> None:
    """On stderr, before training: where the settings came from and what the resolution noted."""
    origin = resolved.origin
    if origin.settings == "preset" and not origin.notes:
        return
    cid = resolved.config.config_id
    print(f"gsolve train: {cid}: settings from {origin.where} (`gsolve config {cid}` shows each value's source)",
          file=sys.stderr)
    for note in origin.notes:
        print(f"gsolve train: note: {note}", file=sys.stderr)
