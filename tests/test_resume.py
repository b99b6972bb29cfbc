"""Resume (`gsolve train --resume RUN`, MCP start_training(resume=RUN)): checkpoints hold everything training
continues from, metrics.csv continues without gaps or duplicates, a SIGKILLed run resumed ends
where an uninterrupted one does, and every run that cannot be resumed is refused with the reason."""

from __future__ import annotations

import copy
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch
from mcp import Client
from shared_util import stop_after

from gymnasium_solver.agents.common import ObsNormalizer
from gymnasium_solver.agents.ppo import PPO
from gymnasium_solver.cli import app as cli
from gymnasium_solver.config import resolve_config
from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.envs import make_vec_env, space_spec
from gymnasium_solver.train import training
from gymnasium_solver.train.checkpoints import (
    TrainingState,
    checkpoint_path,
    load_resume_state,
    numpy_rng_state,
    save_checkpoint,
    set_numpy_rng_state,
    snapshot,
)
from gymnasium_solver.train.resume import plan_resume
from gymnasium_solver.train.rollout import RolloutCollector
from gymnasium_solver.train.run_writer import truncate_metrics_after
from mcp_server.server import create_server

ROOT = Path(__file__).resolve().parent.parent
SMALL = ["n_envs=4", "n_steps=64", "batch_size=128", "n_epochs=2", "max_env_steps=4096", "eval_freq=1024",
         "eval_episodes=2", "reward_threshold=1000", "last_checkpoint_seconds=0"]
ROLLOUT = 4 * 64


def iterations(run_dir: Path) -> list[int]:
    table = rf.parse_metrics_text((run_dir / rf.METRICS_CSV).read_text())
    return [int(v) for v in table.column(rf.M.ITERATION) if v is not None]


@pytest.fixture(scope="module")
def stopped_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real run stopped by the user after 3 of its 16 iterations (resumable `last` at 768 steps)."""
    runs = tmp_path_factory.mktemp("stopped")
    mp = pytest.MonkeyPatch()
    mp.setattr(training, "stop_on_signals", lambda: stop_after(3))
    try:
        result = training.train(resolve_config("CartPole-v1:ppo", SMALL), runs)
    finally:
        mp.undo()
    assert result.status == rf.RunStatus.STOPPED and result.env_steps == 3 * ROLLOUT
    return result.run_dir


@pytest.fixture
def stopped(stopped_run: Path, tmp_path: Path) -> Path:
    """A private copy of the stopped run, free to resume or damage."""
    return Path(shutil.copytree(stopped_run, tmp_path / stopped_run.name))


# ---------------------------------------------------------------------------------------------
# Checkpoint round trip
# ---------------------------------------------------------------------------------------------
def test_checkpoint_round_trip_restores_optimizer_normaliser_rngs_and_counters(tmp_path: Path) -> None:
    cfg = resolve_config("CartPole-v1:ppo", [*SMALL, "normalize_observations=true"])
    env = make_vec_env(cfg, cfg.n_envs)
    spec = space_spec(env)
    normalizer = ObsNormalizer((spec.obs_dim,), True)
    agent = PPO(cfg, spec)
    collector = RolloutCollector(env, spec, normalizer, 1.0, seed=3)
    agent.update(agent.targets(agent.collect(collector)), 0.25)
    state = TrainingState(
        optimizer=copy.deepcopy(agent.optimizer.state_dict()), torch_rng=torch.get_rng_state(),
        numpy_rng=numpy_rng_state(), collector=collector.state_dict(), eval_count=3, next_eval=2048,
        next_checkpoint=None, confirmed=100,
    )
    save_checkpoint(tmp_path, rf.LAST_CHECKPOINT, snapshot(agent.policy, normalizer, env_steps=collector.env_steps,
                    iteration=1, wall_seconds=1.5, eval_return_mean=None, training=state), cfg)
    expected = (torch.rand(4), np.random.rand(4), collector.rng.random(4))
    torch.manual_seed(99)
    np.random.seed(99)

    loaded = load_resume_state(checkpoint_path(tmp_path, rf.LAST_CHECKPOINT))
    assert (loaded.env_steps, loaded.iteration, loaded.wall_seconds) == (ROLLOUT, 1, 1.5)
    t = loaded.training
    assert (t.eval_count, t.next_eval, t.next_checkpoint, t.confirmed) == (3, 2048, None, 100)
    fresh = PPO(cfg, spec)
    fresh.policy.load_state_dict(loaded.model)
    fresh.optimizer.load_state_dict(t.optimizer)
    saved, restored = agent.optimizer.state_dict(), fresh.optimizer.state_dict()
    assert saved["param_groups"] == restored["param_groups"]
    for key, moments in saved["state"].items():
        for name, value in moments.items():
            assert torch.equal(value, restored["state"][key][name]), (key, name)
    normalizer2 = ObsNormalizer((spec.obs_dim,), False)
    normalizer2.load_state_dict(loaded.normalizer)
    assert normalizer2.enabled and normalizer2.count == normalizer.count
    assert np.array_equal(normalizer2.mean, normalizer.mean) and np.array_equal(normalizer2.var, normalizer.var)
    collector2 = RolloutCollector(make_vec_env(cfg, cfg.n_envs), spec, normalizer2, 1.0, seed=1234)
    collector2.load_state_dict(t.collector)
    assert collector2.env_steps == ROLLOUT and collector2.episodes == collector.episodes
    assert collector2.summary() == collector.summary()
    torch.set_rng_state(t.torch_rng)
    set_numpy_rng_state(t.numpy_rng)
    assert torch.equal(torch.rand(4), expected[0])
    assert np.array_equal(np.random.rand(4), expected[1])
    assert np.array_equal(collector2.rng.random(4), expected[2])


def test_a_checkpoint_from_before_the_confirmation_counter_resumes_with_none_run(tmp_path: Path) -> None:
    cfg = resolve_config("CartPole-v1:ppo", SMALL)
    env = make_vec_env(cfg, cfg.n_envs)
    agent = PPO(cfg, space_spec(env))
    state = TrainingState(optimizer=agent.optimizer.state_dict(), torch_rng=torch.get_rng_state(),
                          numpy_rng=numpy_rng_state(), collector={}, eval_count=2, next_eval=4096, next_checkpoint=None)
    old = {k: v for k, v in state._asdict().items() if k != "confirmed"}  # what an older trainer wrote
    save_checkpoint(tmp_path, rf.LAST_CHECKPOINT, snapshot(agent.policy, ObsNormalizer((4,), False), env_steps=64,
                    iteration=1, wall_seconds=0.5, eval_return_mean=None, training=state), cfg)
    path = checkpoint_path(tmp_path, rf.LAST_CHECKPOINT)
    payload = torch.load(path, weights_only=True)
    torch.save({**payload, "training": old}, path)
    assert load_resume_state(path).training.confirmed == 0
    torch.save({**payload, "training": {**old, "stray": 1}}, path)
    with pytest.raises(ValueError, match="holds no training state"):
        load_resume_state(path)


def test_best_checkpoint_is_not_resumable(stopped: Path) -> None:
    with pytest.raises(ValueError, match="no training state"):
        load_resume_state(checkpoint_path(stopped, rf.BEST_CHECKPOINT))
    assert load_resume_state(checkpoint_path(stopped, rf.LAST_CHECKPOINT)).env_steps == 3 * ROLLOUT


def test_truncate_metrics_keeps_rows_up_to_the_checkpoint_and_drops_a_torn_line(tmp_path: Path) -> None:
    path = tmp_path / rf.METRICS_CSV
    path.write_text("iteration,env_steps\n1,256\n2,512\n3,768\n4,1024\n5,12")
    assert truncate_metrics_after(path, 2) == 3
    assert path.read_text() == "iteration,env_steps\n1,256\n2,512\n"
    assert truncate_metrics_after(path, 2) == 0


# ---------------------------------------------------------------------------------------------
# Resume in-process
# ---------------------------------------------------------------------------------------------
def test_resume_continues_a_stopped_run_to_its_budget(stopped: Path) -> None:
    # Rows written after the checkpoint (a crash between row and checkpoint) are replaced.
    with open(stopped / rf.METRICS_CSV, "a") as f:
        f.write("4," + ",".join(["1"] * (len(rf.columns_for("ppo")) - 1)) + "\n5,1,1")
    result = training.resume(stopped)
    assert result.status == rf.RunStatus.COMPLETED and result.stop_reason == rf.StopReason.BUDGET_EXHAUSTED
    assert result.env_steps == 4096
    assert iterations(stopped) == list(range(1, 17))
    info = rf.read_run_info(stopped)
    assert info.pid == os.getpid() and info.finished_at and info.failure is None
    [record] = info.resumes
    assert (record.at_env_steps, record.at_iteration, record.from_checkpoint) == (768, 3, "last")
    assert record.previous_status == "stopped"
    assert info.progress.wall_seconds >= rf.read_checkpoint_metas(stopped)[0].wall_seconds
    assert "cut 2 metrics.csv line(s)" in (stopped / rf.RUN_LOG).read_text()


def test_refuses_a_running_run(stopped: Path) -> None:
    info = rf.read_run_info(stopped)
    rf.write_run_info(stopped, info.model_copy(update={"status": rf.RunStatus.RUNNING, "pid": os.getpid(),
                                                       "updated_at": rf.utc_now_iso()}))
    with pytest.raises(ValueError, match="still running"):
        training.resume(stopped)


def test_refuses_a_completed_run(stopped: Path) -> None:
    training.resume(stopped)
    with pytest.raises(ValueError, match="is completed"):
        training.resume(stopped)
    assert len(rf.read_run_info(stopped).resumes) == 1


def test_refuses_a_run_without_a_checkpoint(stopped: Path) -> None:
    (stopped / rf.CHECKPOINTS_DIR / f"{rf.LAST_CHECKPOINT}{rf.CHECKPOINT_SUFFIX}").unlink()  # best stays
    with pytest.raises(ValueError, match="no checkpoint to resume from"):
        training.resume(stopped)


def test_refuses_a_run_whose_config_no_longer_validates(stopped: Path) -> None:
    text = (stopped / rf.CONFIG_YAML).read_text()
    (stopped / rf.CONFIG_YAML).write_text(text + "no_such_key: 1\n")
    with pytest.raises(ValueError, match="config no longer validates"):
        training.resume(stopped)
    assert rf.read_run_info(stopped).status == rf.RunStatus.STOPPED  # nothing was written


def test_cli_resume_refusals_are_one_line_errors(stopped: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = ["--runs-dir", str(stopped.parent)]
    assert cli.main(["train", "--resume", stopped.name, "--set", "n_envs=2", *runs]) == 2
    assert "drop --set" in capsys.readouterr().err
    training.resume(stopped)
    assert cli.main(["train", "--resume", stopped.name, "--quiet", *runs]) == 2
    assert "is completed" in capsys.readouterr().err


# ---------------------------------------------------------------------------------------------
# End to end: SIGKILL, resume, compare with an uninterrupted run
# ---------------------------------------------------------------------------------------------
E2E = ["reward_threshold=1000", "max_env_steps=40000", "eval_freq=10000", "eval_episodes=2",
       "last_checkpoint_seconds=0.3"]
_PRESET = resolve_config("CartPole-v1:ppo")
E2E_ROLLOUT = _PRESET.n_envs * _PRESET.n_steps  # type: ignore[union-attr]  # one rollout of the preset


def _gsolve(*args: str) -> list[str]:
    return [sys.executable, "-m", "gymnasium_solver.cli.app", *args]


@pytest.mark.slow  # three 40k-step trainer processes: ~2 minutes on 2 shared cores
def test_sigkilled_run_resumed_ends_like_an_uninterrupted_one(tmp_path: Path) -> None:
    sets = [x for s in E2E for x in ("--set", s)]
    killed_id, whole_id = "20261126-000000-dead", "20261126-000000-0001"
    proc = subprocess.Popen(_gsolve("train", "CartPole-v1:ppo", *sets, "--runs-dir", str(tmp_path), "--run-id",
                                    killed_id, "--quiet"), cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, start_new_session=True)
    run_dir = tmp_path / killed_id
    last_meta = run_dir / rf.CHECKPOINTS_DIR / f"{rf.LAST_CHECKPOINT}{rf.CHECKPOINT_META_SUFFIX}"
    deadline = time.monotonic() + 300
    # Kill it mid-way: once a periodic `last` exists and a few iterations have passed.
    while not (last_meta.exists() and len(iterations(run_dir)) >= 8):
        assert proc.poll() is None, proc.communicate()[1]
        assert time.monotonic() < deadline, "training never got going"
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert rf.effective_status(rf.read_run_info(run_dir)) == rf.RunStatus.CRASHED
    killed_at = iterations(run_dir)[-1]

    # --no-fail: exit 0 whether or not the budget solves (this test is about resuming, not solving).
    resumed = subprocess.run(_gsolve("train", "--resume", killed_id, "--runs-dir", str(tmp_path), "--quiet",
                                     "--no-fail"),
                             cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout.strip().splitlines()[-1] == str(run_dir)
    whole = subprocess.run(_gsolve("train", "CartPole-v1:ppo", *sets, "--runs-dir", str(tmp_path), "--run-id",
                                   whole_id, "--quiet", "--no-fail"), cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert whole.returncode == 0, whole.stderr

    info, whole_info = rf.read_run_info(run_dir), rf.read_run_info(tmp_path / whole_id)
    assert info.status == rf.RunStatus.COMPLETED and info.stop_reason == rf.StopReason.BUDGET_EXHAUSTED
    assert abs(info.progress.env_steps - whole_info.progress.env_steps) <= E2E_ROLLOUT
    its = iterations(run_dir)
    assert its == list(range(1, len(its) + 1)), "iterations must increase by one, no gaps or duplicates"
    assert its[-1] == info.progress.iteration
    table = rf.parse_metrics_text((run_dir / rf.METRICS_CSV).read_text())
    steps = table.column(rf.M.ENV_STEPS)
    assert all(b > a for a, b in zip(steps, steps[1:], strict=False))  # type: ignore[operator]
    [record] = info.resumes
    assert record.previous_status == "crashed" and record.from_checkpoint == rf.LAST_CHECKPOINT
    assert record.at_iteration <= killed_at and record.at_env_steps == record.at_iteration * E2E_ROLLOUT


# ---------------------------------------------------------------------------------------------
# MCP
# ---------------------------------------------------------------------------------------------
@pytest.mark.anyio
async def test_mcp_start_training_resumes_a_stopped_run(stopped: Path) -> None:
    async with Client(create_server(stopped.parent)) as client:
        result = await client.call_tool("start_training", {"resume": stopped.name})
        assert not result.is_error, result.content
        assert result.structured_content is not None and result.structured_content["started"] is None
        start = result.structured_content["resumed"]
        assert result.structured_content["run_id"] == start["run_id"] == stopped.name
        assert (start["from_checkpoint"], start["at_env_steps"], start["at_iteration"]) == ("last", 768, 3)
        assert start["previous_status"] == "stopped" and "get_run_info" in start["note"]
        deadline = time.monotonic() + 300
        while rf.read_run_info(stopped).status != rf.RunStatus.COMPLETED or rf.pid_alive(start["pid"]):
            assert time.monotonic() < deadline, (stopped / rf.RUN_LOG).read_text()[-2000:]
            time.sleep(0.2)
        again = await client.call_tool("start_training", {"resume": stopped.name})
        assert again.is_error and "is completed" in str(again.content)
    info = rf.read_run_info(stopped)
    assert [r.at_iteration for r in info.resumes] == [3] and info.pid == start["pid"]
    assert iterations(stopped) == list(range(1, 17))


def test_plan_is_torch_free_and_names_the_checkpoint(stopped: Path) -> None:
    plan = plan_resume(stopped)
    assert plan.checkpoint.name == rf.LAST_CHECKPOINT and plan.checkpoint.iteration == 3
    code = ("import sys; from pathlib import Path; from gymnasium_solver.train.resume import plan_resume; "
            f"plan_resume(Path({str(stopped)!r})); import mcp_server.training_tools; assert 'torch' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True, timeout=120)
