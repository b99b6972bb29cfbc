"""MCP tool ``diagnose_run``: a thin adapter over gymnasium_solver.diagnostics.

``register(server, store)`` is called by ``mcp_server.server.create_server``. The tool is read-only,
works on live runs (the result says the data is partial) and raises actionable errors (unknown run
-> close matches) that the model sees verbatim. ``min_severity`` keeps only the alerts at or above
a severity: the cheap re-check of a live run that get_metric_alerts used to be.
"""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver import MCPServer
from pydantic import Field

from gymnasium_solver.diagnostics import Diagnosis, diagnose_run_dir
from gymnasium_solver.diagnostics.models import SEVERITY_RANK, Severity
from gymnasium_solver.run_store import RunStore
from mcp_server.common import READ_ONLY, RunRef, result_in_tool_terms, tool


def diagnose_in_store(store: RunStore, ref: str, min_severity: Severity = Severity.INFO) -> Diagnosis:
    """Diagnose run ``ref`` through the store's cached reads (numpy metrics, crash-aware status); findings
    below ``min_severity`` are left out and a note says how many."""
    d = diagnose_run_dir(store, store.resolve(ref))
    keep = [f for f in d.findings if SEVERITY_RANK[f.severity] >= SEVERITY_RANK[min_severity]]
    if len(keep) == len(d.findings):
        return d
    left_out = f"{len(d.findings) - len(keep)} finding(s) below {min_severity.value} left out (min_severity)"
    return d.model_copy(update={"findings": keep, "notes": [*d.notes, left_out]})


def register(server: MCPServer, store: RunStore) -> None:
    """Add diagnose_run to ``server``, reading runs through ``store``."""

    @tool(server, READ_ONLY, store.runs_dir)
    def diagnose_run(
        run_id: RunRef,
        min_severity: Annotated[Severity, Field(description="leave out findings below this severity, e.g. "
                                                "'warning' to re-check a live run's alerts")] = Severity.INFO,
    ) -> Diagnosis:
        """Call this FIRST when asked why a run did not solve, whether a live run is on track, or what to
        change: verdict, gap to the threshold, trends, and findings ranked by how likely they explain the
        outcome, each with evidence and suggested_changes (overrides for start_training or fix_run)."""
        return result_in_tool_terms(diagnose_in_store(store, run_id, Severity(min_severity)))
