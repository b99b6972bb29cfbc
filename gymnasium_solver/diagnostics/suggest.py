"""Suggested changes: values written as ``--set`` reads them, and the arithmetic that sizes them."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from gymnasium_solver.diagnostics import thresholds as T
from gymnasium_solver.diagnostics.models import SuggestedChange

if TYPE_CHECKING:
    from gymnasium_solver.diagnostics.context import Ctx


def possessive(name: str) -> str:
    """"the preset" -> "the preset's", "gsolve's defaults" -> "gsolve's defaults'"."""
    return f"{name}'" if name.endswith("s") else f"{name}'s"


def fmt(v: float | None) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "n/a"
    return f"{v:.3g}"


def best_of(best: float | None, threshold: float | None) -> str:
    """'best eval B of T', the two with the digits that show the gap between them: fmt's three significant
    digits made 474.9 of 475 read '475 of 475' beside a gap of 0.1."""
    shown_best, shown_thr = fmt(best), fmt(threshold)
    if best is not None and threshold is not None and math.isfinite(gap := abs(threshold - best)) and gap > 0:
        try:
            hidden = abs(abs(float(shown_thr) - float(shown_best)) - gap) > gap / 2
        except ValueError:  # 'n/a'
            hidden = False
        if hidden:  # one more decimal than the gap's first significant digit needs, trailing zeros dropped
            digits = max(0, 1 - math.floor(math.log10(gap)))
            shown_best, shown_thr = (f"{v:.{digits}f}".rstrip("0").rstrip(".") for v in (best, threshold))
    return f"best eval {shown_best} of {shown_thr}"


def yaml_number(v: float) -> str:
    """A number as YAML reads it back as a float (PyYAML needs a dot: '1e-05' would be a string)."""
    s = f"{v:.6g}"
    if "e" in s and "." not in s.split("e")[0]:
        m, e = s.split("e")
        s = f"{m}.0e{e}"
    elif "e" not in s and "." not in s and s not in ("inf", "-inf", "nan"):
        s += ".0"
    return s


def yaml_value(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return yaml_number(v)
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}: {yaml_value(x)}" for k, x in v.items()) + "}"
    return str(v)


def change(key: str, current: Any, suggested: Any, direction: str, why: str) -> SuggestedChange:
    return SuggestedChange(
        key=key,
        current=current,
        suggested=suggested,
        direction=direction,  # type: ignore[arg-type]
        why=why,
        set_arg=f"{key}={yaml_value(suggested)}",
    )


def round_sig(v: float) -> float:
    return float(f"{v:.3g}")


def round_up(v: float) -> int:
    """Up to 3 significant digits (52,134 -> 52,200): a suggestion never lands below what it is sized from."""
    if v <= 0:
        return 0
    step = 10 ** max(int(math.floor(math.log10(v))) - 2, 0)
    return int(math.ceil(v / step) * step)


def scaled(value: Any, factor: float) -> Any:
    """Scale a constant or a {start, end} schedule, keeping its shape."""
    if isinstance(value, dict) and "start" in value:
        return {"start": round_sig(float(value["start"]) * factor), "end": round_sig(float(value["end"]) * factor)}
    return round_sig(float(value) * factor)


def start_value(value: Any) -> float:
    if isinstance(value, dict):
        return float(value.get("start", 0.0))
    return float(value)


def lr_change(ctx: Ctx, factor: float, why: str, sane_max: float | None = None) -> SuggestedChange:
    """Scale the learning rate (constant or schedule) by ``factor``; a full order-of-magnitude step
    also lands at least inside the sane range (at most ``sane_max``, default LR_SANE_MAX: Adam's), so one
    retry can fix a rate that is off by 100x."""
    current = ctx.config.get("learning_rate", 3e-4)
    start = start_value(current)
    if start > 0 and factor <= 1 / T.LR_STEP.value:
        factor = min(factor, (sane_max or T.LR_SANE_MAX.value) / start)
    elif start > 0 and factor >= T.LR_STEP.value:
        factor = max(factor, T.LR_SANE_MIN.value / start)
    return change("learning_rate", current, scaled(current, factor), "increase" if factor > 1 else "decrease", why)
