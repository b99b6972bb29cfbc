"""Score the diagnostics against a labelled corpus of run folders (tests/fixtures/corpus).

Each corpus folder holds run.json, config.yaml, metrics.csv and labels.json (written by
scripts/make_corpus.py). A planted-fault run that failed to solve counts as a *fault case*: the
top finding must name the planted cause (its id is one of ``expected_rules``) and its first
suggested change must move ``expected_key`` in ``expected_direction``. A planted-fault run that
solved anyway is not a failure to explain; it only must not be called critical. Healthy runs must
get no warning or critical finding.

Per rule: a firing (at warning/critical severity) is a true positive on a fault case whose
expected rules include it, a false positive on a healthy run; recall is over the fault cases whose
expected rules include the rule.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from gymnasium_solver.diagnostics.diagnose import diagnose
from gymnasium_solver.diagnostics.models import Diagnosis, Severity
from gymnasium_solver.run_folder import parse_metrics_text, read_run_info


class CaseResult(BaseModel):
    case: str
    kind: str  # "fault", "fault_solved_anyway" or "healthy"
    expected_rules: list[str]
    top_rule: str | None
    top_change: str | None
    cause_ok: bool | None = None
    change_ok: bool | None = None
    warnings: list[str]
    verdict: str


class RuleScore(BaseModel):
    rule: str
    top: int
    top_correct: int
    precision_top: float | None
    fired: int
    true_positives: int
    false_positives_on_healthy: int
    cases_with_this_cause: int
    precision: float | None
    recall: float | None


class CorpusScore(BaseModel):
    cases: list[CaseResult]
    fault_cases: int
    cause_accuracy: float
    change_accuracy: float
    healthy_runs: int
    healthy_with_warning: int
    solved_fault_runs: int
    solved_fault_runs_critical: int
    rules: list[RuleScore]


def load_case(folder: Path) -> tuple[dict[str, Any], Diagnosis]:
    """(labels, diagnosis) of one corpus folder."""
    import yaml

    labels = json.loads((folder / "labels.json").read_text(encoding="utf-8"))
    info = read_run_info(folder)
    config = yaml.safe_load((folder / "config.yaml").read_text(encoding="utf-8"))
    table = parse_metrics_text((folder / "metrics.csv").read_text(encoding="utf-8"))
    return labels, diagnose(info, config, table)


def score_corpus(root: Path) -> CorpusScore:
    results: list[CaseResult] = []
    for folder in sorted(p for p in root.iterdir() if (p / "labels.json").is_file()):
        labels, d = load_case(folder)
        loud = [f for f in d.findings if f.severity != Severity.INFO]
        top = loud[0] if loud else None
        change = top.suggested_changes[0] if top and top.suggested_changes else None
        expected = list(labels["expected_rules"])
        if not expected:
            kind = "healthy"
        elif d.returns.solved:
            kind = "fault_solved_anyway"
        else:
            kind = "fault"
        r = CaseResult(
            case=labels["case"], kind=kind, expected_rules=expected,
            top_rule=top.id if top else None,
            top_change=f"{change.key} {change.direction}" if change else None,
            warnings=[f.id for f in loud], verdict=str(d.verdict),
        )
        if kind == "fault":
            r.cause_ok = top is not None and top.id in expected
            r.change_ok = change is not None and (change.key, change.direction) == (
                labels["expected_key"], labels["expected_direction"])
        results.append(r)
    faults = [r for r in results if r.kind == "fault"]
    healthy = [r for r in results if r.kind == "healthy"]
    solved_faults = [r for r in results if r.kind == "fault_solved_anyway"]
    rules = sorted({w for r in results for w in r.warnings} | {e for r in faults for e in r.expected_rules})
    scores = []
    for rule in rules:
        fired = [r for r in faults + healthy if rule in r.warnings]
        tp = sum(1 for r in fired if rule in r.expected_rules)
        fp_healthy = sum(1 for r in healthy if rule in r.warnings)
        relevant = [r for r in faults if rule in r.expected_rules]
        hit = sum(1 for r in relevant if rule in r.warnings)
        tops = [r for r in faults + healthy if r.top_rule == rule]
        top_ok = sum(1 for r in tops if rule in r.expected_rules)
        scores.append(RuleScore(
            rule=rule, top=len(tops), top_correct=top_ok,
            precision_top=round(top_ok / len(tops), 3) if tops else None, fired=len(fired), true_positives=tp, false_positives_on_healthy=fp_healthy,
            cases_with_this_cause=len(relevant),
            precision=round(tp / len(fired), 3) if fired else None,
            recall=round(hit / len(relevant), 3) if relevant else None,
        ))
    return CorpusScore(
        cases=results,
        fault_cases=len(faults),
        cause_accuracy=round(sum(bool(r.cause_ok) for r in faults) / max(len(faults), 1), 3),
        change_accuracy=round(sum(bool(r.change_ok) for r in faults) / max(len(faults), 1), 3),
        healthy_runs=len(healthy),
        healthy_with_warning=sum(1 for r in healthy if r.warnings),
        solved_fault_runs=len(solved_faults),
        solved_fault_runs_critical=sum(1 for r in solved_faults if r.verdict == "critical"),
        rules=scores,
    )


def healthy_observations(root: Path) -> dict[str, tuple[float, float]]:
    """(min, max) over the healthy corpus runs of each quantity a threshold is compared with.

    This is how the thresholds were checked against real runs of ours: each healthy value must sit
    on the healthy side of its threshold with a margin (docs/diagnostics.md lists both).
    """
    import numpy as np
    import yaml

    from gymnasium_solver.diagnostics.series import RunData, median, split
    from gymnasium_solver.run_folder import M

    seen: dict[str, list[float]] = {}

    def add(name: str, v: float) -> None:
        if v == v:  # not nan
            seen.setdefault(name, []).append(float(v))

    for folder in sorted(p for p in root.iterdir() if (p / "labels.json").is_file()):
        labels = json.loads((folder / "labels.json").read_text(encoding="utf-8"))
        if not labels["healthy"]:
            continue
        info = read_run_info(folder)
        cfg = yaml.safe_load((folder / "config.yaml").read_text(encoding="utf-8"))
        data = RunData(parse_metrics_text((folder / "metrics.csv").read_text(encoding="utf-8")))
        for name, key in ((M.APPROX_KL, "approx_kl median"), (M.CLIP_FRACTION, "clip_fraction median")):
            _, y = data.finite(name)
            if len(y):
                add(key, median(y))
                add(key.replace("median", "early max"), float(np.max(split(y)[0])))
        _, y = data.finite(M.EPOCHS_COMPLETED)
        if len(y) and cfg.get("n_epochs"):
            add("epochs_completed / n_epochs median", median(y) / cfg["n_epochs"])
        _, y = data.finite(M.ENTROPY)
        if len(y) >= 3:
            space = info.action_space
            ref = space.max_entropy if space and space.max_entropy else median(y[:3])
            add("late entropy / reference (all runs)", median(split(y)[1]) / ref)
            if len(y) >= 20:
                add("late entropy / reference (runs with >= 20 updates)", median(split(y)[1]) / ref)
        _, y = data.finite(M.EXPLAINED_VARIANCE)
        if len(y) >= 20 and info.algo == "ppo":
            add("late explained variance (PPO runs with >= 20 updates)", median(split(y)[1]))
        for name, key in ((M.GRAD_NORM, "grad_norm late/early"), (M.VALUE_LOSS, "value_loss late/early"),
                          (M.FPS, "fps late/early")):
            _, y = data.finite(name)
            if len(y) >= 8 and median(split(y)[0]) > 0:
                add(key, median(split(y)[1]) / median(split(y)[0]))
    return {k: (round(min(v), 4), round(max(v), 4)) for k, v in seen.items()}


def live_replay(root: Path, every: int = 5) -> tuple[int, dict[str, int]]:
    """Replay each healthy run as a live run cut every ``every`` updates, up to (not including)
    its solving evaluation: (snapshots, warning/critical findings per rule id).

    This measures false alarms a user would see while watching a healthy run train.
    """
    import yaml

    from gymnasium_solver.run_folder import M, MetricsTable, RunStatus

    snapshots, fired = 0, dict[str, int]()
    for folder in sorted(p for p in root.iterdir() if (p / "labels.json").is_file()):
        if not json.loads((folder / "labels.json").read_text(encoding="utf-8"))["healthy"]:
            continue
        info = read_run_info(folder)
        cfg = yaml.safe_load((folder / "config.yaml").read_text(encoding="utf-8"))
        table = parse_metrics_text((folder / "metrics.csv").read_text(encoding="utf-8"))
        ei, si = table.columns.index(M.EVAL_RETURN_MEAN), table.columns.index(M.ENV_STEPS)
        threshold = info.reward_threshold if info.reward_threshold is not None else float("inf")
        for cut in range(every, len(table), every):
            rows = table.rows[:cut]
            if any((v := r[ei]) is not None and v >= threshold for r in rows):
                break
            progress = info.progress.model_copy(update={"env_steps": int(rows[-1][si] or 0)})
            live = info.model_copy(update={"status": RunStatus.RUNNING, "stop_reason": None, "solved": False,
                                           "solved_at": None, "best_eval": None, "progress": progress})
            d = diagnose(live, cfg, MetricsTable(table.columns, rows), status=RunStatus.RUNNING)
            snapshots += 1
            for f in d.findings:
                if f.severity != Severity.INFO:
                    fired[f.id] = fired.get(f.id, 0) + 1
    return snapshots, fired


def markdown_report(root: Path) -> str:
    """The corpus results as the markdown tables in docs/diagnostics.md."""
    s = score_corpus(root)
    out = [
        f"- fault runs that failed (the cases the diagnosis must explain): {s.fault_cases}",
        f"- top finding names the planted cause: {s.cause_accuracy:.1%}",
        f"- top suggested change moves the right key in the right direction: {s.change_accuracy:.1%}",
        f"- healthy solved runs with a warning or critical finding: {s.healthy_with_warning} of {s.healthy_runs}",
        f"- planted-fault runs that solved anyway: {s.solved_fault_runs} (called critical: {s.solved_fault_runs_critical})",
        "",
        "| rule | ranked first | ...and the planted cause | precision (top) | fired at any rank | "
        "...on a run with this cause | on healthy runs | precision (any rank) | runs with this cause | recall |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in s.rules:
        pt = "n/a" if r.precision_top is None else f"{r.precision_top:.2f}"
        p = "n/a" if r.precision is None else f"{r.precision:.2f}"
        rc = "n/a (symptom)" if r.recall is None else f"{r.recall:.2f}"
        out.append(f"| `{r.rule}` | {r.top} | {r.top_correct} | {pt} | {r.fired} | {r.true_positives} | "
                   f"{r.false_positives_on_healthy} | {p} | {r.cases_with_this_cause} | {rc} |")
    out += ["", "| case | outcome | top finding | top change | cause ok | change ok |", "|---|---|---|---|---|---|"]
    for c in s.cases:
        ok = "" if c.cause_ok is None else ("yes" if c.cause_ok else "NO")
        ok2 = "" if c.change_ok is None else ("yes" if c.change_ok else "NO")
        out.append(f"| {c.case} | {c.kind} | {c.top_rule or '-'} | {c.top_change or '-'} | {ok} | {ok2} |")
    snaps, fired = live_replay(root)
    out += ["", f"Healthy runs replayed as live runs (cut every 5 updates until they solved): {snaps} snapshots; "
            "snapshots with each warning: " + (", ".join(f"`{k}` {v}" for k, v in sorted(fired.items())) or "none")]
    out += ["", "Healthy runs, observed range of what each threshold is compared with:", "",
            "| quantity | min | max |", "|---|---|---|"]
    for k, (lo, hi) in healthy_observations(root).items():
        out.append(f"| {k} | {lo:g} | {hi:g} |")
    return "\n".join(out)


if __name__ == "__main__":
    import sys

    print(markdown_report(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("tests/fixtures/corpus")))
