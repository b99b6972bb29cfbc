"""Our own algorithms, one module each (ppo, reinforce, a2c, dqn), and the adapter that drives
Stable-Baselines3's (sb3). Which class trains which algorithm is its row in gymnasium_solver/contract/algorithms.py."""

from __future__ import annotations

import importlib
from typing import Any

from gymnasium_solver.contract.algorithms import ALGORITHMS, Algo


def agent_class(algo: str) -> Any:
    """The class that trains ``algo``: our agent (``agents.<module>:<Class>``), or for an SB3
    algorithm the library's class (imported only now)."""
    module, _, name = ALGORITHMS[Algo(algo)].trainer.partition(":")
    return getattr(importlib.import_module(module), name)
