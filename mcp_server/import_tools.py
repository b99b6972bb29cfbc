"""MCP tool ``import_runs``: a thin adapter over ``gymnasium_solver.imports.import_runs``.

``register(server, store)`` is called by ``mcp_server.server.create_server``. The tool reads the
folders it is given (never writes there) and writes read-only runs into the server's runs folder;
it never imports torch (TensorBoard files are read with numpy and tensorboard's protobufs).
"""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations
from pydantic import Field

from gymnasium_solver import imports
from gymnasium_solver.run_store import RunStore
from mcp_server.common import tool

# Writes new run folders, never changes existing ones; importing the same content again is a no-op.
IMPORTS_RUNS = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True,
                               open_world_hint=False)


def register(server: MCPServer, store: RunStore) -> None:
    """Add import_runs to ``server``, importing into the runs folder of ``store``."""

    @tool(server, IMPORTS_RUNS, store.runs_dir)
    def import_runs(
        paths: Annotated[list[str], Field(min_length=1, max_length=imports.MAX_PATHS,
                                          description="folders on the server's machine: an RL Zoo / SB3 log folder, "
                                          "an SB3 or CleanRL TensorBoard event folder, or a folder holding such folders")],
        name: Annotated[str | None, Field(max_length=64, description="label: the runs get config id ENV:NAME "
                                          "(default <framework>-<algo>, e.g. zoo-dqn)")] = None,
        env_id: Annotated[str | None, Field(max_length=100, description="Gymnasium id, needed only when the source "
                                            "does not record it (SB3 event folders), e.g. 'CartPole-v1'")] = None,
    ) -> imports.ImportResult:
        """Use to bring runs made with the RL Zoo, Stable-Baselines3 or CleanRL in as read-only runs that every
        read tool and diagnose_run work on (metric names mapped onto ours; fields the source does not record
        are listed); importing the same content again returns the existing run."""
        return imports.import_runs(paths, store.runs_dir, name, env_id)
