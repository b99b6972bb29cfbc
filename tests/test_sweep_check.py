"""`gsolve sweep-check`: a sweep's best trials and the preset re-trained on held-out seeds.

The study is written by hand (two solved trials, one pruned), so only the check's own runs train:
tiny CartPole-v1:ppo runs that solve a low threshold in a few thousand env steps.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from gymnasium_solver.cli import app as cli
from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.run_store import RunStore
from gymnasium_solver.sweeps import check, launch, report
from gymnasium_solver.sweeps import study as st
from gymnasium_solver.sweeps.record import read_record
from gymnasium_solver.sweeps.space import parse_space

TINY = {"n_envs": 4, "eval_freq": 512, "eval_episodes": 2, "batch_size": 64, "max_env_steps": 4096,
        "reward_threshold": 30}
SPACE = {"n_epochs": {"type": "int", "low": 2, "high": 8}}


def _sweep(runs: Path, trials: list[tuple[int, str, float]]) -> str:
    """A sweep whose study holds ``trials`` as (n_epochs, outcome, value), as its coordinator records them."""
    optuna = st.load_optuna()
    space = parse_space(SPACE, "space")
    plan = launch.prepare_sweep(runs, "CartPole-v1:ppo", space, n_trials=len(trials), fixed_overrides=TINY)
    study = st.open_study(plan.record, create=False)
    dist = optuna.distributions.IntDistribution(2, 8)
    for n_epochs, outcome, value in trials:
        result = st.TrialResult(run_id=None, outcome=outcome, env_steps=int(value), solved_at_env_steps=int(value))  # type: ignore[arg-type]
        state = optuna.trial.TrialState.COMPLETE if outcome == "solved" else optuna.trial.TrialState.PRUNED
        study.add_trial(optuna.trial.create_trial(params={"n_epochs": n_epochs}, distributions={"n_epochs": dist},
                                                  value=value if outcome == "solved" else None, state=state,
                                                  user_attrs={"result": result.model_dump(mode="json")}))
    return plan.record.sweep_id


def test_the_best_trials_and_the_preset_train_on_held_out_seeds(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    runs = tmp_path / "runs"
    sweep_id = _sweep(runs, [(3, "solved", 2048), (8, "pruned", 0), (6, "solved", 1024)])
    code = cli.main(["sweep-check", sweep_id[:18], "--top", "1", "--seeds", "1-2", "--parallel", "2",
                     "--runs-dir", str(runs)])
    out, err = capsys.readouterr()
    assert "re-trained on held-out seeds 1, 2; the sweep ranked its trials on seed 0" in out
    lines = {ln.split()[0] + (" " + ln.split()[1] if ln.startswith("trial") else ""): ln for ln in out.splitlines()}
    assert "trial #2" in lines and "preset" in lines and "trial #0" not in lines  # top 1: the 1,024-step trial
    assert err.count("seed ") == 4  # one progress line per run: 2 arms x 2 seeds

    result = check.read_check(runs, sweep_id)
    assert result is not None and result.held_out and result.seeds == [1, 2]
    trial, preset = result.arms
    assert trial.trial_number == 2 and trial.overrides["n_epochs"] == 6 and preset.name == "preset"
    for arm in result.arms:
        assert [r.seed for r in arm.runs] == [1, 2] and arm.solved == sum(r.solved for r in arm.runs)
        for r in arm.runs:
            info = rf.read_run_info(runs / r.run_id)  # every re-training is a normal run folder
            assert info.overrides["seed"] == r.seed and info.applied_changes == {"seed": r.seed}
            assert info.overrides["max_env_steps"] == TINY["max_env_steps"]  # the sweep's fixed overrides
            assert info.overrides.get("n_epochs") == (6 if arm is trial else None)
            if r.solved:
                assert info.solved_at is not None and r.env_steps == info.solved_at.env_steps
    # Which arm wins depends on how the real runs train, so the expectations follow from the arms: more
    # seeds solved first, then the lower median env steps; exit 0 only when an arm solved both seeds.
    ranked = sorted(result.arms, key=lambda a: (-a.solved, a.median_env_steps if a.median_env_steps is not None
                                                 else float("inf")))
    assert result.best == ranked[0].name and result.verdict in out
    assert code == (0 if any(a.solved == 2 for a in result.arms) else 3), out + err
    # The legend only when a run did not solve; the preset arm's label names the overrides it carries.
    unsolved = any(not r.solved for arm in result.arms for r in arm.runs)
    assert ("(* = not solved" in out) == unsolved
    assert "(preset = CartPole-v1:ppo with the sweep's fixed overrides: n_envs=4 " in out
    # sweep-status (and the MCP get_sweep, the same summary) shows the latest check.
    summary = report.summarize(RunStore(runs), sweep_id)
    assert summary.check == result
    assert "Held-out check (gsolve sweep-check):" in report.render(summary)


def test_a_sweep_without_a_solved_trial_has_nothing_to_check(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    runs = tmp_path / "runs"
    sweep_id = _sweep(runs, [(3, "pruned", 0)])
    assert cli.main(["sweep-check", sweep_id, "--runs-dir", str(runs)]) == 2
    err = capsys.readouterr().err
    assert "has no solved trial to check yet" in err and "Traceback" not in err
    assert not RunStore(runs).run_ids()  # nothing trained


@pytest.mark.anyio
async def test_check_sweep_refusals_name_what_an_mcp_client_can_pass(tmp_path: Path) -> None:
    """check_sweep answered '--seeds must be distinct ...' (a flag the tool has not: its argument is seeds) and
    'see gsolve sweep-status ID' (a command, where the client has get_sweep)."""
    from mcp import Client

    from mcp_server.server import create_server

    runs = tmp_path / "runs"
    unsolved = _sweep(runs, [(3, "pruned", 0)])
    async with Client(create_server(runs)) as client:
        res = await client.call_tool("check_sweep", {"sweep_id": unsolved})
        assert res.is_error and res.content[0].text.endswith(  # type: ignore[union-attr]
            f"sweep {unsolved} has no solved trial to check yet; see its trials with gsolve sweep-status {unsolved} "
            "(MCP get_sweep)")
    solved = _sweep(tmp_path / "runs2", [(n, "solved", 1000 + n) for n in range(2, 4)])
    async with Client(create_server(tmp_path / "runs2")) as client:
        res = await client.call_tool("check_sweep", {"sweep_id": solved, "seeds": [1, 1]})
        assert res.is_error and res.content[0].text.endswith(  # type: ignore[union-attr]
            "seeds (--seeds) must be distinct non-negative integers, got [1, 1]")


@pytest.mark.parametrize(("args", "expected"), [
    (["--top", "0"], "--top must be between 1 and 10, got 0"),
    (["--seeds", "one"], "--seeds takes integers or ranges like 1-5, got 'one'"),
    (["--seeds", "5-2"], "--seeds takes integers or ranges like 1-5, got '5-2'"),
    (["--seeds", "1", "1"], "seeds (--seeds) must be distinct"),
    (["--seeds", "0-40", "--top", "10"], "at most 200"),
    (["--parallel", "0"], "--parallel must be at least 1"),
])
def test_bad_arguments_are_one_sentence_and_train_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                         args: list[str], expected: str) -> None:
    runs = tmp_path / "runs"
    sweep_id = _sweep(runs, [(n, "solved", 1000 + n) for n in range(2, 8)])
    assert cli.main(["sweep-check", sweep_id, *args, "--runs-dir", str(runs)]) == 2
    err = capsys.readouterr().err
    assert expected in err and "Traceback" not in err
    assert not RunStore(runs).run_ids()


def test_an_unknown_sweep_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["sweep-check", "sweep-20260101-000000-abcd", "--runs-dir", str(tmp_path)]) == 2
    assert "no sweep 'sweep-20260101-000000-abcd'" in capsys.readouterr().err


def test_the_check_prefers_more_seeds_solved_then_the_lower_median() -> None:
    def arm(name: str, solved: int, steps: float) -> check.ArmResult:
        return check.ArmResult(name=name, trial_number=None, sweep_value=None, overrides={}, command="",
                               solved=solved, median_env_steps=steps, median_seconds=steps / 1000)

    arms = [arm("trial #1", 4, 2000), arm("trial #2", 5, 9000), arm("preset", 5, 8000)]
    assert min(arms, key=lambda a: check._score(a, "steps")).name == "preset"
    assert min(arms[:2], key=lambda a: check._score(a, "steps")).name == "trial #2"  # 5/5 beats 4/5 at any median
    # The objective picks the median: in env steps trial #3 is faster, in seconds trial #4; no median is last.
    fast_steps = check.ArmResult(name="trial #3", trial_number=None, sweep_value=None, overrides={}, command="",
                                 solved=5, median_env_steps=1000, median_seconds=90.0)
    fast_seconds = check.ArmResult(name="trial #4", trial_number=None, sweep_value=None, overrides={}, command="",
                                   solved=5, median_env_steps=5000, median_seconds=10.0)
    unknown = check.ArmResult(name="trial #5", trial_number=None, sweep_value=None, overrides={}, command="", solved=5)
    assert [check._score(a, "steps") for a in (fast_steps, fast_seconds, unknown)] == [
        (-5, 1000.0), (-5, 5000.0), (-5, float("inf"))]
    assert [check._score(a, "seconds") for a in (fast_steps, fast_seconds, unknown)] == [
        (-5, 90.0), (-5, 10.0), (-5, float("inf"))]


def test_the_verdict_says_whether_the_best_arms_lead_is_more_than_the_seeds_luck() -> None:
    """The best arm against the preset seed by seed (a one-sided Wilcoxon signed-rank test): lower on all eight
    seeds is a lead (p = 1/2^8); lower on five of eight by small amounts and higher on three by more may be luck."""
    def arm(name: str, steps: list[int]) -> check.ArmResult:
        runs = [check.SeedRun(seed=i, run_id=f"{name}{i}", solved=True, env_steps=v, seconds=v / 1000,
                              outcome="solved") for i, v in enumerate(steps)]
        return check.ArmResult(name=name, trial_number=None, sweep_value=None, overrides={}, command="c",
                               solved=len(runs), runs=runs, median_env_steps=float(sorted(steps)[len(steps) // 2]))

    preset = arm("preset", [9000, 9100, 9200, 9300, 9400, 9500, 9600, 9700])
    clear = arm("trial #1", [8000, 8100, 8200, 8300, 8400, 8500, 8600, 8700])
    p = check._vs_preset([clear, preset], clear, "steps")
    assert p == pytest.approx(1 / 256)
    assert "beyond these seeds' luck (one-sided Wilcoxon signed-rank p = 0.0039)" in check._verdict(
        [clear, preset], clear, 8, "steps", p)
    lucky = arm("trial #2", [8900, 9000, 9100, 9200, 9300, 12000, 12100, 12200])
    p = check._vs_preset([lucky, preset], lucky, "steps")
    assert p is not None and p > check.LUCK_ALPHA
    assert "may be these seeds' luck" in check._verdict([lucky, preset], lucky, 8, "steps", p)
    assert check._vs_preset([clear, preset], preset, "steps") is None  # the preset is best: nothing to test


def test_the_table_explains_a_star_only_when_a_run_did_not_solve() -> None:
    def arm(name: str, solved: list[bool], overrides: dict[str, object]) -> check.ArmResult:
        runs = [check.SeedRun(seed=i + 1, run_id=f"r{name}{i}", solved=s, env_steps=1000, seconds=1.0,
                              outcome="solved" if s else "not_solved")
                for i, s in enumerate(solved)]
        return check.ArmResult(name=name, trial_number=None, sweep_value=None, overrides=overrides, command="",
                               solved=sum(solved), runs=runs)

    def table(solved: list[bool], overrides: dict[str, object]) -> str:
        return check.render(check.SweepCheck(sweep_id="s", config_id="CartPole-v1:ppo", objective="steps",
                                             sweep_seed=0, seeds=[1, 2], held_out=True, best="preset", verdict="v",
                                             arms=[arm("trial #1", [True, True], {"n_epochs": 3}),
                                                   arm("preset", solved, overrides)]))

    assert "not solved" not in table([True, True], {}) and "fixed overrides" not in table([True, True], {})
    out = table([True, False], {"max_env_steps": 30000})
    assert "1,000*" in out and "(* = not solved" in out
    assert "(preset = CartPole-v1:ppo with the sweep's fixed overrides: max_env_steps=30000)" in out


def test_a_sweep_over_ten_seeds_is_checked_after_all_ten(tmp_path: Path) -> None:
    """A sweep whose trials trained seeds 0-9: the default check seeds are 10-14, not 1-5 (its own), and
    the table says which seeds ranked the trials; a wall sweep's seconds keep two decimals."""
    runs = tmp_path / "runs"
    plan = launch.prepare_sweep(runs, "CartPole-v1:ppo", parse_space(SPACE, "space"), n_trials=1,
                                fixed_overrides=TINY, seeds_per_trial=10, objective="wall")
    study = st.open_study(plan.record, create=False)
    dist = st.load_optuna().distributions.IntDistribution(2, 8)
    result = st.TrialResult(run_id=None, outcome="solved", env_steps=4096, solved_at_env_steps=4096)
    study.add_trial(st.load_optuna().trial.create_trial(params={"n_epochs": 3}, distributions={"n_epochs": dist},
                                                        value=1.234, user_attrs={"result": result.model_dump()}))
    _study, arms, seeds, own = check.plan_check(plan.record)
    assert (own, seeds) == (0, [10, 11, 12, 13, 14]) and [a.name for a in arms] == ["trial #0", "preset"]

    runs_of = [check.SeedRun(seed=10, run_id="r", solved=True, env_steps=4096, seconds=0.437, outcome="solved")]
    arm = check.ArmResult(name="trial #0", trial_number=0, sweep_value=1.234, overrides={}, command="", solved=1,
                          runs=runs_of, median_env_steps=4096.0, median_seconds=0.44)
    text = check.render(check.SweepCheck(sweep_id="s", config_id="CartPole-v1:ppo", objective="wall", sweep_seed=0,
                                         sweep_seeds_per_trial=10, seeds=[10], held_out=True, best="trial #0",
                                         verdict="v", arms=[arm]))
    assert "the sweep ranked its trials on seeds 0-9." in text
    assert "1.23s" in text and " 0.44 " in text


def test_the_sweeps_best_trial_is_its_lowest_value_whatever_the_order(tmp_path: Path) -> None:
    """Three solved trials in no particular order, one pruned: the best is the fewest env steps to solve
    (the objective is minimised), never the first, the last or the worst; what it reports is that trial's."""
    runs = tmp_path / "runs"
    optuna = st.load_optuna()
    space = parse_space({**SPACE, "learning_rate.start": {"type": "log_uniform", "low": 1e-4, "high": 1e-2}}, "space")
    plan = launch.prepare_sweep(runs, "CartPole-v1:ppo", space, n_trials=4, fixed_overrides=TINY)
    study = st.open_study(plan.record, create=False)
    dists = {"n_epochs": optuna.distributions.IntDistribution(2, 8),
             "learning_rate.start": optuna.distributions.FloatDistribution(1e-4, 1e-2, log=True)}
    for n, (n_epochs, lr, state, value) in enumerate([(3, 0.001, "COMPLETE", 2048), (8, 0.002, "PRUNED", None),
                                                      (6, 0.003, "COMPLETE", 1024), (5, 0.004, "COMPLETE", 4096)]):
        result = st.TrialResult(run_id=f"run-{n}", outcome="solved" if value else "pruned", env_steps=value or 512,
                                solved_at_env_steps=value, seconds=n + 0.5, best_eval=30.0 + n)
        study.add_trial(optuna.trial.create_trial(
            params={"n_epochs": n_epochs, "learning_rate.start": lr}, distributions=dists, value=value,
            state=getattr(optuna.trial.TrialState, state), user_attrs={"result": result.model_dump(mode="json")}))
    record = read_record(runs, plan.record.sweep_id)
    best = report.best_trial(record, st.open_study(record, create=False))
    assert best is not None
    assert (best.number, best.value, best.solved, best.params) == (2, 1024.0, True, {"n_epochs": 6,
                                                                                     "learning_rate.start": 0.003})
    assert (best.run_id, best.solved_at_env_steps, best.seconds, best.best_eval) == ("run-2", 1024, 2.5, 32.0)
    assert best.command == ("gsolve train CartPole-v1:ppo --set n_envs=4 --set eval_freq=512 --set eval_episodes=2 "
                            "--set batch_size=64 --set max_env_steps=4096 --set reward_threshold=30 --set n_epochs=6 "
                            "--set 'learning_rate={start: 0.003}'")  # the sweep's fixed overrides, then the trial's
    # A preset variant with the whole resolved values (the schedule's end from the preset), in the order set.
    variant = report.variant_name(record)
    assert best.preset_snippet.splitlines() == [
        f"{variant}:", "  inherits: ppo", "  n_envs: 4", "  eval_freq: 512", "  eval_episodes: 2", "  batch_size: 64",
        "  max_env_steps: 4096", "  reward_threshold: 30.0", "  n_epochs: 6", "  learning_rate: {start: 0.003, end: 0.0}"]
    assert report.summarize(RunStore(runs), record.sweep_id).best == best


def test_a_sweep_with_no_completed_trial_has_no_best(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    sweep_id = _sweep(runs, [(3, "pruned", 0)])
    record = read_record(runs, sweep_id)
    assert report.best_trial(record, st.open_study(record, create=False)) is None


def test_a_solved_trial_without_one_env_step_count_renders() -> None:
    """A multi-seed sweep stopped mid-trial leaves a trial 'solved' with no single solve step count: the summary
    says 'solved' without one (a TypeError traceback before)."""
    sweep = SimpleNamespace(sweep_id="s", config_id="CartPole-v1:ppo", objective="steps", n_trials=2, status="stopped",
                            seeds_per_trial=2, seed_statistic="p90")
    row = report.TrialRow(number=0, state="COMPLETE", outcome="solved", params={"n_epochs": 9}, seconds=None)
    best = report.BestTrial(number=0, solved=True, value=8602.0, params={}, run_id=None, solved_at_env_steps=None,
                            seconds=3.5, best_eval=500.0, command="gsolve train CartPole-v1:ppo", preset_snippet="x: 1\n")
    summary = report.SweepSummary.model_construct(sweep=sweep, finished=1, counts={"solved": 1}, best=best,
                                                  importances=None, importances_note=None, trials=[row], check=None)
    text = report.render(summary)
    assert "#0   n_epochs=9  -> solved\n" in text + "\n" and "Best: trial #0 p90 8,602 env steps over 2 seeds [run None]" in text


def test_a_check_written_before_it_recorded_the_sweeps_seeds_is_read_with_them(tmp_path: Path) -> None:
    """A check file of an older gsolve (no sweep_seeds_per_trial) of a sweep over 10 seeds took seeds 1-5 by
    default and called them held out: read with the sweep's 10 seeds, it says they were the sweep's own."""
    old = {"sweep_id": "s", "config_id": "CartPole-v1:ppo", "objective": "steps", "sweep_seed": 0,
           "seeds": [1, 2, 3, 4, 5], "held_out": True, "arms": [], "best": None, "verdict": "v"}
    path = check.check_path(tmp_path, "s")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(old), encoding="utf-8")
    one = check.read_check(tmp_path, "s")
    assert one is not None and one.held_out and one.sweep_seeds_per_trial == 1
    ten = check.read_check(tmp_path, "s", seeds_per_trial=10)
    assert ten is not None and not ten.held_out and ten.sweep_seeds_per_trial == 10
    assert "re-trained on seeds (including the sweep's own, so not held out) 1, 2, 3, 4, 5; the sweep ranked its " \
           "trials on seeds 0-9." in check.render(ten)


def test_the_sweep_check_hint_names_the_users_env_class(tmp_path: Path) -> None:
    """`gsolve sweep Corridor-v0:ppo --env-class tests.envs.my_env:Corridor` printed `gsolve sweep-check ID` without
    the --env-class its trials need: copied, that command failed."""
    from gymnasium_solver.config import env_modules

    corridor = "tests.envs.my_env:Corridor"
    env_modules.grant_from_flags([], [corridor])  # what the command's --env-class does
    env_modules.bind_class("Corridor-v0", corridor)
    optuna = st.load_optuna()
    plan = launch.prepare_sweep(tmp_path, "Corridor-v0:ppo", parse_space(SPACE, "space"), n_trials=1,
                                fixed_overrides={"reward_threshold": 0.8})
    study = st.open_study(plan.record, create=False)
    result = st.TrialResult(run_id=None, outcome="solved", env_steps=2048, solved_at_env_steps=2048)
    study.add_trial(optuna.trial.create_trial(params={"n_epochs": 3}, value=2048.0,
                                              distributions={"n_epochs": optuna.distributions.IntDistribution(2, 8)},
                                              user_attrs={"result": result.model_dump(mode="json")}))
    text = report.render(report.summarize(RunStore(tmp_path), plan.record.sweep_id))
    hint = next(ln for ln in text.splitlines() if "gsolve sweep-check" in ln)
    assert f"gsolve sweep-check {plan.record.sweep_id} --env-class {corridor} re-trains" in hint, hint


def test_a_sweep_tuned_for_its_slow_seeds_is_checked_for_them() -> None:
    """A sweep that ranked each trial by its slowest seed (--seed-statistic max) ranks the check's arms the same
    way: a trial with the lower median but a slower slowest seed loses to the preset (CartPole-v1:dqn's sweep for its
    slowest seed, checked on seeds 4000-4019, had a trial like this), and the table states each arm's slowest seed."""
    def arm(name: str, steps: list[int]) -> check.ArmResult:
        runs = [check.SeedRun(seed=i, run_id=f"{name}{i}", solved=True, env_steps=v, seconds=v / 1000,
                              outcome="solved") for i, v in enumerate(steps)]
        a = check.ArmResult(name=name, trial_number=None, sweep_value=None, overrides={}, command="c",
                            solved=len(runs), runs=runs, median_env_steps=float(sorted(steps)[len(steps) // 2]))
        a.ranked_value = float(max(steps))
        return a

    trial = arm("trial #23", [4096, 6144, 8192, 8192, 36864])
    preset = arm("preset", [8192, 8192, 10240, 12288, 28672])
    assert min([trial, preset], key=lambda a: check._score(a, "steps")).name == "trial #23"  # by the median
    assert min([trial, preset], key=lambda a: check._score(a, "steps", "max")).name == "preset"
    record = SimpleNamespace(seed_statistic="max", seeds_per_trial=16)
    assert check.ranking_statistic(record) == "max"  # type: ignore[arg-type]
    assert check.ranking_statistic(SimpleNamespace(seed_statistic="p90", seeds_per_trial=1)) == "median"  # type: ignore[arg-type]
    verdict = check._verdict([trial, preset], preset, 5, "steps", None, "max")
    assert "keep the preset" in verdict and "(5/5 solved, max 28,672 env steps, median 10,240 env steps)" in verdict
    assert check._slowest(trial) == "36,864 (4.5x)"
