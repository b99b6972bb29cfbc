"""Diagnostics: name why a run did not solve, with evidence and a config change that applies as is.

Pure functions over the run folder's contents (no torch, no trainer): :func:`diagnose` takes a
run's RunInfo, resolved config and MetricsTable and returns a :class:`Diagnosis`.
"""

from gymnasium_solver.diagnostics.diagnose import diagnose, diagnose_run_dir, trend
from gymnasium_solver.diagnostics.models import (
    Diagnosis,
    Evidence,
    Finding,
    Severity,
    SuggestedChange,
    Trend,
    Verdict,
)

__all__ = [
    "Diagnosis",
    "Evidence",
    "Finding",
    "Severity",
    "SuggestedChange",
    "Trend",
    "Verdict",
    "diagnose",
    "diagnose_run_dir",
    "trend",
]
