"""The model registry's records: what one line of a decision log holds, and the check that a line
reads back as written before it is appended (:mod:`gymnasium_solver.ops.model_registry` stores them).

Issue 26: a 1-episode promotion's lower bound of -inf was written as JSON null, the reader skipped
that line, and the registry broke for good. So the reader's one parser (:func:`parse_line`) is run
on every line before it is written (:func:`readable_line`); numbers are finite by declaration; a
record that reads back only with a caveat (:func:`caveat`: those old null bounds) is never written.
No torch and no file access here.
"""

from __future__ import annotations

import json
import re
from enum import StrEnum
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

# How many episodes a promotion re-evaluates: the one declaration (promote, `gsolve promote
# --episodes`, MCP promote_run all check against it). At least 2 because the lower confidence bound
# of the mean needs a sample standard deviation (n - 1 degrees of freedom); with 1 it is -inf, which
# is what broke the registry in issue 26. At most MAX_EPISODES because each re-evaluation is given
# one block of that many fresh seeds, and 1000 CartPole episodes already take minutes.
MIN_EPISODES = 2
MAX_EPISODES = 1000
Episodes = Annotated[int, Field(ge=MIN_EPISODES, le=MAX_EPISODES, description=(
    f"fresh re-evaluation episodes, {MIN_EPISODES}..{MAX_EPISODES}: a lower confidence bound needs at least "
    f"{MIN_EPISODES}, and each re-evaluation gets one block of {MAX_EPISODES} fresh seeds"))]
_EPISODES = TypeAdapter(Episodes)


def check_episodes(episodes: Any, maximum: int = MAX_EPISODES) -> int:
    """``episodes`` if it is a legal re-evaluation length (at most ``maximum``, a caller's lower cap), else
    ValueError with one sentence."""
    try:
        n = _EPISODES.validate_python(episodes, strict=True)  # strict: neither True nor 2.5 is a count
        if n <= maximum:
            return n
    except ValidationError:
        pass
    raise ValueError(f"episodes must be a whole number from {MIN_EPISODES} to {maximum}, got {episodes!r}: "
                     f"a lower confidence bound of the mean return needs at least {MIN_EPISODES} episodes")


class DecisionKind(StrEnum):
    APPROVED = "approved"  # the policy passed
    REJECTED = "rejected"  # the policy failed (the failing checks are recorded); nothing registered
    MANUAL_APPROVAL = "manual_approval"  # the policy failed, a person approved it from the CLI with a reason
    ROLLBACK = "rollback"  # an earlier approved version was made current again


APPROVALS = (DecisionKind.APPROVED, DecisionKind.MANUAL_APPROVAL)


class PolicyCheck(BaseModel):
    name: str = Field(description="solved, diagnosis, checkpoint or evaluation")
    passed: bool
    detail: str = Field(description="what was found, in a sentence")


class EvaluationSummary(BaseModel):
    """The fresh re-evaluation of the checkpoint a promotion considered. Numbers are finite: JSON has
    no infinity, and pydantic would write one as null, which the reader could not read back."""

    model_config = ConfigDict(allow_inf_nan=False)

    episodes: int = Field(ge=1, description=f"episodes evaluated; >= {MIN_EPISODES} (records from before issue 26 "
                          "may hold 1)")
    seed: int = Field(description="seed of the first episode; episodes use fresh seeds, never the training evals'")
    return_mean: float
    return_std: float = Field(description="population std of the episode returns")
    return_min: float
    return_max: float
    lower_bound: float | None = Field(description="one-sided lower confidence bound of the mean return (Student t); "
                                      "null only in records from before issue 26 evaluated on 1 episode, where it "
                                      "is undefined")
    confidence: float = Field(description="confidence of lower_bound, e.g. 0.95")
    threshold: float | None = Field(description="the run's reward threshold the mean must reach; null if it has no "
                                    "finite one")
    checkpoint_env_steps: int


class Decision(BaseModel):
    """One line of decisions.jsonl."""

    seq: int = Field(description="1-based position in the environment's decision log")
    time: str
    env_id: str
    kind: DecisionKind
    version: int | None = Field(default=None, description="the version registered (approvals) or made current (rollback)")
    current_before: int | None = None
    current_after: int | None = None
    run_id: str | None = None
    config_id: str | None = None
    algo: str | None = None
    checkpoint: str | None = Field(default=None, description="the run's checkpoint considered (best)")
    checks: list[PolicyCheck] = Field(default_factory=list)
    failed_checks: list[str] = Field(default_factory=list)
    evaluation: EvaluationSummary | None = None
    reason: str | None = Field(default=None, description="why a person approved it manually, or rolled back")
    actor: str = Field(default="cli", description="cli or mcp")
    model_path: str | None = Field(default=None, description="the registered checkpoint, relative to the runs folder")
    sha256: str | None = None


def why(exc: Exception) -> str:
    """A pydantic error (or any other) as a short clause: where in the record, and what is wrong."""
    if isinstance(exc, ValidationError) and exc.errors():
        e = exc.errors()[0]
        where = ".".join(str(p) for p in e["loc"])
        return f"{where}: {e['msg']}" if where else str(e["msg"])
    return str(exc) or type(exc).__name__


def parse_line(line: str) -> Decision:
    """The reader's one parser, used on every line read and on every line before it is written."""
    return Decision.model_validate_json(line)


def caveat(d: Decision) -> str | None:
    """What a reader must know about a decision that reads back but is not what we write today."""
    ev, which = d.evaluation, f"decision #{d.seq} ({d.kind.value})"
    if ev is not None and ev.episodes < MIN_EPISODES:
        return (f"{which} was evaluated on {ev.episodes} episode(s), which registries before issue 26 allowed: its "
                f"lower confidence bound is undefined (a bound needs {MIN_EPISODES}); it is replayed as recorded")
    if ev is not None and ev.lower_bound is None:
        return (f"{which} has no lower confidence bound (null), which only registries before issue 26 wrote; it is "
                "replayed as recorded")
    return None


def claimed(line: str, key: str) -> int:
    """The whole number an unreadable line gives for ``key`` (0 if none), so it is never reused."""
    try:
        value = json.loads(line).get(key)
    except (ValueError, AttributeError, RecursionError):
        m = re.search(rf'"{key}"\s*:\s*(\d{{1,12}})', line)
        value = int(m.group(1)) if m else 0
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _difference(a: Any, b: Any, at: str = "") -> str:
    """The first field where ``a`` (written) and ``b`` (read back) differ, e.g. evaluation.return_mean."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in a:
            if key not in b or a[key] != b[key]:
                return _difference(a[key], b.get(key), f"{at}.{key}" if at else key)
    return f"{at} = {a!r} would read back as {b!r}"


def readable_line(decision: Decision) -> bytes:
    """``decision`` as the line to append, after parsing it back with the reader's own parser:
    ValueError (one sentence, nothing written) unless it reads back whole, equal and without a caveat.
    This is where a non-finite number is refused: JSON has none, pydantic writes it as null."""
    line = decision.model_dump_json()
    refuse = f"refusing to record the {decision.kind.value} decision for {decision.env_id}: it would not read back"
    try:
        back = parse_line(line)
    except ValueError as exc:
        raise ValueError(f"{refuse} ({why(exc)}); only finite numbers are recorded") from None
    if back != decision:  # NaN != NaN, and inf comes back as null or not at all: both land here
        raise ValueError(f"{refuse} as written ({_difference(decision.model_dump(), back.model_dump())}); only "
                         "finite numbers are recorded")
    note = caveat(back)
    if note:
        raise ValueError(f"{refuse} without a caveat ({note})")
    return line.encode("utf-8") + b"\n"
