"""Placeholder until the diagnostics engineer adds diagnose_run and get_metric_alerts."""

from typing import Any


def register(server: Any, store: Any) -> None:
    return None
