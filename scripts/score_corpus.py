"""Score the diagnostics against a labelled corpus of run folders (tests/fixtures/corpus).

Prints two tables: **in-sample** (every other corpus run available as a solved reference) and
**leave-one-type-out** (each fault type scored with references chosen without any run of that
type: the solved reference runs are the corpus's other solved runs of the same environment and
algorithm, never one of the held-out type). The rules' thresholds are constants in
``gymnasium_solver/diagnostics/thresholds.py``, not fitted to the corpus, so what leaving a type out
changes is the references; docs/diagnostics.md says which figure is which.

    .venv/bin/python scripts/score_corpus.py [CORPUS_DIR]

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

from gymnasium_solver.contract.run_folder import parse_metrics_text, read_run_info
from gymnasium_solver.diagnostics.diagnose import diagnose
from gymnasium_solver.diagnostics.models import Diagnosis, Severity, same_direction
from gymnasium_solver.diagnostics.references import EMPTY, ReferenceRun, ReferenceSet, _series
from gymnasium_solver.diagnostics.series import RunData


def fault_type(labels: dict[str, Any]) -> str:
    """The case's fault type (labels.json ``fault_type``; older labels: the case name without its seed)."""
    return str(labels.get("fault_type") or labels["case"].rsplit("_s", 1)[0])


class _Corpus:
    """Every corpus case read once: labels, info, config, metrics; solved runs as references."""

    def __init__(self, root: Path):
        import yaml

        self.cases = []
        for folder in sorted(p for p in root.iterdir() if (p / "labels.json").is_file()):
            labels = json.loads((folder / "labels.json").read_text(encoding="utf-8"))
            info = read_run_info(folder)
            config = yaml.safe_load((folder / "config.yaml").read_text(encoding="utf-8"))
            table = parse_metrics_text((folder / "metrics.csv").read_text(encoding="utf-8"))
            self.cases.append((folder, labels, info, config, table))

    def references(self, info: Any, exclude_type: str | None = None, exclude_case: str | None = None) -> ReferenceSet:
        runs = [ReferenceRun(labels["case"], i.solved_at.env_steps if i.solved_at else None, _series(RunData(t)))
                for _, labels, i, _, t in self.cases
                if i.solved and i.env_id == info.env_id and i.algo == info.algo and labels["case"] != exclude_case
                and (exclude_type is None or fault_type(labels) != exclude_type)]
        return ReferenceSet(runs, f"{len(runs)} solved corpus runs") if runs else EMPTY

    def diagnose(self, case: str, loto: bool = False) -> tuple[dict[str, Any], Diagnosis]:
        for _, labels, info, config, table in self.cases:
            if labels["case"] == case:
                refs = self.references(info, exclude_type=fault_type(labels) if loto else None, exclude_case=case)
                return labels, diagnose(info, config, table, references=refs)
        raise KeyError(case)


class CaseResult(BaseModel):
    case: str
    fault_type: str
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


_CORPORA: dict[Path, _Corpus] = {}


def corpus(root: Path) -> _Corpus:
    if root not in _CORPORA:
        _CORPORA[root] = _Corpus(root)
    return _CORPORA[root]


def load_case(folder: Path) -> tuple[dict[str, Any], Diagnosis]:
    """(labels, diagnosis) of one corpus folder, in-sample (every other solved corpus run a reference)."""
    return corpus(folder.parent).diagnose(folder.name)


def score_corpus(root: Path, loto: bool = False) -> CorpusScore:
    results: list[CaseResult] = []
    c = corpus(root)
    for _, case_labels, *_ in c.cases:
        labels, d = c.diagnose(case_labels["case"], loto=loto)
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
            case=labels["case"], fault_type=fault_type(labels), kind=kind, expected_rules=expected,
            top_rule=top.id if top else None,
            top_change=f"{change.key} {change.direction}" if change else None,
            warnings=[f.id for f in loud], verdict=str(d.verdict),
        )
        if kind == "fault":
            r.cause_ok = top is not None and top.id in expected
            if labels["expected_key"] is None:  # crashed / errored: never blamed on a config key
                r.change_ok = top is not None and not top.suggested_changes
            else:
                r.change_ok = change is not None and change.key == labels["expected_key"] and same_direction(
                    change.key, change.direction, labels["expected_direction"])
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

    from gymnasium_solver.contract.run_folder import M
    from gymnasium_solver.diagnostics.series import RunData, median, split

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

    from gymnasium_solver.contract.run_folder import M, MetricsTable, RunStatus

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


def by_type(s: CorpusScore) -> dict[str, tuple[int, int, int]]:
    """fault type -> (fault runs, top finding names the cause, top change moves the right key the right way)."""
    out: dict[str, tuple[int, int, int]] = {}
    for c in s.cases:
        if c.kind != "fault":
            continue
        n, a, b = out.get(c.fault_type, (0, 0, 0))
        out[c.fault_type] = (n + 1, a + bool(c.cause_ok), b + bool(c.change_ok))
    return out


def loto_report(root: Path) -> str:
    """In-sample and leave-one-type-out side by side, per fault type."""
    ins, held = by_type(score_corpus(root)), by_type(score_corpus(root, loto=True))
    out = ["| fault type | fault runs | in-sample: cause | in-sample: key+direction | held-out: cause | "
           "held-out: key+direction |", "|---|---|---|---|---|---|"]
    tot = [0, 0, 0, 0, 0]
    for t in sorted(ins):
        n, a, b = ins[t]
        _, c, d = held.get(t, (n, 0, 0))
        tot = [tot[0] + n, tot[1] + a, tot[2] + b, tot[3] + c, tot[4] + d]
        out.append(f"| {t} | {n} | {a} | {b} | {c} | {d} |")
    n = max(tot[0], 1)
    out.append(f"| **all ({len(ins)} types)** | {tot[0]} | {tot[1]} ({tot[1] / n:.0%}) | {tot[2]} ({tot[2] / n:.0%}) | "
               f"{tot[3]} ({tot[3] / n:.0%}) | {tot[4]} ({tot[4] / n:.0%}) |")
    return "\n".join(out)


def markdown_report(root: Path) -> str:
    """The corpus results as the markdown tables in docs/diagnostics.md."""
    s = score_corpus(root)
    out = ["### Per fault type: in-sample and leave-one-type-out", "", loto_report(root), "",
           "### In-sample detail", "",
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

    print(markdown_report(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent
                          / "tests" / "fixtures" / "corpus"))
