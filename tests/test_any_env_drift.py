"""bench/any_env_drift.py: which side by side each env is checked against, how its recorded command is read back,
what counts as moved, and the docs block. No training here (the runner is a stand-in)."""

from __future__ import annotations

from types import ModuleType

import pytest
from shared_util import load_bench


@pytest.fixture(scope="module")
def drift() -> ModuleType:
    return load_bench("any_env_drift")


def _results(drift: ModuleType, name: str, date: str, command: str, rows: dict[str, list[tuple[int, bool, int]]],
             threshold: float | None = None, budget: int = 20_000) -> object:
    r = drift.bench_results
    measured = r.start_measuring(["bench/bench_any_env.py"]).model_copy(update={"command": command, "date": date})
    presets = {env: r.PresetRows(arms={"ours": [r.Row(seed=s, solved=ok, env_steps=n, wall_s=1.0) for s, ok, n in seeds]},
                                 budget=budget, threshold=threshold, settings="default: gsolve's defaults")
               for env, seeds in rows.items()}
    return r.Results(name=name, description="", measured=measured, presets=presets)


def test_each_env_is_checked_against_its_newest_side_by_side_read_back_with_the_benchs_parser(drift: ModuleType) -> None:
    old = _results(drift, "any_env", "2026-11-27 12:36 UTC",
                   ".venv/bin/python bench/bench_any_env.py MiniGrid-Empty-5x5-v0 Taxi-v4 --env-package minigrid",
                   {"MiniGrid-Empty-5x5-v0": [(0, True, 10_240)], "Taxi-v4": [(0, True, 60_000)]})
    new = _results(drift, "any_env_8", "2026-12-02 03:35 UTC",
                   ".venv/bin/python bench/bench_any_env.py Taxi-v4 --threshold Taxi-v4=7.5 --seeds 0",
                   {"Taxi-v4": [(0, True, 50_000)]})
    files = {"any_env": old, "any_env_8": new,
             "any_env_drift": _results(drift, "any_env_drift", "2026-12-06 13:00 UTC", "x", {"Taxi-v4": []})}
    assert drift.side_by_sides(files) == {"MiniGrid-Empty-5x5-v0": "any_env", "Taxi-v4": "any_env_8"}
    assert drift.side_by_sides(files, before="2026-12-01 00:00 UTC")["Taxi-v4"] == "any_env"
    grid = drift.recorded("MiniGrid-Empty-5x5-v0", files)
    assert (grid.name, grid.packages, grid.thresholds) == ("any_env", ["minigrid"], [])
    taxi = drift.recorded("Taxi-v4", files)
    assert (taxi.name, taxi.packages, taxi.thresholds) == ("any_env_8", [], ["Taxi-v4=7.5"])
    with pytest.raises(SystemExit, match="CartPole-v1: no side by side of it .* measured there: MiniGrid-Empty-5x5-v0, Taxi-v4"):
        drift.recorded("CartPole-v1", files)


def test_a_seed_moved_when_its_env_steps_or_its_solve_differ(drift: ModuleType, capsys: pytest.CaptureFixture[str]) -> None:
    target = drift.bench_any_env.resolve_target("Acrobot-v1:a2c", [], {})
    rec = drift.Recorded("any_env_3", _results(
        drift, "any_env_3", "2026-11-27 14:44 UTC", ".venv/bin/python bench/bench_any_env.py Acrobot-v1:a2c",
        {"Acrobot-v1:a2c": [(0, True, 60_000), (1, True, 20_000), (2, False, 500_000)]},
        threshold=target.threshold, budget=target.budget), [], [])
    today = {0: (True, 60_000), 1: (True, 30_000), 2: (True, 400_000)}

    def run(t: object, seed: int, packages: object) -> object:
        solved, n = today[seed]
        return drift.bench_any_env.Outcome(seed, solved, n, 1.0, 2.0, None, "zoo")

    checks = drift.check_env("Acrobot-v1:a2c", rec, run)
    assert [c.same for c in checks] == [True, False, False]
    out = capsys.readouterr().out
    assert "seed 1: recorded solved at 20,000 env steps, now solved at 30,000 env steps  <- moved" in out
    assert "seed 2: recorded unsolved after 500,000 env steps, now solved at 400,000 env steps  <- moved" in out


def test_another_threshold_or_budget_today_is_refused_before_any_run(drift: ModuleType) -> None:
    rec = drift.Recorded("any_env_3", _results(
        drift, "any_env_3", "2026-11-27 14:44 UTC", ".venv/bin/python bench/bench_any_env.py Acrobot-v1:a2c",
        {"Acrobot-v1:a2c": [(0, True, 60_000)]}, threshold=-50.0, budget=123), [], [])

    def run(*_: object) -> object:
        raise AssertionError("no run for a task that changed")

    with pytest.raises(SystemExit, match=r"Acrobot-v1:a2c: today it resolves threshold -100 .* recorded -50.0 and 123"):
        drift.check_env("Acrobot-v1:a2c", rec, run)


def test_the_docs_block_says_which_seeds_still_solve_as_recorded(drift: ModuleType) -> None:
    render = load_bench("render_any_env")
    then = _results(drift, "any_env_3", "2026-11-27 14:44 UTC", "c",
                    {"Acrobot-v1:a2c": [(0, True, 60_000), (1, True, 20_000)], "InvertedPendulum-v5": [(0, True, 10_016)]})
    again = _results(drift, "any_env_9", "2026-12-07 00:00 UTC", "c", {"Acrobot-v1:a2c": [(0, True, 1)]})
    now = _results(drift, "any_env_drift", "2026-12-06 13:30 UTC", "c",
                   {"Acrobot-v1:a2c": [(0, True, 60_000), (1, True, 30_000)], "InvertedPendulum-v5": [(0, True, 10_016)]})
    # a side by side newer than the check (any_env_9) is not what the check compared with
    text = render.render_any_env_drift({"any_env_3": then, "any_env_9": again, "any_env_drift": now})
    assert "| `Acrobot-v1:a2c` | any_env_3, " in text and "| 0, 1 | 60,000, 20,000 | 60,000, 30,000 | **no**: 1 of 2 seeds |" in text
    assert "| `InvertedPendulum-v5` | any_env_3, " in text and "| 0 | 10,016 | 10,016 | yes |" in text
    assert "2 of 3 seeds solve at the env steps recorded. Measured again since this check (run it again): " \
        "`Acrobot-v1:a2c`." in " ".join(text.split())
    assert render.render_any_env_drift({"any_env_3": then}).startswith("No results file yet")
