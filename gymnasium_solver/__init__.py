"""gymnasium-solver: train agents on Gymnasium fast, and debug the runs (`gsolve`, MCP server).

The algorithms are those of ``contract.algorithms.ALGORITHMS``: our own PPO, A2C, REINFORCE and DQN, and
Stable-Baselines3's QR-DQN, SAC, TD3 and TQC; every one writes the same run folder.

The Python API, ``from gymnasium_solver import Runs`` (docs/api.md), is imported on first use
(module ``__getattr__``), so ``import gymnasium_solver`` stays cheap and the MCP server, which
imports this package, never pulls in pandas or torch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gymnasium_solver.api import Run, Runs

__all__ = ["Run", "Runs"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from gymnasium_solver import api

        return getattr(api, name)
    raise AttributeError(f"module 'gymnasium_solver' has no attribute {name!r}")
