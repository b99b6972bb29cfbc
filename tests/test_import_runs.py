"""gsolve import / MCP import_runs on fixtures made by the real libraries (scripts/make_import_fixtures.py):
each kind is imported, listed, read, plotted, compared and diagnosed, through the CLI and an in-process
MCP client; re-imports are idempotent; imported runs refuse to be written to; bad input gets a sentence."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from mcp import Client

from gymnasium_solver.cli import app as cli
from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.contract.run_folder import M
from gymnasium_solver.imports import ImportError_, import_runs, mapping, tb_events
from gymnasium_solver.imports.source import episode_stats

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "imports"
KINDS = {
    "rlzoo_dqn_cartpole": ("rl_zoo_folder", "CartPole-v1:zoo-dqn", "dqn"),
    "sb3_log_ppo_cartpole": ("sb3_log_folder", "CartPole-v1:sb3-ppo", "ppo"),
    "sb3_tb_ppo_pendulum": ("sb3_tensorboard", "Pendulum-v1:sb3-ppo", "ppo"),
    "cleanrl_ppo_cartpole": ("cleanrl_tensorboard", "CartPole-v1:cleanrl-ppo", "ppo"),
    "sb3_log_dqn_cartpole": ("sb3_log_folder", "CartPole-v1:sb3-dqn", "dqn"),
    "cleanrl_dqn_cartpole": ("cleanrl_tensorboard", "CartPole-v1:cleanrl-dqn", "dqn"),
}


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """Every fixture imported once through the CLI (the SB3 event folder needs --env)."""
    runs = tmp_path_factory.mktemp("imported")
    ids: dict[str, str] = {}
    for name in KINDS:
        extra = ["--env", "Pendulum-v1"] if name == "sb3_tb_ppo_pendulum" else []
        before = set(p.name for p in runs.iterdir())
        assert cli.main(["import", str(FIXTURES / name), "--runs-dir", str(runs), *extra]) == 0
        (new,) = set(p.name for p in runs.iterdir()) - before
        ids[name] = new
    return runs, ids


@pytest.mark.parametrize("name", list(KINDS))
def test_each_kind_is_a_read_only_run_with_its_provenance(imported: tuple[Path, dict[str, str]], name: str) -> None:
    runs, ids = imported
    info = rf.read_run_info(runs / ids[name])
    kind, config_id, algo = KINDS[name]
    assert info.read_only and info.source is not None and info.source.kind == kind
    assert info.config_id == config_id and info.algo == algo and info.status == rf.RunStatus.COMPLETED
    assert info.source.unknown, "an import always says what the source could not tell"
    assert "reward_threshold" in info.source.unknown and info.reward_threshold is not None
    if "max_env_steps" in info.source.unknown:  # no budget recorded: why the log ends is not known either
        assert info.stop_reason in (None, rf.StopReason.SOLVED), info.stop_reason
    table = rf.parse_metrics_text((runs / ids[name] / rf.METRICS_CSV).read_text())
    steps = [s for s in table.column(M.ENV_STEPS) if s is not None]
    assert steps == sorted(steps) and len(set(steps)) == len(steps) > 3
    returns = [v for v in table.column(M.EP_RETURN_MEAN) if v is not None]
    assert len(returns) > 3 and all(np.isfinite(returns))
    if kind == "cleanrl_tensorboard":
        assert "evaluation" in info.source.unknown and info.best_eval is None
        cfg = (runs / ids[name] / rf.CONFIG_YAML).read_text()
        assert f"exp_name: {algo}" in cfg and "total_timesteps:" in cfg  # CleanRL's own arguments kept
    else:
        assert info.best_eval is not None and M.EVAL_RETURN_MEAN in table.columns
    if kind == "rl_zoo_folder":
        cfg = (runs / ids[name] / rf.CONFIG_YAML).read_text()
        assert "target_update_interval: 10" in cfg and "exploration_fraction" in cfg  # the Zoo's config.yml


def test_sb3_entropy_loss_is_negated_into_entropy(imported: tuple[Path, dict[str, str]]) -> None:
    runs, ids = imported
    table = rf.parse_metrics_text((runs / ids["sb3_log_ppo_cartpole"] / rf.METRICS_CSV).read_text())
    entropy = [v for v in table.column(M.ENTROPY) if v is not None]
    assert entropy and all(0 < v <= np.log(2) + 1e-6 for v in entropy)  # CartPole: 2 actions
    assert "sb3/train/loss" in table.columns  # unmapped metrics keep their name under the framework


@pytest.mark.parametrize(("name", "expected"), [
    ("sb3_log_dqn_cartpole", {M.TD_LOSS, M.EXPLORATION_RATE}),
    ("cleanrl_dqn_cartpole", {M.TD_LOSS, M.Q_MEAN}),  # CleanRL's dqn.py does not log its epsilon
])
def test_off_policy_metrics_land_in_our_columns(imported: tuple[Path, dict[str, str]], name: str,
                                                expected: set[str]) -> None:
    """What the off-policy diagnosis rules read (TD loss, Q-values, epsilon) is in our columns, so an
    imported DQN run is diagnosed on the same evidence as one of ours."""
    runs, ids = imported
    table = rf.parse_metrics_text((runs / ids[name] / rf.METRICS_CSV).read_text())
    for column in expected:
        measured = [v for v in table.column(column) if v is not None]
        assert len(measured) > 3 and all(np.isfinite(measured)), column
    if M.EXPLORATION_RATE in expected:
        eps = [v for v in table.column(M.EXPLORATION_RATE) if v is not None]
        assert eps[0] > eps[-1] and 0.0 <= eps[-1] <= 1.0  # epsilon decays
    assert not any(c.startswith(("sb3/train/loss", "cleanrl/losses/td_loss")) for c in table.columns)


def test_ppo_total_loss_is_not_taken_for_a_td_loss(imported: tuple[Path, dict[str, str]]) -> None:
    """SB3's PPO logs its total loss as train/loss, the name under which DQN logs its TD loss."""
    runs, ids = imported
    table = rf.parse_metrics_text((runs / ids["sb3_log_ppo_cartpole"] / rf.METRICS_CSV).read_text())
    assert M.TD_LOSS not in table.columns and "sb3/train/loss" in table.columns


def test_reimport_is_idempotent(imported: tuple[Path, dict[str, str]]) -> None:
    runs, ids = imported
    before = sorted(p.name for p in runs.iterdir())
    result = import_runs([FIXTURES / "cleanrl_ppo_cartpole"], runs)
    assert [(r.run_id, r.outcome) for r in result.runs] == [(ids["cleanrl_ppo_cartpole"], "already_imported")]
    assert sorted(p.name for p in runs.iterdir()) == before


def test_cli_reads_imported_runs(imported: tuple[Path, dict[str, str]], capsys: pytest.CaptureFixture[str]) -> None:
    runs, ids = imported
    d = str(runs)
    assert cli.main(["runs", "--runs-dir", d]) == 0
    listing = capsys.readouterr().out
    assert all(i in listing for i in ids.values())
    assert cli.main(["show", ids["cleanrl_ppo_cartpole"], "--runs-dir", d]) == 0
    shown = capsys.readouterr().out
    assert "imported    read-only, from cleanrl" in shown and "unknown     evaluation" in shown
    assert cli.main(["compare", ids["sb3_log_ppo_cartpole"], ids["cleanrl_ppo_cartpole"], "--runs-dir", d]) == 0
    assert "config differences" in capsys.readouterr().out
    for rid in ids.values():
        assert cli.main(["diagnose", rid, "--runs-dir", d]) == 0
        report = capsys.readouterr().out
        assert "Imported from" in report and "gsolve retry" not in report and "gsolve train" not in report
        assert "preset's value" not in report and "Compared with the preset" not in report  # no revert advice


def test_writing_commands_refuse_imported_runs(imported: tuple[Path, dict[str, str]],
                                               capsys: pytest.CaptureFixture[str]) -> None:
    from gymnasium_solver.experiments.launch import plan_experiment
    from gymnasium_solver.run_store import RunStore
    from gymnasium_solver.train.resume import plan_resume

    runs, ids = imported
    rid = ids["cleanrl_ppo_cartpole"]
    with pytest.raises(ValueError, match="imported from cleanrl .* read-only"):
        plan_resume(runs / rid)
    with pytest.raises(ValueError, match="read-only: it cannot be used to run a fix experiment"):
        plan_experiment(RunStore(runs), rid)
    assert cli.main(["retry", rid, "--runs-dir", str(runs)]) == 2
    assert "read-only" in capsys.readouterr().err


pytestmark_anyio = pytest.mark.anyio


async def _call(client: Client, name: str, args: dict[str, Any]) -> tuple[bool, Any, str]:
    res = await client.call_tool(name, args)
    text = " ".join(getattr(c, "text", "") for c in res.content)
    return bool(res.is_error), res.structured_content, text


@pytest.mark.anyio
async def test_mcp_tools_work_on_imported_runs(imported: tuple[Path, dict[str, str]]) -> None:
    from mcp_server.server import create_server

    runs, ids = imported
    async with Client(create_server(runs)) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        ann = tools["import_runs"].annotations
        assert ann is not None and ann.read_only_hint is False and ann.idempotent_hint is True
        err, listed, text = await _call(client, "list_runs", {})
        assert not err and {r["run_id"] for r in listed["runs"]} == set(ids.values()), text
        for name, rid in ids.items():
            err, report, text = await _call(client, "get_run_info", {"run_id": rid})
            assert not err, text
            info = report["details"]
            assert info["read_only"] and info["source"]["kind"] == KINDS[name][0], text
            err, got, text = await _call(client, "get_run_metrics", {"run_id": rid, "metrics": [M.EP_RETURN_MEAN]})
            assert not err and got["curves"]["series"][0]["values"], text
            if name not in ("cleanrl_ppo_cartpole", "sb3_tb_ppo_pendulum"):
                continue  # plots and diagnoses of the other kinds: test_cli_reads_imported_runs (time budget)
            err, plot, text = await _call(client, "plot_runs", {"run_ids": [rid], "metric": M.EP_RETURN_MEAN})
            assert not err and plot["metric"] == M.EP_RETURN_MEAN, text
            err, d, text = await _call(client, "diagnose_run", {"run_id": rid})
            assert not err, text
            assert d["imported_from"].startswith(mapping.Framework.SB3 if "cleanrl" not in name else "cleanrl")
            assert d["references"]["deviations"] == [] and d["references"]["preset"] is None
            assert not any(c["why"].startswith("the preset's value") for f in d["findings"]
                           for c in f["suggested_changes"])
        err, cmp_, text = await _call(client, "compare_runs", {"run_ids": list(ids.values())[:2]})
        assert not err and len(cmp_["comparison"]["runs"]) == 2, text
        err, res, text = await _call(client, "import_runs", {"paths": [str(FIXTURES / "sb3_log_ppo_cartpole")]})
        assert not err and res["runs"][0]["outcome"] == "already_imported", text
        err, _, text = await _call(client, "import_runs", {"paths": [str(FIXTURES / "cleanrl_ppo_cartpole")],
                                                           "name": "ppo"})
        assert err and "preset variant" in text and "Traceback" not in text


@pytest.mark.anyio
async def test_diagnosis_names_a_mechanism_from_the_imported_metrics(imported: tuple[Path, dict[str, str]]) -> None:
    """The short CleanRL run did not solve: the diagnosis must still point at evidence it has."""
    from gymnasium_solver.diagnostics import diagnose_run_dir
    from gymnasium_solver.run_store import RunStore

    runs, ids = imported
    store = RunStore(runs)
    d = diagnose_run_dir(store, runs / ids["cleanrl_ppo_cartpole"])
    assert not d.returns.solved and d.findings
    top = d.findings[0]
    assert top.evidence and all(e.metric in rf.read_run_info(runs / ids["cleanrl_ppo_cartpole"]).metric_columns
                                or e.metric.startswith(("config", "run")) for e in top.evidence)
    assert d.next_step is None or "imported from cleanrl" in d.next_step


# --------------------------------------------------------------------------------------------------
# bad input
# --------------------------------------------------------------------------------------------------
def test_a_folder_that_is_none_of_these_gets_a_sentence(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "notes.txt").write_text("hello")
    assert cli.main(["import", str(tmp_path), "--runs-dir", str(tmp_path / "runs")]) == 2
    err = capsys.readouterr().err
    assert "none of the folders gsolve can import" in err and "events.out.tfevents" in err and "progress.csv" in err


def test_empty_event_file_gets_a_sentence(tmp_path: Path) -> None:
    (tmp_path / "events.out.tfevents.1.host").write_bytes(b"")
    with pytest.raises(ValueError, match="is empty: expected TensorBoard events"):
        import_runs([tmp_path], tmp_path / "runs", env_id="CartPole-v1")
    assert not (tmp_path / "runs").exists()


def test_truncated_and_damaged_progress_csv(tmp_path: Path) -> None:
    src = tmp_path / "sb3"
    shutil.copytree(FIXTURES / "sb3_log_ppo_cartpole", src)
    text = (src / "progress.csv").read_text()
    (src / "progress.csv").write_text(text[: len(text) - 25])  # cut mid-row: tolerated, said
    got = import_runs([src], tmp_path / "runs", env_id="CartPole-v1").runs[0]
    assert "last line was incomplete" in got.unknown["progress.csv"]
    lines = text.splitlines()
    (src / "progress.csv").write_text("\n".join([*lines[:3], "1,2,3", *lines[4:]]) + "\n")
    with pytest.raises(ImportError_, match=r"progress.csv line 4 has 3 fields, expected \d+"):
        import_runs([src], tmp_path / "runs")
    (src / "progress.csv").write_text(lines[0] + "\n")
    with pytest.raises(ImportError_, match="header but no rows"):
        import_runs([src], tmp_path / "runs")


def test_event_folder_without_environment_asks_for_it(tmp_path: Path) -> None:
    src = tmp_path / "PPO_1"
    shutil.copytree(FIXTURES / "sb3_tb_ppo_pendulum", src)
    with pytest.raises(ImportError_, match="cannot tell which environment .* --env CartPole-v1"):
        import_runs([src], tmp_path / "runs")


def test_truncated_event_file_imports_its_complete_records(tmp_path: Path) -> None:
    src = tmp_path / "run"
    shutil.copytree(FIXTURES / "cleanrl_ppo_cartpole", src)
    (f,) = src.iterdir()
    f.write_bytes(f.read_bytes()[:-7])
    got = import_runs([src], tmp_path / "runs").runs[0]
    assert "incomplete record" in got.unknown["event files"]


# --------------------------------------------------------------------------------------------------
# the readers' pieces
# --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["cleanrl_ppo_cartpole", "sb3_tb_ppo_pendulum"])
def test_fast_event_decoding_equals_protobuf(name: str) -> None:
    """Every scalar the vectorised path decodes equals what tensorboard's Event protobuf says."""
    from tensorboard.compat.proto import event_pb2

    (path,) = tb_events.event_files(FIXTURES / name)
    buf = path.read_bytes()
    data, length, truncated = tb_events._frame(buf)
    assert not truncated
    expected: dict[str, list[tuple[int, float]]] = {}
    for d, n in zip(data, length, strict=True):
        ev = event_pb2.Event.FromString(buf[int(d): int(d + n)])
        for v in ev.summary.value:
            if v.HasField("simple_value"):
                expected.setdefault(v.tag, []).append((ev.step, float(np.float32(v.simple_value))))
    got = tb_events.read_event_folder(FIXTURES / name)
    assert set(got.scalars) == set(expected)
    for tag, rows in expected.items():
        s = got.scalars[tag]
        assert list(zip(s.steps.tolist(), s.values.tolist(), strict=True)) == rows


def test_episode_stats_match_a_direct_rolling_window() -> None:
    rng = np.random.default_rng(0)
    values = rng.normal(size=250)
    steps = np.arange(250) * 10
    mean, std, count = episode_stats(steps, values)
    for i in (0, 50, 99, 100, 249):
        window = values[max(0, i - 99): i + 1]
        assert mean.values[i] == pytest.approx(window.mean()) and std.values[i] == pytest.approx(window.std())
        assert count.values[i] == i + 1


def test_docs_show_the_mapping_table() -> None:
    docs = (Path(__file__).resolve().parent.parent / "docs" / "metrics.md").read_text()
    assert mapping.markdown_table() in docs, "docs/metrics.md's import table differs from imports/mapping.py"


def test_import_mapping_agrees_with_what_our_sb3_runs_write() -> None:
    """An SB3 metric lands in the same column whether our SB3 adapter trained the run or it was imported."""
    from gymnasium_solver.agents.sb3 import SB3_METRICS

    for source_name, ours in SB3_METRICS.items():
        got = mapping.algo_mapping(mapping.Framework.SB3, source_name, "dqn") or mapping.METRIC_MAP[mapping.Framework.SB3][source_name]
        assert got.ours == ours, source_name


def test_diagnosis_of_imported_dqn_reads_the_sources_own_settings(imported: tuple[Path, dict[str, str]],
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """A setting the source never recorded is not evidence (SB3's bare CSV logger holds no config: no
    finding may quote SB3's default target interval of 10,000 as the run's), and a setting the source
    names its own way is read under that name and printed back in it (CleanRL's target_network_frequency)."""
    runs, ids = imported
    assert cli.main(["diagnose", ids["sb3_log_dqn_cartpole"], "--runs-dir", str(runs)]) == 0
    out = capsys.readouterr().out
    assert "target_update_interval" not in out and "10000" not in out
    assert cli.main(["diagnose", ids["cleanrl_dqn_cartpole"], "--runs-dir", str(runs)]) == 0
    out = capsys.readouterr().out
    assert "target_update_interval=500" in out  # CleanRL's target_network_frequency, read as ours
    assert "in the cleanrl (cleanrl_tensorboard) config: target_network_frequency=" in out


def test_a_file_that_is_not_a_model_zip_is_named_in_the_refusal(tmp_path: Path) -> None:
    """A new user's `gsolve import README.md` was told '. is none of the folders gsolve can import': the folder,
    not the file they gave."""
    from gymnasium_solver.imports import find_sources

    readme = tmp_path / "README.md"
    readme.write_text("# notes\n", encoding="utf-8")
    with pytest.raises(ImportError_, match=r"README.md is a file gsolve does not import \(not an SB3 model .zip\), "
                       r"and its folder .* is none of the folders gsolve can import"):
        find_sources(readme)
