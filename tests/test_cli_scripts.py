"""`gsolve` for scripts (issue 25 item 1): every command's --json validates against the JSON schema of its
model (cli_json.JSON_MODELS), and every documented exit code (cli_error.EXIT_MEANINGS) is produced."""

from __future__ import annotations

import argparse
import json
import re
import shutil
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from gymnasium_solver.cli import app as cli
from gymnasium_solver.cli import fix as cli_fix
from gymnasium_solver.cli import sweep as cli_sweep
from gymnasium_solver.cli.error import EXIT_MEANINGS, ExitCode
from gymnasium_solver.cli.json_out import JSON_MODELS, NO_JSON, json_schema, list_schema
from gymnasium_solver.cli.train import train_exit_code
from gymnasium_solver.contract import run_folder as rf

DOCS = Path(__file__).resolve().parents[1] / "docs"
IMPORTS = Path(__file__).resolve().parent / "fixtures" / "imports"
TINY = ["n_envs=4", "eval_freq=1024", "eval_episodes=2", "batch_size=64", "max_env_steps=2048"]


def sets(pairs: list[str]) -> list[str]:
    return [a for p in pairs for a in ("--set", p)]


def run_json(capsys: pytest.CaptureFixture[str], command: str, *args: str, codes: tuple[int, ...] = (0,)) -> Any:
    """Run `gsolve COMMAND ARGS --json` (COMMAND may be a subcommand's words, "presets save"): the exit code
    is one of ``codes`` and stdout is one JSON document valid under the command's schema."""
    code = cli.main([*command.split(), *args, "--json"])
    out, err = capsys.readouterr()
    assert code in codes, f"{command}: exit {code}\n{out}\n{err}"
    doc = json.loads(out)
    jsonschema.validate(doc, json_schema(command))
    return doc


@pytest.fixture(scope="module")
def runs(real_runs: Any, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    """A private copy of the session's real runs: promote and train write into it."""
    dst = tmp_path_factory.mktemp("cli-json") / "runs"
    shutil.copytree(real_runs.runs_dir, dst)
    return dst, real_runs


def test_read_commands_print_their_models(runs: tuple[Path, Any], capsys: pytest.CaptureFixture[str],
                                          tmp_path: Path) -> None:
    d, real = runs
    rd = ["--runs-dir", str(d)]
    listing = run_json(capsys, "runs", *rd)
    assert {r["run_id"] for r in listing["runs"]} >= {real.short, real.solved}
    assert run_json(capsys, "show", real.solved, *rd)["summary"]["solved"] is True
    comparison = run_json(capsys, "compare", real.short, real.solved, real.reinforce, *rd)
    assert len(comparison["runs"]) == 3
    best = run_json(capsys, "compare", "--env", "CartPole-v1", *rd)
    assert best["best"]["run_id"] == real.solved and best["configs"]
    assert run_json(capsys, "checkpoints", real.solved, *rd)["checkpoints"]
    plot = run_json(capsys, "plot", "CartPole-v1:ppo", "-o", str(tmp_path / "p.png"), *rd)
    assert plot["groups"] and (tmp_path / "p.png").stat().st_size > 1000
    config = run_json(capsys, "config", "CartPole-v1:ppo", "--set", "learning_rate=0.001")
    assert config["config"]["learning_rate"] == 0.001 and config["value_sources"]["learning_rate"] == "override"
    evaluation = run_json(capsys, "eval", real.solved, "--episodes", "2", *rd)
    assert evaluation["episodes"] == 2 and len(evaluation["returns"]) == 2 and evaluation["run_id"] == real.solved
    assert run_json(capsys, "diagnose", real.short, *rd)["run_id"] == real.short
    check = run_json(capsys, "check", real.short, "--against", real.solved, *rd, codes=(0, 2, 3))
    assert check["exit_code"] in (0, 2, 3)
    assert run_json(capsys, "models", *rd)["models"] == []
    imported = tmp_path / "imported"
    assert run_json(capsys, "import", str(IMPORTS / "rlzoo_dqn_cartpole"), "--runs-dir", str(imported))["runs"]
    envs = run_json(capsys, "list-envs")
    assert "CartPole-v1:ppo" in envs["environments"][1]["config_ids"] and envs["registered"] == []
    registered = run_json(capsys, "list-envs", "--filter", "MountainCar", "--limit", "1")
    assert registered["registered_total"] == 2 and len(registered["registered"]) == 1
    presets = tmp_path / "presets"
    saved = run_json(capsys, "presets save", real.solved, "mine", "--dir", str(presets), *rd)
    assert saved["config_id"] == "CartPole-v1:mine" and Path(saved["path"]).is_file() and not saved["active"]
    assert saved["train_command"].endswith("gsolve train CartPole-v1:mine")
    # sweep-status without an id: an array of sweeps
    assert cli.main(["sweep-status", "--json", *rd]) == 0
    jsonschema.validate(json.loads(capsys.readouterr().out), list_schema())


def test_train_json_and_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """0 solved, 3 finished unsolved, 0 for that with --no-fail, 2 bad input; --json is the run's details."""
    rd = ["--runs-dir", str(tmp_path), "--quiet"]
    unsolved = run_json(capsys, "train", "CartPole-v1:ppo", *sets([*TINY, "reward_threshold=10000"]), *rd,
                        codes=(ExitCode.UNSOLVED,))
    assert unsolved["summary"]["status"] == "completed" and not unsolved["summary"]["solved"]
    assert cli.main(["train", "CartPole-v1:ppo", *sets([*TINY, "reward_threshold=10000"]), *rd, "--no-fail"]) == 0
    assert capsys.readouterr().out.startswith("not solved CartPole-v1:ppo: budget exhausted")
    solved = run_json(capsys, "train", "CartPole-v1:ppo", *sets([*TINY, "reward_threshold=5"]), *rd,
                      codes=(ExitCode.OK,))
    assert solved["summary"]["solved"]
    assert cli.main(["train", "CartPole-v1:ppo", "--set", "learning_rat=0.1", *rd]) == ExitCode.BAD_INPUT
    capsys.readouterr()


def test_retry_json_plans_then_trains(runs: tuple[Path, Any], capsys: pytest.CaptureFixture[str]) -> None:
    """--dry-run: the changes and the command only; a real retry adds the new run and its comparison."""
    d, real = runs
    rd = ["--runs-dir", str(d), "--quiet"]
    plan = run_json(capsys, "retry", real.short, "--dry-run", *sets(["max_env_steps=4096"]), *rd)
    assert plan["dry_run"] and plan["run"] is None and plan["your_overrides"] == {"max_env_steps": 4096}
    assert "--set max_env_steps=4096" in plan["command"] and plan["parent_run_id"] == real.short
    before = set(p.name for p in d.iterdir())
    done = run_json(capsys, "retry", real.short, *sets(["max_env_steps=2048"]), *rd, codes=(ExitCode.UNSOLVED,))
    (child,) = set(p.name for p in d.iterdir()) - before
    assert done["run"]["summary"]["run_id"] == child and done["overrides"]["max_env_steps"] == 2048
    assert {r["run_id"] for r in done["comparison"]["runs"]} == {real.short, child} and done["verdict"]
    assert not done["run"]["summary"]["solved"]
    # exits as train does: 0 with --no-fail, 0 when the new run solves
    assert cli.main(["retry", real.short, *sets(["max_env_steps=2048"]), *rd, "--no-fail"]) == ExitCode.OK
    capsys.readouterr()
    solved = run_json(capsys, "retry", real.short, *sets(["max_env_steps=2048", "reward_threshold=5"]), *rd)
    assert solved["run"]["summary"]["solved"] and "helped" in solved["verdict"]
    # A retry trains the parent's seed only: a verdict that calls the change good says so and names the
    # command that judges it over seeds.
    seed = solved["run"]["seed"]
    assert f"helped on seed {seed}:" in solved["verdict"], solved["verdict"]
    assert (f"one seed, which can be luck: gsolve fix {real.short} --set max_env_steps=2048 --set reward_threshold=5 "
            "judges the change over 3 seeds") in solved["verdict"], solved["verdict"]


def test_train_exit_code_of_every_ending() -> None:
    """Failed and user-stopped runs (hard to cause in seconds) through the one function train uses."""
    assert train_exit_code(rf.RunStatus.FAILED, False, 475.0) == ExitCode.INTERNAL_ERROR
    assert train_exit_code(rf.RunStatus.FAILED, False, 475.0, no_fail=True) == ExitCode.INTERNAL_ERROR
    assert train_exit_code(rf.RunStatus.STOPPED, False, 475.0) == ExitCode.INTERRUPTED
    assert train_exit_code(rf.RunStatus.COMPLETED, False, None) == ExitCode.OK  # no threshold: its budget was the goal
    assert train_exit_code(rf.RunStatus.COMPLETED, False, 475.0) == ExitCode.UNSOLVED
    assert train_exit_code(rf.RunStatus.COMPLETED, True, 475.0) == ExitCode.OK


def test_fix_not_fixed_exits_3_with_its_record(runs: tuple[Path, Any], capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The experiment's trials are replaced by a verdict (test_fix_e2e runs real ones and exits 0)."""
    d, real = runs

    def not_fixed(store: Any, record: Any, backend: Any, progress: Any = None) -> Any:
        return record.model_copy(update={"verdict": "not_fixed", "status": "done", "message": "no candidate solved"})

    monkeypatch.setattr(cli_fix, "run_experiment", not_fixed)
    record = run_json(capsys, "fix", real.short, "--max-trials", "1", "--parallel", "1", "--runs-dir", str(d),
                      codes=(ExitCode.UNSOLVED,))
    assert record["verdict"] == "not_fixed"
    # --set: your own change is the first candidate, in our names (the Zoo's n_timesteps read as max_env_steps)
    record = run_json(capsys, "fix", real.short, "--set", "n_timesteps=4096", "--max-trials", "1", "--parallel", "1",
                      "--runs-dir", str(d), codes=(ExitCode.UNSOLVED,))
    assert [(c["name"], c["source"], c["changes"]) for c in record["candidates"]] == [
        ("your change", "yours", {"max_env_steps": 4096})]


def test_sweep_and_sweep_check_without_a_solve_exit_3(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from gymnasium_solver.sweeps.check import SweepCheck

    monkeypatch.setattr(cli_sweep, "run_sweep", lambda *a, **k: None)  # no trial finishes
    space = tmp_path / "space.yaml"
    space.write_text("learning_rate.start: {type: log_uniform, low: 1.0e-3, high: 1.0e-2}\n", encoding="utf-8")
    rd = ["--runs-dir", str(tmp_path / "runs")]
    summary = run_json(capsys, "sweep", "CartPole-v1:ppo", "--space", str(space), "--trials", "1", *sets(TINY), *rd,
                       codes=(ExitCode.UNSOLVED,))
    sweep_id = summary["sweep"]["sweep_id"]
    run_json(capsys, "sweep-status", sweep_id, *rd)

    def unsolved(store: Any, record: Any, backend: Any, **kw: Any) -> SweepCheck:
        return SweepCheck(sweep_id=record.sweep_id, config_id=record.config_id, objective=record.objective, sweep_seed=0,
                          seeds=[1, 2], held_out=True, arms=[], best=None, verdict="no arm solved every seed")

    monkeypatch.setattr(cli_sweep.check, "check_sweep", unsolved)
    assert run_json(capsys, "sweep-check", sweep_id, *rd, codes=(ExitCode.UNSOLVED,))["verdict"]


def test_promote_and_rollback_print_decisions(runs: tuple[Path, Any], capsys: pytest.CaptureFixture[str]) -> None:
    d, real = runs
    rd = ["--runs-dir", str(d)]
    for _ in range(2):
        decision = run_json(capsys, "promote", real.solved, "--episodes", "2", "--approve-manually", "--reason",
                            "test", *rd)
        assert decision["kind"] in ("approved", "manual_approval")
    assert run_json(capsys, "rollback", "CartPole-v1", *rd)["kind"] == "rollback"
    rejected = run_json(capsys, "promote", real.short, "--episodes", "2", *rd, codes=(ExitCode.UNSOLVED,))
    assert rejected["kind"] == "rejected"


def cli_commands() -> dict[str, argparse.ArgumentParser]:
    """Every command `gsolve --help` offers, a subcommand's words joined ("presets save"), with its parser."""
    def leaves(parser: argparse.ArgumentParser, prefix: str) -> dict[str, argparse.ArgumentParser]:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs:
            return {prefix: parser}
        out: dict[str, argparse.ArgumentParser] = {}
        for name, child in subs[0].choices.items():
            out.update(leaves(child, f"{prefix} {name}".strip()))
        return out

    return leaves(cli.build_parser(), "")


def test_every_command_prints_json_or_is_allowed_not_to() -> None:
    """A new command that prints a result fails here until it has --json and a model in JSON_MODELS (or,
    printing none, a reason in NO_JSON)."""
    commands = cli_commands()
    assert len(commands) > 20 and "presets save" in commands
    for name, parser in commands.items():
        has_json = any("--json" in a.option_strings for a in parser._actions)
        if name in NO_JSON:
            assert not has_json, f"{name} has --json: move it from NO_JSON to JSON_MODELS"
        else:
            assert has_json and name in JSON_MODELS, f"gsolve {name} prints a result: give it --json and a model " \
                "in cli_json.JSON_MODELS, or say in cli_json.NO_JSON why it prints none"
    assert set(JSON_MODELS) | set(NO_JSON) == set(commands), (set(JSON_MODELS) | set(NO_JSON)) - set(commands)


def test_every_json_command_was_validated_and_documented() -> None:
    """Each command in JSON_MODELS has its output checked by a run_json call of this file (read from its source:
    pytest-xdist may run those tests on another worker), docs/cli.md names each with its model, and every exit
    code of the one table."""
    called = set(re.findall(r'run_json\(capsys, "([^"]+)"', Path(__file__).read_text(encoding="utf-8")))
    assert set(JSON_MODELS) <= called, f"no run_json test: {set(JSON_MODELS) - called}"
    doc = (DOCS / "cli.md").read_text(encoding="utf-8")
    for command, model in JSON_MODELS.items():
        assert f"`{command}`" in doc and model.split(":")[1] in doc, command
    for command in NO_JSON:
        assert f"`{command}`" in doc, command
    for code in ExitCode:
        assert f"| {int(code)} |" in doc, code
    for command in EXIT_MEANINGS:
        assert f"`{command}`" in doc


def test_schema_command_prints_a_schema(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["schema", "runs"]) == 0
    assert json.loads(capsys.readouterr().out)["title"] == "RunList"
    assert cli.main(["schema", "runz"]) == ExitCode.BAD_INPUT
    assert "did you mean runs" in capsys.readouterr().err
    assert cli.main(["schema", "presets", "save"]) == 0
    assert json.loads(capsys.readouterr().out)["title"] == "SavedPreset"
