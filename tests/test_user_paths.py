"""What a new user meets: copied run folders, plot labels across configs, and other first-contact paths."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from gymnasium_solver import run_store as rs
from gymnasium_solver.cli import app as cli
from gymnasium_solver.contract import run_folder as rf


def _run(runs: Path, minute: int, env: str = "CartPole-v1", algo: str = "ppo") -> str:
    run_id = rf.new_run_id(datetime(2026, 1, 1, 0, minute, tzinfo=UTC))
    info = rf.RunInfo(run_id=run_id, config_id=f"{env}:{algo}", env_id=env, variant=algo, algo=algo, seed=minute,
                      created_at=rf.utc_now_iso(), updated_at=rf.utc_now_iso(), max_env_steps=100_000,
                      status=rf.RunStatus.COMPLETED, reward_threshold=475.0)
    rf.write_run_info(runs / run_id, info)
    return run_id


def test_a_copied_run_folder_is_listed_and_shown_by_its_folder_name(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """The folder name is the id every command takes; run.json of a copy still holds the original's id."""
    runs = tmp_path / "runs"
    original = _run(runs, 1)
    shutil.copytree(runs / original, runs / "20260101-000500-copy")
    store = rs.RunStore(runs)
    listed = rs.list_runs(store, limit=1)
    assert [s.run_id for s in listed.runs] == ["20260101-000500-copy"]
    assert listed.next_cursor == "20260101-000500-copy"
    assert [s.run_id for s in rs.list_runs(store, cursor=listed.next_cursor).runs] == [original]
    assert cli.main(["show", "20260101-000500", "--runs-dir", str(runs)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("run 20260101-000500-copy") and original not in out, out


def test_group_labels_name_only_what_sets_a_group_apart_from_its_own_config(tmp_path: Path) -> None:
    """Groups of other environments or algorithms differ in most keys: their config id says so, and a label
    that listed every key made the plot's legend wider than the figure."""
    import yaml

    runs = tmp_path / "runs"
    configs = [("CartPole-v1", "ppo", {"max_env_steps": 20000, "n_steps": 64}),
               ("CartPole-v1", "ppo", {"max_env_steps": 200000, "n_steps": 64}),
               ("MountainCar-v0", "dqn", {"max_env_steps": 3000, "train_freq": 16, "buffer_size": 10000})]
    dirs = []
    for minute, (env, algo, keys) in enumerate(configs):
        run_id = _run(runs, minute, env, algo)
        cfg = {"env_id": env, "variant": algo, "algo": algo, "seed": 0, **keys}
        (runs / run_id / rf.CONFIG_YAML).write_text(yaml.safe_dump(cfg), encoding="utf-8")
        dirs.append(runs / run_id)
    labels = [g.label for g in rs.group_runs(rs.RunStore(runs), dirs)]
    assert labels == ["CartPole-v1:ppo max_env_steps=20000", "CartPole-v1:ppo max_env_steps=200000",
                      "MountainCar-v0:dqn"]


@pytest.mark.anyio
async def test_mcp_arguments_of_the_wrong_type_or_value_get_one_sentence(tmp_path: Path) -> None:
    """The SDK reported pydantic's multi-line report ("1 validation error for get_run_infoArguments ... For further
    information visit https://errors.pydantic.dev/..."); a model reads one sentence per argument instead."""
    from mcp import Client

    from mcp_server.server import create_server

    async def error(name: str, args: dict[str, object]) -> str:
        res = await client.call_tool(name, args)
        assert res.is_error
        return " ".join(getattr(c, "text", "") for c in res.content)

    async with Client(create_server(tmp_path)) as client:
        text = await error("get_run_info", {"run_id": "@last", "view": "foo"})
        assert text == ("get_run_info: argument 'view': Input should be 'details', 'status', 'checkpoints' or "
                        "'frames' (got 'foo')")
        text = await error("get_run_metrics", {"run_id": "@last", "metrics": "eval/return_mean"})
        assert text.endswith("""(got 'eval/return_mean'); pass a list, e.g. ["eval/return_mean"]"""), text
        assert await error("get_run_info", {}) == "get_run_info: argument 'run_id' is required"
        text = await error("list_runs", {"limit": 0})
        assert "\n" not in text and "pydantic" not in text and "Arguments" not in text, text


def test_a_check_across_keys_is_reported_without_a_stray_config_prefix() -> None:
    """Checks across keys have no location: their message was prefixed 'config: ' after 'invalid config: '."""
    from gymnasium_solver import config

    with pytest.raises(config.ConfigError) as err:
        config.resolve_config("CartPole-v1:ppo", ["learning_rate=-1"])
    assert str(err.value) == "CartPole-v1:ppo with --set: invalid config: learning_rate must be >= 0, got -1.0"
    with pytest.raises(config.ConfigError) as err:
        config.resolve_config("CartPole-v1:ppo", ["n_envs=abc"])
    assert "invalid config: n_envs: Input should be a valid integer" in str(err.value)


def test_small_returns_keep_the_digits_that_tell_them_from_their_threshold(tmp_path: Path) -> None:
    """One decimal printed MiniGrid's 0.96 of a 0.97 threshold as 'best eval 1.0 (threshold 0.97)'."""
    import io
    from types import SimpleNamespace

    from rich.console import Console

    from gymnasium_solver.cli.train import summary_line
    from gymnasium_solver.train.progress import ProgressBar

    best = SimpleNamespace(return_mean=0.96)
    result = SimpleNamespace(best_eval=best, solved_at=None, stop_reason=rf.StopReason.BUDGET_EXHAUSTED, failure=None,
                             env_steps=3072, wall_seconds=0.5, run_dir=tmp_path)
    assert "best eval 0.960 (threshold 0.97)" in summary_line("MyEnv-v0:ppo", 0.97, result)
    best.return_mean = 385.64
    assert "best eval 385.6 (threshold 475)" in summary_line("CartPole-v1:ppo", 475.0, result)
    best.return_mean = 0.04  # a return near zero, on a task whose returns are large
    assert "best eval 0.0 (threshold 475)" in summary_line("CartPole-v1:ppo", 475.0, result)
    # No threshold: a run that trained its budget says so; one that failed does not claim it (a new user's Boom-v0).
    done = summary_line("Blackjack-v1:ppo", None, result)
    assert done.startswith("trained Blackjack-v1:ppo for its budget after 3072 env steps, 0.50 s; best eval 0.04")
    assert done.count("for its budget") == 1 and "(no reward threshold to solve)" in done
    failed = SimpleNamespace(**{**vars(result), "stop_reason": rf.StopReason.ERROR})
    line = summary_line("Boom-v0:ppo", None, failed)
    assert line.startswith("not solved Boom-v0:ppo: FAILED: error") and "(no reward threshold to solve);" in line
    assert "for its budget" not in line
    buf = io.StringIO()
    bar = ProgressBar(3000, console=Console(file=buf, force_terminal=False, width=80))
    bar.update(1024, 1.0, 1000.0, 0.8725, None)
    bar.evaluated(1024, 1.0, 0.8725, 0.01, solved=False)
    bar.close()
    assert "return 0.873 ± 0.010 | 1,000 fps | return 0.873" in buf.getvalue() or \
        "return 0.872 ± 0.010 | 1,000 fps | return 0.872" in buf.getvalue(), buf.getvalue()


def test_an_unknown_minigrid_id_names_the_package_flag_that_registers_it() -> None:
    """MiniGrid-Empty-5x5-v0 without --env-package was only pointed at --env-class, a user's own class."""
    from gymnasium_solver import config
    from gymnasium_solver.config.spaces import check_registered

    with pytest.raises(config.ConfigError) as err:
        check_registered("MiniGrid-NoSuchGrid-v0")  # unknown even once minigrid is imported
    assert "add --env-package minigrid" in str(err.value), err.value
    with pytest.raises(config.ConfigError) as err:
        check_registered("NoSuchEnv-v0")
    assert "--env-package PKG" in str(err.value) and "--env-class MODULE:CLASS" in str(err.value)


def test_a_filter_that_matches_no_environment_says_why_and_where_else_to_look(
        capsys: pytest.CaptureFixture[str]) -> None:
    """`gsolve list-envs --filter minigrid` without --env-package printed an empty table and '0 environment(s).'"""
    from gymnasium_solver.environment_list import environment_list

    assert cli.main(["list-envs", "--filter", "Cartpoel"]) == 0
    out = capsys.readouterr().out
    assert "0 environment(s) (no environment id contains 'Cartpoel' (did you mean 'CartPole-v1'" in out, out
    assert "add --env-package PKG" in out
    note = environment_list(filter="NoSuchEnvAnywhere").note
    assert note.startswith("no environment id contains 'NoSuchEnvAnywhere'; ids a package registers"), note


def test_the_eval_freq_note_says_how_often_an_off_policy_run_really_evaluates() -> None:
    """MountainCar-v0:dqn with 3,000 steps was promised evaluations every 300 env steps; it evaluates after each
    1,000-step iteration, 3 times."""
    from gymnasium_solver import config

    notes = config.resolve_with_origin("MountainCar-v0:dqn", ["max_env_steps=3000"]).origin.notes
    note = next(n for n in notes if n.startswith("eval_freq: 300 env steps"))
    assert note.endswith("evaluations happen between iterations, so with iterations of 1,000 env steps this run "
                         "evaluates 3 times"), note


def test_a_missing_output_folder_is_named_not_blamed_on_the_runs(tmp_path: Path) -> None:
    """`gsolve plot ... -o nodir/x.png` said 'check the path (gsolve runs lists the runs)', about the wrong path."""
    import errno

    from gymnasium_solver.cli.app import _os_error

    missing = tmp_path / "nodir" / "x.png"
    text = _os_error(FileNotFoundError(errno.ENOENT, "No such file or directory", str(missing)))
    assert text.endswith(f"the folder {tmp_path / 'nodir'} does not exist: create it, or name a file in one that does")
    gone = tmp_path / "run.json"  # a missing file in a folder that exists: the runs hint stands
    assert "gsolve runs" in _os_error(FileNotFoundError(errno.ENOENT, "No such file or directory", str(gone)))


def test_eval_of_an_imported_run_says_it_has_no_policy_and_hints_name_real_commands(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An imported run was said to have 'no checkpoints yet (still starting, or it failed early)'; and the hints
    named an MCP tool list_checkpoints that does not exist (get_run_info(view='checkpoints') / gsolve checkpoints)."""
    from gymnasium_solver.cli.checkpoints import other_checkpoints

    runs = tmp_path / "runs"
    run_id = _run(runs, 1)
    info = rf.read_run_info(runs / run_id).model_copy(update={"read_only": True})
    rf.write_run_info(runs / run_id, info)
    assert cli.main(["eval", run_id, "--runs-dir", str(runs)]) == 2
    err = capsys.readouterr().err
    assert "it was imported" in err and "no policy to evaluate" in err and "still starting" not in err, err
    assert f"gsolve checkpoints {run_id}" in other_checkpoints(runs / run_id, "best")
    (runs / run_id / rf.CHECKPOINTS_DIR).mkdir()
    (runs / run_id / rf.CHECKPOINTS_DIR / f"last{rf.CHECKPOINT_SUFFIX}").write_bytes(b"x")
    hint = other_checkpoints(runs / run_id, "best")
    assert hint.endswith(f"details with `gsolve checkpoints {run_id}`)") and "list_checkpoints" not in hint, hint


RETIRED_MCP_TOOLS = ("try_fixes", "list_checkpoints", "get_training_status", "get_metric_alerts", "compare_to_baseline")


def test_cli_text_names_no_retired_mcp_tool_and_no_mcp_only_call(capsys: pytest.CaptureFixture[str]) -> None:
    """`gsolve fix --help` named try_fixes (now fix_run); `gsolve show` of a run without a preset sent a shell user
    to get_config, an MCP tool, for the run's settings."""
    from gymnasium_solver.run_store import preset_comparison

    with pytest.raises(SystemExit):
        cli.main(["fix", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "the MCP fix_run pre-" in help_text and not any(n in help_text for n in RETIRED_MCP_TOOLS)
    text, _ = preset_comparison({"env_id": "MountainCar-v0", "variant": "no-such-variant"}, None)
    assert "its config.yaml" in text and not text.endswith("(get_config shows the run's config)"), text


def test_a_runs_folder_that_does_not_exist_is_named_as_such(tmp_path: Path) -> None:
    """A mistyped --runs-dir was reported as 'has no runs yet', as if the folder were only empty."""
    missing = tmp_path / "rnus"
    note = rs.list_runs(rs.RunStore(missing)).note
    assert note.startswith(f"the runs folder {missing.resolve()} does not exist (check --runs-dir"), note
    with pytest.raises(rs.RunNotFoundError, match="does not exist"):
        rs.resolve_run_dir("@last", missing)
    missing.write_text("")
    assert "rnus is not a folder (check --runs-dir" in rs.list_runs(rs.RunStore(missing)).note
    missing.unlink()
    missing.mkdir()
    assert "has no runs yet" in rs.list_runs(rs.RunStore(missing)).note
    with pytest.raises(rs.RunNotFoundError, match="has no runs yet"):
        rs.resolve_run_dir("20260101", missing)


def test_resume_without_a_resumable_checkpoint_says_why_and_gives_the_command(tmp_path: Path) -> None:
    """A run killed 3 s in, with best.pt on disk, was said to have 'ended before its first' checkpoint."""
    import yaml

    from gymnasium_solver import config
    from gymnasium_solver.train.resume import plan_resume

    runs = tmp_path / "runs"
    run_id = _run(runs, 1)
    run_dir = runs / run_id
    info = rf.read_run_info(run_dir).model_copy(update={
        "status": rf.RunStatus.STOPPED, "stop_reason": rf.StopReason.USER_STOPPED, "overrides": {"seed": 3},
        "progress": rf.Progress(env_steps=4096, wall_seconds=3.2)})
    rf.write_run_info(run_dir, info)
    cfg = config.resolve_config("CartPole-v1:ppo", {"seed": 3})
    (run_dir / rf.CONFIG_YAML).write_text(yaml.safe_dump(cfg.model_dump(mode="json")), encoding="utf-8")
    (run_dir / rf.CHECKPOINTS_DIR).mkdir()
    (run_dir / rf.CHECKPOINTS_DIR / f"{rf.BEST_CHECKPOINT}{rf.CHECKPOINT_SUFFIX}").write_bytes(b"weights")
    with pytest.raises(ValueError) as err:
        plan_resume(run_dir)
    text = str(err.value)
    assert "(its best checkpoint holds only what evaluation needs)" in text, text
    assert "it ended after 3 s of training, before its first `last`" in text and "ended before its first one" not in text
    assert text.endswith("start it again instead: `gsolve train CartPole-v1:ppo --set seed=3`"), text


def test_plot_reports_the_measured_peak_and_the_measured_step_at_the_threshold(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The curve was read on an even grid only: a peak between two grid points came out lower (a run's best 385.6
    as 385.4), and the threshold was 'reached at step 11413', a step no evaluation was made at."""
    import json

    import yaml

    from gymnasium_solver.contract.metric_names import M

    runs = tmp_path / "runs"
    run_id = _run(runs, 1)
    cfg = {"env_id": "CartPole-v1", "variant": "ppo", "algo": "ppo", "seed": 1}
    (runs / run_id / rf.CONFIG_YAML).write_text(yaml.safe_dump(cfg), encoding="utf-8")
    rows = [f"{M.ITERATION},{M.ENV_STEPS},{M.EVAL_RETURN_MEAN}", "1,1024,10.0", "2,3333,480.0", "3,10240,470.0"]
    (runs / run_id / rf.METRICS_CSV).write_text("\n".join(rows) + "\n", encoding="utf-8")
    assert cli.main(["plot", run_id, "-o", str(tmp_path / "p.png"), "--runs-dir", str(runs), "--json"]) == 0
    group = json.loads(capsys.readouterr().out)["groups"][0]
    assert group["peak_mean"] == 480.0 and group["first_at_threshold"] == 3333, group


def test_metrics_of_an_empty_column_come_with_a_note_not_a_silent_empty_series(tmp_path: Path) -> None:
    """get_run_metrics(train/grad_norm_trunk) of a PPO run without shared layers answered an empty series and note ''."""
    from gymnasium_solver.contract.metric_names import M

    runs = tmp_path / "runs"
    run_id = _run(runs, 1)
    rows = [f"{M.ITERATION},{M.ENV_STEPS},{M.GRAD_NORM_ACTOR},{M.GRAD_NORM_TRUNK}", "1,2048,0.5,", "2,4096,0.4,"]
    (runs / run_id / rf.METRICS_CSV).write_text("\n".join(rows) + "\n", encoding="utf-8")
    result = rs.query_metrics(rs.RunStore(runs), runs / run_id, [M.GRAD_NORM_ACTOR, M.GRAD_NORM_TRUNK])
    assert [s.points_total for s in result.series] == [2, 0]
    assert result.note.startswith(f"no value in any of the 2 rows for {M.GRAD_NORM_TRUNK}: an empty column"), result.note


def test_set_algo_keeps_the_base_keys_and_names_the_config_id_when_they_do_not_fit() -> None:
    """`--set algo=dqn` on CartPole-v1:ppo blamed 'gae_lambda', a key the user never set, without saying why it was
    there; `--set algo=qrdqn` on CartPole-v1:dqn (QR-DQN on the DQN preset's settings) must keep working."""
    from gymnasium_solver import config

    with pytest.raises(config.ConfigError) as err:
        config.resolve_config("CartPole-v1:ppo", ["algo=dqn"])
    assert str(err.value).endswith("(--set algo=dqn keeps the other keys of CartPole-v1:ppo, a ppo config; for dqn's "
                                   "own settings name it in the config id: CartPole-v1:dqn)")
    assert config.resolve_config("CartPole-v1:dqn", ["algo=qrdqn"]).algo == "qrdqn"
    assert config.resolve_config("CartPole-v1:ppo", ["algo=ppo"]).algo == "ppo"  # a no-op stays allowed


def test_a_value_the_shell_split_at_its_spaces_gets_the_quoting_hint() -> None:
    """`--set hidden_sizes=[64, 64]` unquoted reached gsolve as 'hidden_sizes=[64,' and '64]'."""
    from gymnasium_solver import config

    with pytest.raises(config.ConfigError) as err:
        config.resolve_config("CartPole-v1:ppo", ["hidden_sizes=[64,", "64]"])
    assert str(err.value).endswith("quote the whole pair, e.g. --set 'hidden_sizes=[64, 64]'"), err.value
    with pytest.raises(config.ConfigError) as err:
        config.resolve_config("CartPole-v1:ppo", ["learning_rate"])
    assert str(err.value) == "override 'learning_rate' must look like key=value, e.g. learning_rate=0.001"


def test_an_integer_in_float_notation_gets_the_number_to_write() -> None:
    """`--set max_env_steps=1e4` (text to YAML 1.1) said only 'unable to parse string as an integer'."""
    from gymnasium_solver import config

    with pytest.raises(config.ConfigError) as err:
        config.resolve_config("CartPole-v1:ppo", ["max_env_steps=1e4"])
    assert "max_env_steps: must be an integer written out, e.g. 10000 (YAML reads 1e4 as text)" in str(err.value)
    with pytest.raises(config.ConfigError) as err:
        config.resolve_config("CartPole-v1:ppo", ["n_envs=abc"])
    assert "unable to parse string as an integer (got 'abc')" in str(err.value)


def test_every_registered_id_is_reachable_page_by_page(capsys: pytest.CaptureFixture[str]) -> None:
    """`gsolve list-envs --all` said 'raise --limit' at its maximum of 200, which is refused past it, and ids past
    the first 200 were reachable only with --filter (MCP's list_environments has offset): --offset pages on."""
    from gymnasium_solver.cli import app as cli
    from gymnasium_solver.config.catalog import MAX_CATALOG_ROWS, page_note

    assert page_note(MAX_CATALOG_ROWS, 415, None) == (f" (ids 1-{MAX_CATALOG_ROWS} of 415: the next page with --offset "
                                                      f"{MAX_CATALOG_ROWS}, or narrow with --filter)")
    assert page_note(15, 415, None, offset=400) == " (ids 401-415 of 415: the last page)"
    assert page_note(0, 415, None, offset=900) == " (--offset 900 is past the last of 415: use 0..414)"
    assert page_note(5, 5, None) == ""
    assert cli.main(["list-envs", "--all", "--limit", "3"]) == 0
    first = capsys.readouterr().out.splitlines()[1:4]
    assert cli.main(["list-envs", "--all", "--limit", "3", "--offset", "2"]) == 0
    second = capsys.readouterr().out.splitlines()[1]
    assert second.split()[0] == first[2].split()[0]  # the third id, the first of the page from offset 2
    assert cli.main(["list-envs", "--all", "--offset", "-1"]) == 2
    assert "--offset must be 0 or more" in capsys.readouterr().err


def test_a_search_space_check_across_fields_has_no_stray_value_prefix(tmp_path: Path) -> None:
    """'learning_rate' (log_uniform): value: needs finite 0 < low < high — 'value:' named no field."""
    from gymnasium_solver import config
    from gymnasium_solver.sweeps.space import load_space

    path = tmp_path / "space.yaml"
    path.write_text("learning_rate: {type: log_uniform, low: 0.01, high: 0.0001}\n", encoding="utf-8")
    with pytest.raises(config.ConfigError) as err:
        load_space(path)
    assert str(err.value).endswith("'learning_rate' (log_uniform): needs finite 0 < low < high, got low=0.01, "
                                   "high=0.0001"), err.value


def test_runs_that_differ_only_in_what_they_log_are_seeds_of_one_config(tmp_path: Path) -> None:
    """A seed run with --set grad_norm_parts=true (or tensorboard=true) trains the same: compare and plot split it
    into a group of its own ('CartPole-v1:ppo grad_norm_parts=True')."""
    import yaml

    runs = tmp_path / "runs"
    dirs = []
    for minute, extra in enumerate([{}, {"grad_norm_parts": True, "tensorboard": True}, {"learning_rate": 0.1}]):
        run_id = _run(runs, minute)
        cfg = {"env_id": "CartPole-v1", "variant": "ppo", "algo": "ppo", "seed": minute, "grad_norm_parts": False,
               "tensorboard": False, "learning_rate": 0.001, **extra}
        (runs / run_id / rf.CONFIG_YAML).write_text(yaml.safe_dump(cfg), encoding="utf-8")
        dirs.append(runs / run_id)
    groups = rs.group_runs(rs.RunStore(runs), dirs)
    assert [(g.label, g.seeds) for g in groups] == [("CartPole-v1:ppo learning_rate=0.001", [0, 1]),
                                                    ("CartPole-v1:ppo learning_rate=0.1", [2])]


def test_a_run_json_with_wrong_field_values_names_the_fields(tmp_path: Path) -> None:
    """run.json with a bad status said only '(2 validation errors for RunInfo)'."""
    import json

    runs = tmp_path / "runs"
    run_id = _run(runs, 1)
    data = json.loads((runs / run_id / rf.RUN_JSON).read_text())
    data["status"], data["progress"]["env_steps"] = "bogus", "many"
    (runs / run_id / rf.RUN_JSON).write_text(json.dumps(data))
    with pytest.raises(rs.RunFileError) as err:
        rs.RunStore(runs).info(runs / run_id)
    text = str(err.value)
    assert "status: Input should be 'running'" in text and "(got 'bogus')" in text, text
    assert "progress.env_steps: Input should be a valid integer" in text and "validation errors for" not in text


def test_eval_of_a_run_with_a_damaged_run_json_names_it_and_offers_no_other_checkpoint(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The run.json error came with "try `gsolve eval RUN --checkpoint last`", which fails the same way."""
    runs = tmp_path / "runs"
    assert cli.main(["train", "CartPole-v1:ppo", "--set", "max_env_steps=1024", "--quiet", "--runs-dir", str(runs)]) == 3
    run_dir = next(runs.iterdir())
    (run_dir / rf.RUN_JSON).write_text("{", encoding="utf-8")
    capsys.readouterr()
    assert cli.main(["eval", run_dir.name, "--runs-dir", str(runs)]) == 2
    err = capsys.readouterr().err
    assert "run.json is malformed" in err and "--checkpoint" not in err, err


def test_train_refuses_a_seed_given_twice_with_two_values(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`gsolve train CartPole-v1 --seed 3 --set seed=4` trained seed 3 without a word."""
    runs = tmp_path / "runs"
    assert cli.main(["train", "CartPole-v1", "--seed", "3", "--set", "seed=4", "--runs-dir", str(runs)]) == 2
    assert "--seed 3 and --set seed=4 disagree; give the seed once" in capsys.readouterr().err
    assert not runs.exists()


def test_group_labels_write_values_as_set_takes_them(tmp_path: Path) -> None:
    """A schedule was labelled learning_rate={'start': 0.004, 'end': 0.0}, Python's repr, not what --set takes."""
    import yaml

    runs = tmp_path / "runs"
    dirs = []
    for minute, lr in enumerate([{"start": 0.004, "end": 0.0}, 0.001]):
        run_id = _run(runs, minute)
        cfg = {"env_id": "CartPole-v1", "variant": "ppo", "algo": "ppo", "seed": 0, "learning_rate": lr}
        (runs / run_id / rf.CONFIG_YAML).write_text(yaml.safe_dump(cfg), encoding="utf-8")
        dirs.append(runs / run_id)
    labels = [g.label for g in rs.group_runs(rs.RunStore(runs), dirs)]
    assert labels == ["CartPole-v1:ppo learning_rate={end: 0.0, start: 0.004}", "CartPole-v1:ppo learning_rate=0.001"]


def test_check_against_a_config_without_references_gives_commands_that_exist(tmp_path: Path) -> None:
    """`gsolve check RUN --against preset` of a MountainCar-v0:dqn run (the RL Zoo's settings: no preset) said
    'train a few seeds of the preset'."""
    from gymnasium_solver.ops.regression import preset_references

    runs = tmp_path / "runs"
    run_id = _run(runs, 1, "MountainCar-v0", "dqn")
    why = preset_references(rs.RunStore(runs), rf.read_run_info(runs / run_id))
    assert isinstance(why, str) and "of the preset" not in why, why
    assert why.endswith("train a few seeds of it (gsolve train MountainCar-v0:dqn --seed N), or compare with a "
                        "baseline run (--against RUN; MCP: baseline=RUN)"), why


@pytest.mark.anyio
async def test_mcp_config_errors_name_the_overrides_argument_not_the_cli_flag(tmp_path: Path) -> None:
    """Over MCP a tool's config changes are its `overrides` argument: "--set override: unknown key" sent the model
    looking for a command-line flag it cannot pass."""
    from mcp import Client

    from mcp_server.server import create_server

    async with Client(create_server(tmp_path)) as client:
        for name, args in (("get_config", {"config_id": "CartPole-v1:ppo", "overrides": {"learning_rat": 0.1}}),
                           ("get_config", {"config_id": "CartPole-v1:ppo", "overrides": {"n_envs": "abc"}}),
                           ("start_training", {"config_id": "CartPole-v1:ppo", "overrides": {"env_id": "X-v0"}})):
            res = await client.call_tool(name, args)
            text = " ".join(getattr(c, "text", "") for c in res.content)
            assert res.is_error and "--set" not in text and "overrides" in text, text
