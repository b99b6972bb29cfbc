"""MCP tools ``diagnose_run`` and ``get_metric_alerts``: thin adapters over gymnasium_solver.diagnostics.

``register(server, store)`` is called by ``mcp_server.server.create_server`` at the end. Both tools
are read-only, work on live runs (the result says the data is partial) and raise actionable errors
(unknown run -> close matches) that the model sees verbatim.
"""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel, Field

from gymnasium_solver.diagnostics import Diagnosis, diagnose_run_dir
from gymnasium_solver.diagnostics.models import SEVERITY_RANK, Finding, Severity
from gymnasium_solver.run_store import RunStore
from mcp_server.common import READ_ONLY, RunRef, tool


class MetricAlerts(BaseModel):
    """The diagnosis' findings only, filtered by severity."""

    run_id: str
    status: str
    partial: bool = Field(description="true while the run is still running: alerts may change")
    verdict: str
    alerts: list[Finding] = Field(description="findings at or above min_severity, most likely cause first")
    omitted: int = Field(description="findings below min_severity that were left out")
    notes: list[str]


def diagnose_in_store(store: RunStore, ref: str) -> Diagnosis:
    """Diagnose run ``ref`` through the store's cached reads (numpy metrics, crash-aware status)."""
    return diagnose_run_dir(store, store.resolve(ref))


def metric_alerts(store: RunStore, ref: str, min_severity: Severity = Severity.WARNING) -> MetricAlerts:
    d = diagnose_in_store(store, ref)
    keep = [f for f in d.findings if SEVERITY_RANK[f.severity] >= SEVERITY_RANK[min_severity]]
    return MetricAlerts(run_id=d.run_id, status=d.status, partial=d.partial, verdict=str(d.verdict), alerts=keep,
                        omitted=len(d.findings) - len(keep), notes=d.notes)


def register(server: MCPServer, store: RunStore) -> None:
    """Add diagnose_run and get_metric_alerts to ``server``, reading runs through ``store``."""

    @tool(server, READ_ONLY, store.runs_dir)
    def diagnose_run(run_id: RunRef) -> Diagnosis:
        """Diagnose a run: call this FIRST when asked why a run did not solve, whether a live run is on
        track, or what to change.

        Returns the verdict (healthy/warning/critical), whether it solved and the gap to the reward
        threshold (absolute and %), progress and ETA for a live run, the trend of eval and training
        return (improving/flat/declining from a robust Theil-Sen slope with its 95% interval), and
        findings ranked by how likely they explain the outcome (highest score first). Each finding has
        a stable id, severity, evidence (metric, env-step range, observed vs healthy range with its
        source), the likely cause, and suggested_changes whose set_arg applies as printed:
        `gsolve train <config_id> --set <set_arg>` (or start_training with overrides {key: suggested}).
        partial=true means the run is still running and the data is incomplete; notes say what could
        not be checked. Findings of severity 'info' are side observations, not explanations."""
        return diagnose_in_store(store, run_id)

    @tool(server, READ_ONLY, store.runs_dir)
    def get_metric_alerts(
        run_id: RunRef,
        min_severity: Annotated[
            Severity,
            Field(description="leave out findings below this severity; 'info' returns them all"),
        ] = Severity.WARNING,
    ) -> MetricAlerts:
        """Only the alerts of a run's diagnosis (same findings as diagnose_run, without the summary,
        trends and progress), filtered by severity: non-finite losses, exploding gradients or value
        loss, approximate KL too high or near zero, clipping out of range, target-KL early stopping,
        explained variance low or collapsing, entropy collapse or never decreasing, plateaus,
        collapses, budget spent while improving, train/eval mismatch, throughput drops. Use it to
        re-check a live run cheaply; partial=true while it is still running."""
        return metric_alerts(store, run_id, Severity(min_severity))
