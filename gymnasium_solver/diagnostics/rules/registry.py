"""The rule registry: each rule is registered with the finding ids it can emit, so the id list is
derived from the rules themselves instead of kept by hand."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gymnasium_solver.diagnostics.context import Ctx
    from gymnasium_solver.diagnostics.models import Finding

Rule = Callable[["Ctx"], "Finding | None"]

RULES: list[Rule] = []
IDS_BY_RULE: dict[str, tuple[str, ...]] = {}


def rule(*ids: str) -> Callable[[Rule], Rule]:
    """Register a rule ``fn(ctx) -> Finding | None`` that can emit the finding ids ``ids``."""

    def register(fn: Rule) -> Rule:
        RULES.append(fn)
        IDS_BY_RULE[fn.__name__] = ids
        return fn

    return register
