"""What the diagnosis says agrees with the numbers it carries (issue 21, item 4).

Every sentence about a trend, a start value or where the references come from is computed from the
same numbers the Diagnosis holds; these tests hold that over every run of the corpus and of every
held-out set, and pin the cases the issue found contradicting themselves."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from test_diagnostics_rules import BASE_CONFIG, STEP, N, healthy_series, make_info, make_table

from gymnasium_solver.contract.run_folder import M, MetricsTable, parse_metrics_text, read_run_info
from gymnasium_solver.diagnostics import diagnose
from gymnasium_solver.diagnostics.models import Diagnosis, Severity
from gymnasium_solver.diagnostics.references import EMPTY
from gymnasium_solver.diagnostics.suggest import fmt

FIXTURES = Path(__file__).parent / "fixtures"
SETS = ("corpus", *sorted(p.name for p in FIXTURES.glob("heldout*")))
CASES = [p for s in SETS for p in sorted((FIXTURES / s).iterdir()) if (p / "labels.json").is_file()]


def _texts(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _texts(v)
    elif isinstance(value, list):
        for v in value:
            yield from _texts(v)


def _first(table: MetricsTable, metric: str) -> float | None:
    if metric not in table.columns:
        return None
    return next((v for v in table.column(metric) if v is not None and math.isfinite(v)), None)


def check_consistency(d: Diagnosis, table: MetricsTable) -> list[str]:
    """Each sentence that states a trend, a start value or a source, checked against the numbers."""
    bad: list[str] = []
    trends = {"eval": d.eval_trend, "evaluation": d.eval_trend, "training": d.train_trend}
    texts = list(_texts(d.model_dump(mode="json", exclude={"eval_trend", "train_trend"})))
    for text in texts:
        # "the evaluation return was still improving", "eval trend flat", "(evaluation trend flat)"
        for who, direction in re.findall(r"\b(eval|evaluation|training) (?:return was still|trend) "
                                         r"(improving|flat|declining|unknown)", text):
            if trends[who].direction != direction:
                bad.append(f"{who} said {direction}, {trends[who].metric} is {trends[who].direction}: {text!r}")
        # An unqualified "the return was still improving" is the evaluation's (the truth when there is one).
        if "the return was still improving" in text and d.eval_trend.direction != "improving":
            bad.append(f"evaluation said improving, {d.eval_trend.metric} is {d.eval_trend.direction}: {text!r}")
        # Trend evidence quotes the slope of the trend it names.
        for direction, slope in re.findall(r"^(improving|flat|declining): slope (\S+) per 100k steps", text):
            match = [t for t in (d.eval_trend, d.train_trend)
                     if t.direction == direction and fmt(t.slope_per_100k_steps) == slope]
            if not match:
                bad.append(f"no {direction} trend with slope {slope}: {text!r}")
        # Start values of the action std are the logged first value (with gSDE it is not exp(log_std_init)).
        first = _first(table, M.ACTION_STD)
        for quoted in re.findall(r"(?:initial action std|action std) (\S+?)(?: \(logged\)| at the start| = )", text):
            if first is not None and quoted != fmt(first):
                bad.append(f"start value {quoted}, logged first {fmt(first)}: {text!r}")
    if d.returns.solved and d.references.solved_source.startswith("none"):
        bad.append(f"solved, but solved_source {d.references.solved_source!r}")
    plateau = next((f for f in d.findings if f.id == "return_plateau"), None)
    if plateau is not None:
        trend = d.eval_trend if d.eval_trend.direction != "unknown" else d.train_trend
        if trend.direction != "flat":
            bad.append(f"plateau beside a {trend.direction} {trend.metric}")
    return bad


@pytest.mark.parametrize("folder", CASES, ids=[f"{p.parent.name}/{p.name}" for p in CASES])
def test_every_fixture_diagnosis_agrees_with_its_numbers(folder: Path) -> None:
    info = read_run_info(folder)
    config = yaml.safe_load((folder / "config.yaml").read_text(encoding="utf-8"))
    table = parse_metrics_text((folder / "metrics.csv").read_text(encoding="utf-8"))
    d = diagnose(info, config, table)
    assert check_consistency(d, table) == []


def test_the_checks_catch_the_contradictions_the_issue_found() -> None:
    """The checker itself: each contradiction from the issue, planted in a real diagnosis, is reported."""
    folder = FIXTURES / "corpus" / "pendulum_action_noise_high_s0"
    info = read_run_info(folder)
    config = yaml.safe_load((folder / "config.yaml").read_text(encoding="utf-8"))
    table = parse_metrics_text((folder / "metrics.csv").read_text(encoding="utf-8"))
    d = diagnose(info, config, table)
    assert check_consistency(d, table) == []
    f = d.findings[0]
    lied = d.model_copy(update={"findings": [f.model_copy(update={
        "title": f"The budget ran out while the evaluation return was still improving; "
                 f"initial action std 148 (logged) {f.title}"}), *d.findings[1:]]})
    flat = d.eval_trend.direction != "improving"
    problems = check_consistency(lied, table)
    assert any("start value 148" in p for p in problems)
    assert any("evaluation said improving" in p for p in problems) == flat


def test_a_solved_run_with_no_other_reference_names_itself() -> None:
    cfg = dict(BASE_CONFIG)
    table = make_table(healthy_series(), cfg["algo"])
    d = diagnose(make_info(table, cfg), cfg, table, now=2e9, references=EMPTY)
    assert d.returns.solved
    assert d.references.solved_source.startswith("this run itself (solved")
    assert not d.references.solved_source.startswith("none")


def _dqn_past_its_threshold() -> tuple[dict[str, Any], MetricsTable]:
    """The issue's CartPole-v1:dqn run continued past its threshold (reward_threshold .inf): evaluation
    500 at the solve, then 9.3; mean Q 143 -> 3954."""
    t = np.linspace(0, 1, N)
    ret = np.where(t < 0.4, 20 + 480 * t / 0.4, np.where(t < 0.6, 500.0, 9.3))
    q = np.where(t < 0.4, 5 + 138 * t / 0.4, np.where(t < 0.6, 143.0, np.geomspace(143, 3954, N)))
    s = {**healthy_series(), M.EP_RETURN_MEAN: ret, M.EVAL_RETURN_MEAN: ret, M.Q_MEAN: q, M.TD_LOSS: np.ones(N),
         M.EXPLORATION_RATE: np.maximum(1 - t / 0.16 * 0.96, 0.04)}
    cfg = {**BASE_CONFIG, "variant": "dqn", "algo": "dqn", "reward_threshold": math.inf, "buffer_size": 100_000,
           "learning_starts": 1000, "train_freq": 256, "gradient_steps": 128, "target_update_interval": 10,
           "exploration_fraction": 0.16, "exploration_final_eps": 0.04, "max_grad_norm": 1.33,
           "learning_rate": 0.0023, "n_steps": 1}
    return cfg, make_table(s, "dqn")


def test_a_run_that_solved_then_diverged_is_not_a_plateau() -> None:
    cfg, table = _dqn_past_its_threshold()
    info = make_info(table, cfg, reward_threshold=math.inf, solved=False, config_id="CartPole-v1:dqn", variant="dqn")
    d = diagnose(info, cfg, table, now=2e9)
    loud = [f for f in d.findings if f.severity != Severity.INFO]
    assert loud[0].id == "diverged_after_solving", [f.id for f in loud]
    ranks = [f.id for f in d.findings]
    assert "return_plateau" not in ranks or ranks.index("diverged_after_solving") < ranks.index("return_plateau")
    f = loud[0]
    evidence = " ".join(e.observed for e in f.evidence)
    # Held to the registered threshold (475): a run with reward_threshold .inf never counts as solved.
    assert ">= 475 at" in evidence and "best 500" in evidence and "median 9.3" in evidence
    assert re.search(r"mean Q 1\d\d when it solved, 3.95e\+03 at the end", evidence), evidence
    assert "--checkpoint best" in f.cause and d.next_step is not None and "--checkpoint best" in d.next_step
    changes = {c.key: c for c in f.suggested_changes}
    assert changes["reward_threshold"].suggested == 475.0  # stop when solved
    assert changes["learning_rate"].direction == "decrease"  # DQN's stabiliser
    # It had budget enough (it solved): no budget raise padded on, and no "still learning" from the runaway Q.
    assert "max_env_steps" not in changes and "budget_ends_while_learning" not in ranks
    assert check_consistency(d, table) == []


def test_an_unsolved_run_whose_budget_ended_near_the_threshold_does_not_claim_improvement() -> None:
    """budget_exhausted_improving also fires when the best evaluation is within 10% of the threshold with
    both trends flat: its title then says so, instead of 'still improving'."""
    t = np.linspace(0, 1, N)
    ret = np.minimum(20 + 480 * t * 2, 440.0)
    s = {**healthy_series(), M.EP_RETURN_MEAN: ret, M.EVAL_RETURN_MEAN: ret}
    cfg = dict(BASE_CONFIG)
    table = make_table(s, cfg["algo"])
    info = make_info(table, cfg, progress={"env_steps": N * STEP, "iteration": N})
    d = diagnose(info, cfg, table, now=2e9)
    f = next(f for f in d.findings if f.id == "budget_exhausted_improving")
    assert d.eval_trend.direction == "flat" and "still improving" not in f.title, f.title
    assert "within 10% of the threshold" in f.title and "still learning" not in f.cause
    assert check_consistency(d, table) == []


def test_check_reads_every_set() -> None:
    assert {"corpus", "heldout", "heldout9"} <= set(SETS) and len(CASES) > 100
    assert all(json.loads((p / "labels.json").read_text()) for p in CASES[:1])


def test_a_retry_whose_top_change_undoes_its_parents_advice_says_so() -> None:
    """A new user followed the diagnosis of an Acrobot-v1 DQN run (target_update_interval=600, a longer budget),
    the retry failed too, and its diagnosis said to set both back: the note names the parent and `gsolve fix`."""
    from gymnasium_solver.diagnostics.diagnose import _undoes_parent
    from gymnasium_solver.diagnostics.models import Finding
    from gymnasium_solver.diagnostics.suggest import change

    plain = make_info(make_table(healthy_series()), BASE_CONFIG)
    info = plain.model_copy(update={"parent_run_id": "20261205-000000-abc1234",
                                          "applied_changes": {"target_update_interval": 600, "max_env_steps": 121000}})
    back = Finding(id="preset_deviation", severity=Severity.WARNING, score=0.5, title="t", evidence=[], cause="c",
                   suggested_changes=[change("target_update_interval", 600, 10000, "increase", "the defaults' value")])
    notes = _undoes_parent(info, [back])
    assert len(notes) == 1 and "retry of 20261205-000000-abc1234 with target_update_interval" in notes[0]
    assert "gsolve fix 20261205-000000-abc1234" in notes[0]
    other = back.model_copy(update={"suggested_changes": [change("learning_rate", 1e-3, 1e-4, "decrease", "w")]})
    assert _undoes_parent(info, [other]) == [] and _undoes_parent(plain, [back]) == []


def test_a_flat_trend_beside_a_large_slope_says_its_interval_spans_zero() -> None:
    """A new user read 'Trend eval/return_mean: flat (slope 3.26e+03/100k steps, ...)' on the demo's solved run as a
    contradiction: three evaluations cannot tell that slope from 0, and the line now says so."""
    from gymnasium_solver.cli.diagnose import render_report
    from gymnasium_solver.diagnostics.models import Trend

    table = make_table(healthy_series())
    d = diagnose(make_info(table, BASE_CONFIG), BASE_CONFIG, table, references=EMPTY)
    wide = Trend(metric=M.EVAL_RETURN_MEAN, direction="flat", slope_per_100k_steps=3260.0, slope_low=-3830.0,
                 slope_high=8730.0, env_steps_from=4096, env_steps_to=12288)
    text = render_report(d.model_copy(update={"eval_trend": wide}))
    assert "flat (slope" in text and "), because the interval spans 0 (too few or too noisy points to tell a slope)" in text
    assert "flat because" not in text  # the line says "flat" once
    sure = wide.model_copy(update={"direction": "improving", "slope_low": 100.0})
    assert "interval spans 0" not in render_report(d.model_copy(update={"eval_trend": sure}))
