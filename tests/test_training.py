"""End-to-end runs of the trainer on tiny budgets: the run folder is complete and readable,
runs are deterministic, and failures and signals end as data in run.json."""

import csv
import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from gymnasium_solver.agents import networks
from gymnasium_solver.agents.common import ActorCritic, ObsNormalizer
from gymnasium_solver.cli import app as cli
from gymnasium_solver.config import build_config, config_from_yaml_text, resolve_config
from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.envs import make_vec_env, space_spec
from gymnasium_solver.train.rollout import RolloutCollector
from gymnasium_solver.train.run_writer import create_placeholder
from gymnasium_solver.train.training import train

ROOT = Path(__file__).resolve().parent.parent
SMALL = ["max_env_steps=1024", "eval_freq=512", "n_envs=4", "n_steps=64", "batch_size=128", "n_epochs=2"]
UNSOLVABLE = "reward_threshold=1000000"


def read_rows(run_dir: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO((run_dir / rf.METRICS_CSV).read_text())))


def test_smoke_run_writes_a_complete_readable_run_folder(tmp_path):
    cfg = resolve_config("CartPole-v1:ppo", [*SMALL, UNSOLVABLE, "checkpoint_freq=512"])
    result = train(cfg, tmp_path)
    run_dir = result.run_dir
    assert run_dir.parent == tmp_path
    info = rf.read_run_info(run_dir)
    assert info.status == rf.RunStatus.COMPLETED and info.stop_reason == rf.StopReason.BUDGET_EXHAUSTED
    assert info.progress.env_steps == 1024 and info.progress.iteration == 4
    assert info.metric_columns == list(rf.columns_for("ppo"))
    assert info.action_space is not None and info.action_space.kind == "discrete"
    assert info.action_space.max_entropy == pytest.approx(np.log(2))
    assert info.observation_shape == [4] and info.pid == os.getpid() and info.finished_at
    assert {"python", "torch", "gymnasium", "numpy"} <= set(info.versions)
    assert info.best_eval is not None and info.last_eval is not None and not info.solved

    table = rf.parse_metrics_text((run_dir / rf.METRICS_CSV).read_text())
    assert tuple(table.columns) == rf.columns_for("ppo")
    assert table.column(rf.M.ENV_STEPS) == [256, 512, 768, 1024]
    # Eval columns only on evaluation iterations (every 512 steps; the last one is also final).
    assert [v is not None for v in table.column(rf.M.EVAL_RETURN_MEAN)] == [False, True, False, True]
    assert all(v is not None for v in table.column(rf.M.APPROX_KL))

    assert config_from_yaml_text((run_dir / rf.CONFIG_YAML).read_text()) == cfg
    metas = {m.name: m for m in rf.read_checkpoint_metas(run_dir)}
    assert {"best", "last", "step_512", "step_1024"} <= set(metas)
    for meta in metas.values():
        assert (run_dir / rf.CHECKPOINTS_DIR / meta.file).is_file()
    assert metas["last"].env_steps == 1024
    log = (run_dir / rf.RUN_LOG).read_text()
    assert "started CartPole-v1:ppo" in log and "finished: completed (budget_exhausted)" in log


def test_reinforce_columns_and_baseline_metrics(tmp_path):
    base = ["max_env_steps=300", "eval_freq=300", "episodes_per_update=4", "n_envs=4", UNSOLVABLE]
    with_baseline = train(resolve_config("CartPole-v1:reinforce", [*base, "use_baseline=true"]), tmp_path)
    without = train(resolve_config("CartPole-v1:reinforce", [*base, "use_baseline=false"]), tmp_path)
    t1 = rf.parse_metrics_text((with_baseline.run_dir / rf.METRICS_CSV).read_text())
    t2 = rf.parse_metrics_text((without.run_dir / rf.METRICS_CSV).read_text())
    assert tuple(t1.columns) == tuple(t2.columns) == rf.columns_for("reinforce")
    assert all(v is not None for v in t1.column(rf.M.VALUE_LOSS))
    assert all(v is not None for v in t1.column(rf.M.EXPLAINED_VARIANCE))
    assert all(v is None for v in t2.column(rf.M.VALUE_LOSS))
    assert all(v is None for v in t2.column(rf.M.EXPLAINED_VARIANCE))
    assert without.status == rf.RunStatus.COMPLETED and with_baseline.env_steps >= 300


def test_box_actions_train_and_evaluate(tmp_path):
    cfg = build_config({"env_id": "Pendulum-v1", "variant": "test", "algo": "ppo", "n_envs": 2, "n_steps": 64,
                        "batch_size": 64, "n_epochs": 1, "max_env_steps": 256, "eval_freq": 256,
                        "eval_episodes": 2, "normalize_observations": True})
    result = train(cfg, tmp_path)
    info = rf.read_run_info(result.run_dir)
    assert info.status == rf.RunStatus.COMPLETED, (result.run_dir / rf.RUN_LOG).read_text()
    assert info.action_space is not None and info.action_space.kind == "box"
    assert info.action_space.low == [-2.0] and info.action_space.max_entropy is None
    assert info.last_eval is not None and info.last_eval.return_mean < 0  # Pendulum returns are negative


@pytest.mark.parametrize("algo,sets", [
    ("ppo", {"n_steps": 64, "batch_size": 64, "n_epochs": 1, "log_std_init": -0.5}),
    ("reinforce", {"episodes_per_update": 2, "log_std_init": -0.5}),
])
def test_action_std_is_written_for_box_actions_and_empty_for_discrete(tmp_path, algo, sets):
    cfg = build_config({"env_id": "Pendulum-v1", "variant": "test", "algo": algo, "n_envs": 2,
                        "max_env_steps": 800, "eval_freq": 800, "eval_episodes": 2, **sets})
    table = rf.parse_metrics_text((train(cfg, tmp_path).run_dir / rf.METRICS_CSV).read_text())
    stds = table.column(rf.M.ACTION_STD)
    assert len(stds) >= 2 and all(v is not None and np.isfinite(v) and v > 0 for v in stds)
    # One small update away from the initial std exp(-0.5).
    assert stds[0] == pytest.approx(np.exp(-0.5), rel=0.05)

    discrete = train(resolve_config(f"CartPole-v1:{algo}", ["max_env_steps=512", "eval_freq=512",
                                                            UNSOLVABLE]), tmp_path)
    table = rf.parse_metrics_text((discrete.run_dir / rf.METRICS_CSV).read_text())
    assert rf.M.ACTION_STD in table.columns
    assert all(v is None for v in table.column(rf.M.ACTION_STD))


@pytest.mark.parametrize("config_id,sets", [
    ("CartPole-v1:ppo", SMALL),
    ("CartPole-v1:reinforce", ["max_env_steps=600", "eval_freq=300", "n_envs=4", "episodes_per_update=4"]),
])
def test_same_config_and_seed_give_identical_metrics(tmp_path, config_id, sets):
    cfg = resolve_config(config_id, [*sets, UNSOLVABLE, "seed=7"])

    def untimed_rows(run_dir):
        return [{k: v for k, v in row.items() if not k.startswith("time/")} for row in read_rows(run_dir)]

    a, b = (untimed_rows(train(cfg, tmp_path / str(i)).run_dir) for i in range(2))
    assert a == b and len(a) >= 2
    other = untimed_rows(train(cfg.model_copy(update={"seed": 8}), tmp_path / "other").run_dir)
    assert [r[rf.M.POLICY_LOSS] for r in other] != [r[rf.M.POLICY_LOSS] for r in a]


def test_autoreset_step_is_masked_and_truncation_seen(tmp_path):
    cfg = resolve_config("CartPole-v1:ppo", ["n_envs=3", "batch_size=32", "env_kwargs={max_episode_steps: 5}"])
    env = make_vec_env(cfg, 3)
    spec = space_spec(env)
    collector = RolloutCollector(env, spec, ObsNormalizer((spec.obs_dim,), False), 1.0, seed=0)
    torch.manual_seed(0)
    rollout = collector.collect_steps(ActorCritic(spec, cfg), 12)
    done = rollout.terminated | rollout.truncated
    assert rollout.truncated.any()
    # The step after every episode end is the reset step: not valid, reward 0.
    assert not rollout.valid[1:][done[:-1]].any()
    assert (rollout.rewards[1:][done[:-1]] == 0).all()
    assert rollout.valid.sum() == rollout.valid.size - done[:-1].sum()
    env.close()


def test_non_finite_loss_fails_run_and_keeps_finite_last_checkpoint(tmp_path):
    # Rewards of 1e38 overflow float32 returns to inf: the very first loss is non-finite.
    cfg = resolve_config("CartPole-v1:ppo", [*SMALL, "reward_scale=1e38"])
    result = train(cfg, tmp_path)
    info = rf.read_run_info(result.run_dir)
    assert info.status == rf.RunStatus.FAILED and info.stop_reason == rf.StopReason.NON_FINITE_LOSS
    assert info.failure is not None and info.failure.env_steps == 256 and info.failure.iteration == 1
    assert info.failure.message.startswith("non-finite PPO loss")
    payload = torch.load(result.run_dir / "checkpoints" / "last.pt", weights_only=True)
    assert all(torch.isfinite(t).all() for t in payload["model"].values())
    assert "FAILED (non_finite_loss)" in (result.run_dir / rf.RUN_LOG).read_text()


def test_exception_is_recorded_with_traceback(tmp_path, monkeypatch):
    from gymnasium_solver.agents import ppo

    def broken(self, batch, progress):
        raise RuntimeError("simulated bug")

    monkeypatch.setattr(ppo.PPO, "update", broken)
    result = train(resolve_config("CartPole-v1:ppo", SMALL), tmp_path)
    info = rf.read_run_info(result.run_dir)
    assert info.status == rf.RunStatus.FAILED and info.stop_reason == rf.StopReason.ERROR
    assert info.failure is not None and info.failure.message == "simulated bug"
    assert "Traceback" in (result.run_dir / rf.RUN_LOG).read_text()


def test_precreated_placeholder_is_accepted_and_used_runs_refused(tmp_path):
    cfg = resolve_config("CartPole-v1:ppo", [*SMALL, UNSOLVABLE])
    placeholder = create_placeholder(tmp_path, cfg)
    run_id = placeholder.run_id
    assert rf.read_run_info(tmp_path / run_id).placeholder
    (tmp_path / run_id / rf.RUN_LOG).write_text("launcher: starting\n")
    result = train(cfg, tmp_path, run_id=run_id)
    info = rf.read_run_info(tmp_path / run_id)
    assert not info.placeholder and info.created_at == placeholder.created_at
    assert result.run_dir == tmp_path / run_id and result.status == rf.RunStatus.COMPLETED
    assert (tmp_path / run_id / rf.RUN_LOG).read_text().startswith("launcher: starting\n")
    with pytest.raises(ValueError, match="already holds a run"):
        train(cfg, tmp_path, run_id=run_id)
    with pytest.raises(ValueError, match="invalid run id"):
        train(cfg, tmp_path, run_id="../escape")


def test_cli_train_prints_run_folder_last_and_eval_reads_it(tmp_path, capsys):
    args = ["--runs-dir", str(tmp_path), "--quiet", "--no-fail"]  # unsolved: 3 without --no-fail
    assert cli.main(["train", "CartPole-v1:ppo", "--seed", "1", *args, *[x for s in SMALL for x in ("--set", s)]]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    run_dir = Path(lines[-1])
    assert run_dir.parent == tmp_path and (run_dir / rf.RUN_JSON).is_file()
    assert "env steps" in lines[-2] and str(run_dir) in lines[-2]
    assert rf.read_run_info(run_dir).overrides["seed"] == 1
    assert cli.main(["eval", "@last", "--runs-dir", str(tmp_path), "--episodes", "3", "--checkpoint", "last"]) == 0
    assert "over 3 episodes" in capsys.readouterr().out
    assert cli.main(["eval", "@last", "--runs-dir", str(tmp_path), "--checkpoint", "nope"]) == 2
    assert "available: best, last" in capsys.readouterr().err


def test_sigterm_stops_gracefully(tmp_path):
    run_id = "20261125-000000-5157"
    cmd = [sys.executable, "-m", "gymnasium_solver.cli.app", "train", "CartPole-v1:ppo", "--runs-dir", str(tmp_path),
           "--run-id", run_id, "--quiet", "--set", "max_env_steps=100000000", "--set", UNSOLVABLE,
           "--set", "eval_freq=4096"]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    metrics = tmp_path / run_id / rf.METRICS_CSV
    deadline = time.monotonic() + 120
    # Wait until training is under way (a metrics row exists), then ask it to stop.
    while not (metrics.exists() and len(metrics.read_text().splitlines()) >= 2):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "training never started"
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    info = rf.read_run_info(tmp_path / run_id)
    assert info.status == rf.RunStatus.STOPPED and info.stop_reason == rf.StopReason.USER_STOPPED
    assert info.last_eval is not None  # a final evaluation
    assert (tmp_path / run_id / "checkpoints" / "last.pt").is_file()
    assert out.strip().splitlines()[-1] == str(tmp_path / run_id)
    assert json.loads((tmp_path / run_id / rf.RUN_JSON).read_text())["finished_at"]


def test_python_warnings_during_training_go_to_run_log(tmp_path, monkeypatch):
    import warnings

    from gymnasium_solver.agents import ppo

    original = ppo.PPO.update

    def warn_then_update(self, batch, progress):
        warnings.warn("simulated numerical trouble", RuntimeWarning, stacklevel=1)
        return original(self, batch, progress)

    monkeypatch.setattr(ppo.PPO, "update", warn_then_update)
    with pytest.warns(RuntimeWarning, match="simulated"):  # still shown as usual, and logged
        result = train(resolve_config("CartPole-v1:ppo", [*SMALL, UNSOLVABLE]), tmp_path)
    assert result.status == rf.RunStatus.COMPLETED
    assert "warning: RuntimeWarning: simulated numerical trouble" in (result.run_dir / rf.RUN_LOG).read_text()


@pytest.mark.parametrize("env_id", ["CartPole-v1", "Pendulum-v1"])
def test_numpy_actor_matches_torch_policy(env_id):
    cfg = build_config({"env_id": env_id, "variant": "t", "algo": "ppo", "n_envs": 1, "n_steps": 64,
                        "batch_size": 64, "hidden_sizes": [16, 8], "activation": "relu"})
    env = make_vec_env(cfg, 1)
    spec = space_spec(env)
    env.close()
    torch.manual_seed(0)
    policy = ActorCritic(spec, cfg)
    with torch.no_grad():
        for p in policy.parameters():
            p.add_(torch.randn_like(p))  # move away from the near-uniform init
    obs = np.random.default_rng(0).normal(size=(5000, spec.obs_dim)).astype(np.float32)
    with torch.no_grad():
        _, out, _ = policy._heads(torch.from_numpy(obs))
    greedy = policy.act(obs, None, deterministic=True).actions
    rng = np.random.default_rng(1)
    if spec.discrete:
        np.testing.assert_array_equal(greedy, out.argmax(-1).numpy())
        # Sampling follows softmax(logits): compare frequencies with mean probabilities.
        sampled = np.concatenate([policy.act(obs, rng).actions for _ in range(4)])
        freq = np.bincount(sampled, minlength=spec.n_actions) / sampled.size
        np.testing.assert_allclose(freq, torch.softmax(out, -1).mean(0).numpy(), atol=0.01)
    else:
        np.testing.assert_allclose(greedy, out.numpy(), rtol=1e-5, atol=1e-5)
        sample = policy.act(obs, rng)
        assert policy.log_std is not None
        std = float(policy.log_std.detach().exp()[0])
        assert np.std(sample.actions - out.numpy()) == pytest.approx(std, rel=0.05)
        assert (np.abs(sample.env_actions) <= 2.0).all() and (np.abs(sample.actions) > 2.0).any()


def test_reinforce_with_more_envs_than_episodes_trains_with_a_warning_that_names_the_fix(tmp_path, capsys):
    """A valid config that discards most of what it collects is trained as asked, and says so: run.json,
    run.log and gsolve train's stderr. The preset (8 envs, 8 episodes) gets no warning."""
    sets = ["n_envs=16", "max_env_steps=1500", "eval_freq=1000", UNSOLVABLE]
    assert cli.main(["train", "CartPole-v1:reinforce", *[a for s in sets for a in ("--set", s)],
                     "--runs-dir", str(tmp_path), "--quiet"]) == 3  # finished unsolved
    err = capsys.readouterr().err
    assert "gsolve train: warning: n_envs=16 > episodes_per_update=8" in err and "episodes_per_update=16" in err
    (run_dir,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    (warning,) = rf.read_run_info(run_dir).warnings
    assert (warning.kind, warning.source) == ("config_wastes_samples", "n_envs")
    assert "warning: n_envs=16 > episodes_per_update=8" in (run_dir / rf.RUN_LOG).read_text()
    preset = train(resolve_config("CartPole-v1:reinforce", ["max_env_steps=1500", UNSOLVABLE]), tmp_path / "preset")
    assert rf.read_run_info(preset.run_dir).warnings == []


@pytest.mark.parametrize(("eval_return", "solved"), [(100.0, True), (99.99, False)])
def test_an_evaluation_exactly_at_the_threshold_solves(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       eval_return: float, solved: bool) -> None:
    """Solved means eval return mean >= reward_threshold: a return equal to the threshold counts, in the evaluation
    and in the confirmation episodes after it (the same function, evaluation.evaluate)."""
    from gymnasium_solver.train import evaluation, session
    from gymnasium_solver.train.evaluation import EvalResult

    def fake(*a: object, **k: object) -> EvalResult:
        return EvalResult(eval_return, 0.0, 10.0, 2, [eval_return] * 2)

    monkeypatch.setattr(session, "evaluate", fake)
    monkeypatch.setattr(evaluation, "evaluate", fake)
    result = train(resolve_config("CartPole-v1:ppo", [*SMALL, "reward_threshold=100"]), tmp_path)
    info = rf.read_run_info(result.run_dir)
    assert result.solved is solved and info.solved is solved
    if solved:
        assert result.stop_reason == rf.StopReason.SOLVED
        assert info.solved_at is not None and info.solved_at.env_steps == 512 and info.solved_at.eval_return_mean == 100.0
        assert (info.solved_at.confirm_return_mean, info.solved_at.confirm_episodes) == (100.0, 50)
    else:
        assert result.stop_reason == rf.StopReason.BUDGET_EXHAUSTED and info.solved_at is None


def test_weight_snapshot_puts_back_the_weights_of_the_latest_take():
    """The guard's snapshot reuses its buffers: a restore gives the weights at the last take, not the first, and
    never aliases the live weights; a state with non-tensors is deep-copied instead."""
    from gymnasium_solver.train.session import WeightSnapshot

    net = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4))
    snap = WeightSnapshot()
    snap.take(net)
    with torch.no_grad():
        for p in net.parameters():
            p.add_(1.0)
    second = {k: v.clone() for k, v in net.state_dict().items()}
    snap.take(net)
    with torch.no_grad():
        for p in net.parameters():
            p.fill_(float("nan"))
        net[1].running_mean.fill_(7.0)
    snap.restore(net)
    assert all(torch.equal(v, second[k]) for k, v in net.state_dict().items())

    class Plain:
        def __init__(self) -> None:
            self.state = {"w": torch.ones(2), "steps": 3}

        def state_dict(self):
            return self.state

        def load_state_dict(self, state, strict=True, assign=False):
            self.state = state

    plain = Plain()
    snap = WeightSnapshot()
    snap.take(plain)
    plain.state["w"].fill_(0.0)
    plain.state["steps"] = 4
    snap.restore(plain)
    assert torch.equal(plain.state["w"], torch.ones(2)) and plain.state["steps"] == 3


@pytest.mark.parametrize("assign", [False, True])
def test_the_finite_check_follows_weights_a_load_replaces(assign):
    """all_finite keeps the parameter list between updates; a load (in place, or assigning new tensors) is
    still seen: non-finite weights loaded either way are reported."""
    from gymnasium_solver.agents.common import ActorCritic
    from gymnasium_solver.config import resolve_config
    from gymnasium_solver.envs import make_vec_env, space_spec

    cfg = resolve_config("CartPole-v1:a2c")
    policy = ActorCritic(space_spec(make_vec_env(cfg, 1)), cfg, with_critic=True)
    assert policy.all_finite()
    bad = {k: torch.full_like(v, float("nan")) if v.is_floating_point() else v for k, v in policy.state_dict().items()}
    policy.load_state_dict(bad, assign=assign)
    assert not policy.all_finite()


@pytest.mark.parametrize(("activation", "shared"), [("tanh", False), ("relu", True)])
def test_the_policy_forward_is_its_modules_forward_bit_for_bit(activation: str, shared: bool) -> None:
    """ActorCritic._heads calls its layers' kernels directly (networks.torch_mlp), not through nn.Module calls:
    the same kernels, so the same bits as the modules' own forward, with gradients to the same parameters (a batch
    below networks.tanh's numpy threshold: test_tanh_... below holds the one above it to an ulp)."""
    cfg = build_config({"env_id": "CartPole-v1", "variant": "t", "algo": "ppo", "n_envs": 1, "n_steps": 64,
                        "batch_size": 64, "hidden_sizes": [16, 8], "activation": activation,
                        "shared_network": shared})
    env = make_vec_env(cfg, 1)
    spec = space_spec(env)
    env.close()
    torch.manual_seed(0)
    policy = ActorCritic(spec, cfg)
    obs = torch.randn(64, spec.obs_dim)
    hidden, out, value = policy._heads(obs)
    body = policy.actor_body(obs)
    critic = body if policy.critic_body is None else policy.critic_body(obs)
    assert policy.value_head is not None and value is not None
    assert torch.equal(hidden, body) and torch.equal(out, policy.actor_head(body))
    assert torch.equal(value, policy.value_head(critic).squeeze(-1))
    (out.sum() + value.sum()).backward()
    assert all(p.grad is not None for p in policy.parameters() if p.requires_grad and p is not policy.log_std)


@pytest.mark.parametrize("rows", [8, 128, 512])
@pytest.mark.parametrize("grad", [True, False])
def test_tanh_is_torchs_to_an_ulp_with_torchs_gradient(rows: int, grad: bool) -> None:
    """networks.tanh (numpy's forward from a size on, torch's backward kernel) gives torch.tanh's values to an
    ulp and its gradients, and takes numpy's path exactly where its thresholds say (its grad_fn names it)."""
    torch.manual_seed(rows)
    x = (3 * torch.randn(rows, 64, dtype=torch.float32)).requires_grad_(grad)
    ours, theirs = networks.tanh(x), torch.tanh(x)
    assert ours.dtype == torch.float32 and ours.shape == x.shape
    torch.testing.assert_close(ours, theirs, rtol=2.5e-7, atol=1.2e-7)
    numpy_path = x.numel() >= (networks._NUMPY_TANH_GRAD if grad else networks._NUMPY_TANH_NO_GRAD)
    if not grad:
        assert ours.grad_fn is None
        assert torch.equal(ours, theirs) or numpy_path  # torch's own kernel gives torch's bits
        return
    assert type(ours.grad_fn).__name__ == ("_NumpyTanhBackward" if numpy_path else "TanhBackward0")
    weights = torch.randn(rows, 64)
    (g_ours,) = torch.autograd.grad((ours * weights).sum(), x)
    (g_theirs,) = torch.autograd.grad((theirs * weights).sum(), x)
    torch.testing.assert_close(g_ours, g_theirs, rtol=1e-6, atol=1e-6)


def test_tanh_keeps_torchs_kernel_for_a_dtype_numpy_lacks() -> None:
    x = torch.randn(512, 64).to(torch.bfloat16).requires_grad_()
    y = networks.tanh(x)
    assert y.dtype == torch.bfloat16 and type(y.grad_fn).__name__ == "TanhBackward0"
    assert torch.equal(y, torch.tanh(x))
