"""Every MCP tool through a real in-process client (mcp.Client) against runs made by the trainer."""

from __future__ import annotations

import base64
import json
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from mcp import Client

from gymnasium_solver.contract import run_folder as rf
from mcp_server.server import create_server

if TYPE_CHECKING:
    from conftest import RealRuns

pytestmark = pytest.mark.anyio

RUN_TOOLS = {
    "list_environments", "get_config", "list_runs", "get_run_info", "get_run_metrics", "get_run_logs",
    "start_training", "stop_training", "compare_runs", "plot_runs",
}  # fmt: skip
# Far below the 25,000-token limit: ~4 characters per token.
MAX_RESULT_CHARS = 60_000


@pytest.fixture()
async def client(real_runs: RealRuns) -> AsyncIterator[Client]:
    async with Client(create_server(real_runs.runs_dir)) as c:
        yield c


async def ok(client: Client, name: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
    res = await client.call_tool(name, args or {})
    text = " ".join(getattr(c, "text", "") for c in res.content)
    assert not res.is_error, f"{name}({args}) failed: {text}"
    assert res.structured_content is not None, f"{name} returned no structured content"
    assert len(json.dumps(res.structured_content)) < MAX_RESULT_CHARS
    return res.structured_content


async def err(client: Client, name: str, args: dict[str, Any]) -> str:
    res = await client.call_tool(name, args)
    text = " ".join(getattr(c, "text", "") for c in res.content)
    assert res.is_error, f"{name}({args}) should have failed but returned {text[:300]}"
    assert "Traceback" not in text
    return text


async def test_tools_exist_with_annotations(client: Client) -> None:
    tools = {t.name: t for t in (await client.list_tools()).tools}
    assert RUN_TOOLS <= set(tools)
    for name in RUN_TOOLS - {"start_training", "stop_training"}:
        assert tools[name].annotations is not None and tools[name].annotations.read_only_hint is True, name
    for name in ("start_training", "stop_training"):
        assert tools[name].annotations is not None and tools[name].annotations.read_only_hint is False
    assert tools["stop_training"].annotations.destructive_hint is True  # type: ignore[union-attr]
    for t in tools.values():
        assert t.description and len(t.description) > 40, f"{t.name} needs a docstring for the model"


async def test_environments_variants_and_config(client: Client) -> None:
    envs = await ok(client, "list_environments")
    cart = next(e for e in envs["environments"] if e["env_id"] == "CartPole-v1")
    assert "CartPole-v1:ppo" in cart["config_ids"] and cart["variants"]["reinforce"] == "reinforce"
    variants = await ok(client, "list_environments", {"env_id": "CartPole-v1"})
    assert {v["variant"] for v in variants["variants"]} >= {"ppo", "reinforce"}
    assert [e["env_id"] for e in variants["environments"]] == ["CartPole-v1"]
    assert envs["variants"] is None
    assert "did you mean 'CartPole-v1'" in await err(client, "list_environments", {"env_id": "CartPole-v2"})
    cfg = await ok(client, "get_config", {"config_id": "CartPole-v1:ppo", "overrides": {"n_envs": 8}})
    assert cfg["config"]["n_envs"] == 8 and cfg["config"]["reward_threshold"] == 475.0 and cfg["descriptions"]["gamma"]
    bad = await err(client, "get_config", {"config_id": "CartPole-v1:ppo", "overrides": {"learning_rte": 0.1}})
    assert "learning_rte" in bad and "learning_rate" in bad
    assert "n_envs" in await err(client, "get_config", {"config_id": "CartPole-v1:ppo", "overrides": {"n_envs": -2}})
    assert "exactly one" in await err(client, "get_config", {})


async def test_yaml_aliases_in_an_override_are_refused_not_expanded(client: Client) -> None:
    """337 bytes of nested YAML aliases once held the server for minutes and grew it by 1.5 GB."""
    lol = "{a: &a [x, x, x, x, x, x, x, x, x], " + ", ".join(
        f"{k}: &{k} [{', '.join(['*' + p] * 9)}]" for p, k in zip("abcdef", "bcdefg", strict=True)) + "}"
    msg = await err(client, "get_config", {"config_id": "CartPole-v1:ppo", "overrides": {"env_kwargs": lol}})
    assert "anchors and aliases" in msg


async def test_get_config_of_a_run(client: Client, real_runs: RealRuns) -> None:
    cfg = await ok(client, "get_config", {"run_id": real_runs.short})
    assert cfg["source"] == "run" and cfg["config"]["max_env_steps"] == 2048 and cfg["config"]["n_envs"] == 4


async def test_list_runs_filters_and_paging(client: Client, real_runs: RealRuns) -> None:
    everything = await ok(client, "list_runs", {})
    ids = [r["run_id"] for r in everything["runs"]]
    assert ids == sorted([real_runs.short, real_runs.solved, real_runs.reinforce], reverse=True)
    solved = await ok(client, "list_runs", {"solved": True})
    assert [r["run_id"] for r in solved["runs"]] == [real_runs.solved]
    assert solved["runs"][0]["solved_at_env_steps"] > 0
    reinforce = await ok(client, "list_runs", {"algo": "reinforce"})
    assert [r["run_id"] for r in reinforce["runs"]] == [real_runs.reinforce]
    page1 = await ok(client, "list_runs", {"limit": 2})
    assert len(page1["runs"]) == 2 and page1["next_cursor"] == ids[1]
    page2 = await ok(client, "list_runs", {"limit": 2, "cursor": page1["next_cursor"]})
    assert [r["run_id"] for r in page2["runs"]] == ids[2:] and page2["next_cursor"] is None
    none = await ok(client, "list_runs", {"env_id": "LunarLander-v3"})
    assert none["runs"] == [] and "CartPole-v1" in none["note"]


async def test_list_runs_hides_fix_and_sweep_trials_unless_asked(real_runs: RealRuns, tmp_path: Path) -> None:
    """After gsolve fix, its trials (the newest runs) would fill the page an assistant reads: they are counted in
    `hidden` and named in the note, as `gsolve runs` does, and kind lists them."""
    runs = tmp_path / "runs"
    shutil.copytree(real_runs.runs_dir, runs)
    trial = runs / "20991231-000000-00000aa"  # newer than every real run
    shutil.copytree(runs / real_runs.short, trial)
    info = rf.read_run_info(trial)
    rf.write_run_info(trial, info.model_copy(update={"run_id": trial.name, "experiment_id": "fix-20991231-000000-0000"}))
    async with Client(create_server(runs)) as client:
        started = await ok(client, "list_runs", {})
        assert trial.name not in [r["run_id"] for r in started["runs"]] and len(started["runs"]) == 3
        assert started["hidden"] == 1 and "1 fix/sweep trial runs hidden (kind='all'" in started["note"]
        trials = await ok(client, "list_runs", {"kind": "trial"})
        assert [r["run_id"] for r in trials["runs"]] == [trial.name] and trials["runs"][0]["trial_of"]
        every = await ok(client, "list_runs", {"kind": "all"})
        assert every["runs"][0]["run_id"] == trial.name and len(every["runs"]) == 4 and every["hidden"] == 0


@pytest.mark.parametrize(
    "args",
    [{"limit": -1}, {"limit": 0}, {"limit": 10**9}, {"limit": "many"}, {"status": "exploded"}, {"cursor": "../x"}],
)
async def test_list_runs_bad_arguments(client: Client, args: dict[str, Any]) -> None:
    await err(client, "list_runs", args)


async def test_an_argument_a_tool_does_not_take_is_refused_with_the_ones_it_does(client: Client) -> None:
    """pydantic drops unknown arguments: list_environments(contains="breakout") answered with every preset, as if
    unfiltered. Every tool now refuses what it does not take, naming its arguments."""
    text = await err(client, "list_environments", {"contains": "breakout"})
    assert text == "list_environments takes no argument 'contains'; its arguments: env_id, filter, limit, offset, registered"
    text = await err(client, "list_runs", {"limit": 5, "sort": "newest", "env": "CartPole-v1"})
    assert text.startswith("list_runs takes no argument 'env', 'sort'; its arguments: ")
    ok = await client.call_tool("list_environments", {"filter": "cartpole"})
    assert not ok.is_error


async def test_run_info_by_last_prefix_and_full_id(client: Client, real_runs: RealRuns) -> None:
    info = (await ok(client, "get_run_info", {"run_id": real_runs.solved}))["details"]
    s = info["summary"]
    assert s["status"] == "completed" and s["stop_reason"] == "solved" and s["solved"] is True
    assert info["hyperparameters"]["n_envs"] == 4 and info["best_eval"]["return_mean"] >= 15
    solved_at = info["solved_at"]  # the solve and its check, as run.json has them
    assert solved_at["eval_return_mean"] >= 15 and solved_at["confirm_episodes"] >= 50
    assert solved_at["confirm_return_mean"] >= 15
    assert all(f["present"] and f["problem"] is None for f in info["files"])
    newest = max(real_runs.short, real_runs.solved, real_runs.reinforce)
    assert (await ok(client, "get_run_info", {"run_id": "@last"}))["details"]["summary"]["run_id"] == newest
    short = (await ok(client, "get_run_info", {"run_id": real_runs.short[:-1]}))["details"]
    assert short["summary"]["stop_reason"] == "budget_exhausted" and short["summary"]["env_steps"] >= 2048


@pytest.mark.parametrize("ref", ["../../etc", "/etc/passwd", "..", "runs/../x", "a\\b"])
async def test_path_traversal_is_rejected(client: Client, ref: str) -> None:
    text = await err(client, "get_run_info", {"run_id": ref})
    assert "not a run id" in text


async def test_unknown_run_lists_close_matches(client: Client, real_runs: RealRuns) -> None:
    typo = real_runs.solved[:-1] + ("0" if real_runs.solved[-1] != "0" else "1")
    text = await err(client, "get_run_info", {"run_id": typo})
    assert real_runs.solved in text and "list_runs" in text


async def test_wrong_types_are_reported(client: Client, real_runs: RealRuns) -> None:
    assert "run_id" in await err(client, "get_run_info", {"run_id": ["@last"]})
    assert "metrics" in await err(client, "get_run_metrics", {"run_id": "@last", "metrics": "eval/return_mean"})
    assert "run_id" in await err(client, "get_run_info", {})


PENDULUM_SET = ["reward_scale=0.5", "log_std_init=-1"]
PENDULUM_SMALL = ["n_envs=2", "n_steps=16", "batch_size=32", "max_env_steps=2400", "eval_freq=800", "eval_episodes=2"]


@pytest.fixture(scope="module")
def pendulum_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real Pendulum PPO run (Box actions) started with --set reward_scale=0.5 log_std_init=-1, long
    enough (75 rows) that 20 points per metric is a real downsampling."""
    from gymnasium_solver import config
    from gymnasium_solver.train import training

    runs_dir = tmp_path_factory.mktemp("pendulum")
    training.train(config.resolve_config("Pendulum-v1:ppo", [*PENDULUM_SET, *PENDULUM_SMALL]), runs_dir)
    return runs_dir


async def test_metrics_answer_is_sized_for_a_model_reader(pendulum_runs: Path) -> None:
    """8 metrics x 20 points fit in 6 KB: no per-metric descriptions and no list of every column
    (get_run_metrics(catalog=true) has both), points as parallel arrays of rounded values."""
    eight = [rf.M.EVAL_RETURN_MEAN, rf.M.EP_RETURN_MEAN, rf.M.POLICY_LOSS, rf.M.VALUE_LOSS, rf.M.ENTROPY,
             rf.M.APPROX_KL, rf.M.CLIP_FRACTION, rf.M.EXPLAINED_VARIANCE]
    async with Client(create_server(pendulum_runs)) as c:
        res = (await ok(c, "get_run_metrics", {"run_id": "@last", "metrics": eight, "max_points": 20}))["curves"]
        listed = (await ok(c, "get_run_metrics", {"run_id": "@last", "catalog": True}))["catalog"]
    assert len(json.dumps(res).encode()) <= 6_000, len(json.dumps(res).encode())
    assert res["rows_total"] >= 60 and res["metrics_available"] == len(listed["metrics"]) - 1  # not env_steps
    assert [s["metric"] for s in res["series"]] == eight and "description" not in json.dumps(res)
    for s in res["series"]:
        assert len(s["env_steps"]) == len(s["values"]) <= 20
        assert s["env_steps"][0] >= res["env_steps_range"][0] and s["env_steps"][-1] <= res["env_steps_range"][1]
    cut = [s["metric"] for s in res["series"] if s["downsampled"]]
    assert rf.M.POLICY_LOSS in cut and all(m in res["note"] for m in cut) and "max_points" in res["note"]


async def test_run_info_lists_every_difference_from_the_preset(pendulum_runs: Path, client: Client,
                                                              real_runs: RealRuns) -> None:
    async with Client(create_server(pendulum_runs)) as c:
        info = (await ok(c, "get_run_info", {"run_id": "@last"}))["details"]
    assert info["preset"] == "Pendulum-v1:ppo"
    diffs = info["differences_from_preset"]
    assert diffs["reward_scale"] == {"value": 0.5, "preset": 0.2}
    assert diffs["log_std_init"] == {"value": -1.0, "preset": 0.0}
    assert set(diffs) == {k.split("=")[0] for k in PENDULUM_SET + PENDULUM_SMALL}
    assert info["hyperparameters"]["log_std_init"] == -1.0 and info["hyperparameters"]["reward_scale"] == 0.5
    # A preset run lists only what its --set changed; Discrete actions hide log_std_init.
    short = (await ok(client, "get_run_info", {"run_id": real_runs.short}))["details"]
    assert short["preset"] == "CartPole-v1:ppo"
    # Its --set keys, every one a difference from the preset (its rollout is 32 x 64, its batch 512).
    assert set(short["differences_from_preset"]) == {"n_envs", "n_steps", "batch_size", "eval_freq", "eval_episodes",
                                                     "max_env_steps"}
    assert "log_std_init" not in short["hyperparameters"] and "reward_scale" in short["hyperparameters"]


async def test_run_info_shows_the_keys_each_algorithm_uses(client: Client, real_runs: RealRuns) -> None:
    rei = (await ok(client, "get_run_info", {"run_id": real_runs.reinforce}))["details"]["hyperparameters"]
    assert {"vf_coef", "use_baseline", "episodes_per_update", "reward_scale"} <= set(rei)  # vf_coef: the baseline
    assert not {"n_steps", "batch_size", "n_epochs", "gae_lambda", "clip_range", "target_kl"} & set(rei)
    ppo = (await ok(client, "get_run_info", {"run_id": real_runs.short}))["details"]["hyperparameters"]
    assert {"n_steps", "clip_range", "vf_coef"} <= set(ppo) and not {"episodes_per_update", "use_baseline"} & set(ppo)


async def test_run_info_without_a_local_preset_says_so(scratch_runs: RealRuns) -> None:
    cfg_path = scratch_runs.runs_dir / scratch_runs.short / rf.CONFIG_YAML
    cfg_path.write_text(cfg_path.read_text().replace("variant: ppo", "variant: my_own"))
    async with Client(create_server(scratch_runs.runs_dir)) as c:
        info = (await ok(c, "get_run_info", {"run_id": scratch_runs.short}))["details"]
    assert "no preset CartPole-v1:my_own" in info["preset"] and info["differences_from_preset"] == {}


async def test_metrics_default_range_and_downsampling(client: Client, real_runs: RealRuns) -> None:
    res = (await ok(client, "get_run_metrics", {"run_id": real_runs.short}))["curves"]
    names = [s["metric"] for s in res["series"]]
    assert names[0] == rf.M.EVAL_RETURN_MEAN and rf.M.APPROX_KL in names
    rows = res["rows_total"]
    ep = next(s for s in res["series"] if s["metric"] == rf.M.POLICY_LOSS)
    assert ep["points_total"] == rows and len(ep["values"]) == rows and not ep["downsampled"]
    small = (await ok(client, "get_run_metrics", {"run_id": real_runs.short, "metrics": [rf.M.POLICY_LOSS],
                                                  "max_points": 10}))["curves"]
    s = small["series"][0]
    assert len(s["values"]) <= 10 and s["downsampled"] and "downsampled" in small["note"]
    assert s["max"] == pytest.approx(max(ep["values"]), rel=1e-5)
    ranged = (await ok(client, "get_run_metrics", {"run_id": real_runs.short, "metrics": [rf.M.ENV_STEPS],
                                                   "start_env_steps": 1000, "end_env_steps": 1500}))["curves"]
    assert all(1000 <= x <= 1500 for x in ranged["series"][0]["env_steps"])


@pytest.mark.parametrize("args", [{"max_points": 5}, {"max_points": 10**7}, {"max_points": -3},
                                  {"start_env_steps": -1}, {"start_env_steps": 900, "end_env_steps": 100}])
async def test_metrics_bad_limits(client: Client, real_runs: RealRuns, args: dict[str, Any]) -> None:
    await err(client, "get_run_metrics", {"run_id": real_runs.short, **args})


async def test_unknown_metric_lists_close_matches(client: Client, real_runs: RealRuns) -> None:
    text = await err(client, "get_run_metrics", {"run_id": real_runs.short, "metrics": ["eval/retrun_mean"]})
    assert "did you mean 'eval/return_mean'" in text
    text = await err(client, "plot_runs", {"run_ids": [real_runs.short], "metric": "train/aprox_kl"})
    assert "train/approx_kl" in text


async def test_available_metrics_match_the_trainer_columns(client: Client, real_runs: RealRuns) -> None:
    res = (await ok(client, "get_run_metrics", {"run_id": real_runs.short, "catalog": True}))["catalog"]
    assert [m["name"] for m in res["metrics"]] == list(rf.columns_for("ppo"))
    rei = (await ok(client, "get_run_metrics", {"run_id": real_runs.reinforce, "catalog": True}))["catalog"]
    assert [m["name"] for m in rei["metrics"]] == list(rf.columns_for("reinforce"))
    evals = next(m for m in res["metrics"] if m["name"] == rf.M.EVAL_RETURN_MEAN)
    assert 0 < evals["measured_rows"] < res["rows_total"] and evals["description"]


async def test_logs_status_checkpoints(client: Client, real_runs: RealRuns) -> None:
    logs = await ok(client, "get_run_logs", {"run_id": real_runs.solved, "limit": 3})
    assert 0 < len(logs["lines"]) <= 3
    await err(client, "get_run_logs", {"run_id": real_runs.solved, "limit": 100_000})
    await err(client, "get_run_logs", {"run_id": real_runs.solved, "level": "LOUD"})
    status_only = await ok(client, "get_run_info", {"run_id": real_runs.solved, "view": "status"})
    st = status_only["status"]
    assert st["status"] == "completed" and st["finished"] and st["solved"] and st["progress"] > 0
    assert status_only["details"] is None and status_only["checkpoints"] is None
    cps = (await ok(client, "get_run_info", {"run_id": real_runs.solved, "view": "checkpoints"}))["checkpoints"]
    names = {c["name"] for c in cps["checkpoints"]}
    assert {"best", "last"} <= names and all(c["file_present"] for c in cps["checkpoints"])


async def test_compare_and_best_run(client: Client, real_runs: RealRuns) -> None:
    cmp = (await ok(client, "compare_runs", {"run_ids": [real_runs.short, real_runs.solved]}))["comparison"]
    keys = {d["key"] for d in cmp["config_differences"]}
    assert {"max_env_steps", "reward_threshold"} <= keys
    assert cmp["first_to_threshold_env_steps"] == real_runs.solved
    assert cmp["first_to_threshold_wall_time"] == real_runs.solved
    await err(client, "compare_runs", {"run_ids": [real_runs.short]})
    await err(client, "compare_runs", {"run_ids": [real_runs.short, real_runs.short]})
    best = (await ok(client, "compare_runs", {"env_id": "CartPole-v1"}))["best"]
    assert best["best"]["run_id"] == real_runs.solved and "fewest env steps" in best["criterion"]
    missing = (await ok(client, "compare_runs", {"env_id": "CartPole-v0"}))["best"]
    assert missing["best"] is None and "CartPole-v1" in missing["note"]
    assert "exactly one" in await err(client, "compare_runs", {})
    assert "exactly one" in await err(client, "compare_runs", {"run_ids": [real_runs.short, real_runs.solved],
                                                                "env_id": "CartPole-v1"})


async def test_plots_return_png_and_summary(client: Client, real_runs: RealRuns) -> None:
    res = await client.call_tool("plot_runs", {"run_ids": [real_runs.solved]})
    assert not res.is_error
    image = next(c for c in res.content if c.type == "image")
    assert image.mime_type == "image/png" and base64.b64decode(image.data)[:8] == b"\x89PNG\r\n\x1a\n"
    assert res.structured_content and res.structured_content["reward_threshold"] == 15.0
    assert "threshold 15" in res.structured_content["groups"][0]["text"]
    res = await client.call_tool("plot_runs", {"run_ids": [real_runs.short, real_runs.solved], "metric": rf.M.ENTROPY,
                                               "group_by": "run"})
    assert not res.is_error and res.structured_content
    assert [g["run_ids"] for g in res.structured_content["groups"]] == [[real_runs.short], [real_runs.solved]]
    assert "before start_env_steps" in await err(client, "plot_runs", {"run_ids": [real_runs.short],
                                                                       "start_env_steps": 900, "end_env_steps": 100})


async def test_wait_and_stop_on_a_finished_run(client: Client, real_runs: RealRuns) -> None:
    res = await ok(client, "get_run_info", {"run_id": real_runs.short, "view": "status", "wait_seconds": 5})
    assert res["status"]["finished"] and res["waited_seconds"] < 5 and "finished" in res["note"]
    stop = await ok(client, "stop_training", {"run_id": real_runs.short})
    assert stop["forced"] is False and "not running" in stop["message"]
    await err(client, "get_run_info", {"run_id": real_runs.short, "wait_seconds": 3600})


async def test_start_training_validates_before_starting(client: Client, real_runs: RealRuns) -> None:
    before = sorted(p.name for p in real_runs.runs_dir.iterdir())
    text = await err(client, "start_training", {"config_id": "CartPole-v1:ppo", "overrides": {"clip_rnge": 0.1}})
    assert "clip_range" in text
    assert "did you mean 'CartPole-v1'" in await err(client, "start_training", {"config_id": "CartPol-v1"})
    assert "exactly one" in await err(client, "start_training", {})
    assert "exactly one" in await err(client, "start_training", {"config_id": "CartPole-v1:ppo",
                                                                 "resume": real_runs.short})
    assert "sac cannot take" in await err(client, "start_training", {"config_id": "CartPole-v1:sac"})
    assert "batch_size" in await err(client, "start_training", {"config_id": "CartPole-v1:ppo",
                                                                "overrides": {"batch_size": 10**6}})
    assert sorted(p.name for p in real_runs.runs_dir.iterdir()) == before  # nothing was created


async def test_resources_and_prompt(client: Client, real_runs: RealRuns) -> None:
    templates = {t.uri_template for t in (await client.list_resource_templates()).resource_templates}
    assert {"gsolve://runs/{run_id}/config", "gsolve://runs/{run_id}/metrics"} <= templates
    cfg = await client.read_resource(f"gsolve://runs/{real_runs.short}/config")
    assert "max_env_steps: 2048" in cfg.contents[0].text  # type: ignore[union-attr]
    met = await client.read_resource(f"gsolve://runs/{real_runs.short}/metrics")
    assert json.loads(met.contents[0].text)["run_id"] == real_runs.short  # type: ignore[union-attr]
    prompt = await client.get_prompt("debug_run", {"run_id": real_runs.short})
    assert "diagnose_run" in prompt.messages[0].content.text  # type: ignore[union-attr]


async def test_malformed_files_are_reported_and_other_tools_keep_working(scratch_runs: RealRuns) -> None:
    run_dir = scratch_runs.runs_dir / scratch_runs.short
    with open(run_dir / rf.METRICS_CSV, "a") as f:
        f.write("1,2,oops\n")
    (run_dir / rf.CONFIG_YAML).write_text("[unclosed")
    broken = scratch_runs.runs_dir / "20200101-000000-dead"
    broken.mkdir()
    (broken / rf.RUN_JSON).write_text("{")
    async with Client(create_server(scratch_runs.runs_dir)) as c:
        text = await err(c, "get_run_metrics", {"run_id": scratch_runs.short})
        assert "metrics.csv is malformed" in text and "line" in text
        assert "config.yaml is malformed" in await err(c, "get_config", {"run_id": scratch_runs.short})
        info = (await ok(c, "get_run_info", {"run_id": scratch_runs.short}))["details"]
        problems = {f["name"]: f["problem"] for f in info["files"]}
        assert "malformed" in problems[rf.METRICS_CSV] and "malformed" in problems[rf.CONFIG_YAML]
        assert info["summary"]["status"] == "completed"
        assert (await ok(c, "get_run_info", {"run_id": scratch_runs.short, "view": "status"}))["status"]["finished"]
        assert (await ok(c, "get_run_logs", {"run_id": scratch_runs.short}))["lines"]
        listed = {r["run_id"]: r for r in (await ok(c, "list_runs", {}))["runs"]}
        assert listed["20200101-000000-dead"]["status"] == "unreadable"
        assert "run.json" in listed["20200101-000000-dead"]["problem"]
        shutil.rmtree(broken)


async def test_a_running_run_whose_process_is_gone_is_reported_crashed(scratch_runs: RealRuns) -> None:
    import subprocess
    import sys

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()  # reaped: this pid is gone
    run_dir = scratch_runs.runs_dir / scratch_runs.short
    info = rf.read_run_info(run_dir)
    rf.write_run_info(run_dir, info.model_copy(update={"status": rf.RunStatus.RUNNING, "pid": dead.pid,
                                                       "updated_at": rf.utc_now_iso()}))
    async with Client(create_server(scratch_runs.runs_dir)) as c:
        st = (await ok(c, "get_run_info", {"run_id": scratch_runs.short, "view": "status"}))["status"]
        assert st["status"] == "crashed" and st["finished"]
        crashed = await ok(c, "list_runs", {"status": "crashed"})
        assert [r["run_id"] for r in crashed["runs"]] == [scratch_runs.short]


async def test_answers_stay_small_on_a_big_run(tmp_path: Path) -> None:
    """A long run with every metric asked for, non-finite values everywhere and huge log lines
    still answers far below 25,000 tokens, and says what it cut."""
    run_dir = tmp_path / "20261125-000000-beef"
    run_dir.mkdir()
    now = rf.utc_now_iso()
    rf.write_run_info(run_dir, rf.RunInfo(run_id=run_dir.name, config_id="CartPole-v1:ppo", env_id="CartPole-v1",
                                          variant="ppo", algo="ppo", seed=0, status=rf.RunStatus.COMPLETED,
                                          created_at=now, updated_at=now, max_env_steps=10**8))
    w = rf.MetricsWriter(run_dir / rf.METRICS_CSV, rf.PPO_COLUMNS)
    for i in range(1, 20_001):
        row: dict[str, float | int | None] = {c: (float("nan") if i % 97 == 0 else i * 1.000001) for c in rf.PPO_COLUMNS}
        row[rf.M.ITERATION], row[rf.M.ENV_STEPS] = i, i * 64
        w.append(row)
    w.close()
    (run_dir / rf.RUN_LOG).write_text("WARNING " + "x" * 100_000 + "\n" + "INFO ok\n" * 5000)
    async with Client(create_server(tmp_path)) as c:
        res = (await ok(c, "get_run_metrics", {"run_id": "@last", "metrics": list(rf.PPO_COLUMNS[2:]),
                                               "max_points": 1000}))["curves"]
        assert "lowered" in res["note"] and all(s["non_finite_count"] > 200 for s in res["series"])
        assert all(sum(map(len, s["non_finite"].values())) <= 20 for s in res["series"])
        await ok(c, "get_run_metrics", {"run_id": "@last", "catalog": True})
        logs = await ok(c, "get_run_logs", {"run_id": "@last", "limit": 200})
        assert "left out" in logs["note"] or len(logs["lines"]) == 200
        warn = await ok(c, "get_run_logs", {"run_id": "@last", "level": "WARNING"})
        assert len(warn["lines"][0]) < 500


async def test_override_types_survive_the_command_line(client: Client) -> None:
    """start_training passes overrides to `gsolve train --set`; they must parse back to the same types."""
    from gymnasium_solver import config, launcher

    overrides = {"learning_rate": 1e-5, "clip_range": {"start": 1e-5, "end": 0.0}, "target_kl": None,
                 "hidden_sizes": [32, 32], "normalize_observations": True, "activation": "relu"}
    assert config.parse_overrides(launcher._override_pairs(overrides)) == overrides
    cfg = await ok(client, "get_config", {"config_id": "CartPole-v1:ppo", "overrides": overrides})
    assert cfg["config"]["learning_rate"] == 1e-5 and cfg["config"]["hidden_sizes"] == [32, 32]
