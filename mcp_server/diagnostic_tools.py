"""MCP tools ``diagnose_run`` and ``get_metric_alerts``: thin adapters over gymnasium_solver.diagnostics.

``register(server, store)`` is called by ``mcp_server.server.create_server`` at the end. Both tools
are read-only, work on live runs (the result says the data is partial) and raise actionable errors
(unknown run -> close matches) that the model sees verbatim.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import BaseModel, Field

from gymnasium_solver.diagnostics import Diagnosis, diagnose_run_dir
from gymnasium_solver.diagnostics.models import SEVERITY_RANK, Finding, Severity
from gymnasium_solver.run_store import RunStore

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)

RunRef = Annotated[
    str,
    Field(description="run id (e.g. 20261125-221900-3fa9), a unique prefix of one, or '@last' for the newest run"),
]


class MetricAlerts(BaseModel):
    """The diagnosis' findings only, filtered by severity."""

    run_id: str
    status: str
    partial: bool = Field(description="true while the run is still running: alerts may change")
    verdict: str
    alerts: list[Finding] = Field(description="findings at or above min_severity, most likely cause first")
    omitted: int = Field(description="findings below min_severity that were left out")
    notes: list[str]


@contextmanager
def _user_errors() -> Iterator[None]:
    # The run store's errors (unknown run with close matches, malformed files) are ValueErrors
    # whose message already says what to do; the model should see exactly that.
    try:
        yield
    except ToolError:
        raise
    except (ValueError, FileNotFoundError, PermissionError) as exc:
        raise ToolError(str(exc)) from None


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

    @server.tool(annotations=READ_ONLY)
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
        with _user_errors():
            return diagnose_in_store(store, run_id)

    @server.tool(annotations=READ_ONLY)
    def get_metric_alerts(
        run_id: RunRef,
        min_severity: Annotated[
            Literal["info", "warning", "critical"],
            Field(description="leave out findings below this severity; 'info' returns them all"),
        ] = "warning",
    ) -> MetricAlerts:
        """Only the alerts of a run's diagnosis (same findings as diagnose_run, without the summary,
        trends and progress), filtered by severity: non-finite losses, exploding gradients or value
        loss, approximate KL too high or near zero, clipping out of range, target-KL early stopping,
        explained variance low or collapsing, entropy collapse or never decreasing, plateaus,
        collapses, budget spent while improving, train/eval mismatch, throughput drops. Use it to
        re-check a live run cheaply; partial=true while it is still running."""
        with _user_errors():
            return metric_alerts(store, run_id, Severity(min_severity))
