"""Learning tests: the presets solve their environments (slow-marked, still run by `make test`)."""

import pytest

from gymnasium_solver.config import resolve_config
from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.train.training import train


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_ppo_solves_cartpole(tmp_path, seed):
    cfg = resolve_config("CartPole-v1:ppo", [f"seed={seed}"])
    result = train(cfg, tmp_path)
    assert result.solved and result.stop_reason == rf.StopReason.SOLVED, result.best_eval
    assert result.solved_at is not None and result.solved_at.eval_return_mean >= 475
    info = rf.read_run_info(result.run_dir)
    assert info.solved_at == result.solved_at and info.status == rf.RunStatus.COMPLETED
    # best follows the best evaluation, which is the solving one
    best = {m.name: m for m in rf.read_checkpoint_metas(result.run_dir)}["best"]
    assert best.eval_return_mean == result.best_eval.return_mean >= 475


@pytest.mark.slow
def test_reinforce_solves_cartpole(tmp_path):
    result = train(resolve_config("CartPole-v1:reinforce", ["seed=0"]), tmp_path)
    assert result.solved and result.stop_reason == rf.StopReason.SOLVED, result.best_eval
