"""How long does diagnose_run take on a finished run of 100,000 metrics rows? (target: < 200 ms cold)

Writes a synthetic finished PPO run folder (100k rows, every PPO column, eval every 10th row) to a
temporary runs folder, then times, best of 5:

- diagnose() alone on the run store's numpy arrays (what the MCP tool passes),
- the diagnose_run MCP tool path with a warm store (cached parse: a repeated call),
- the same with a cold store (metrics.csv parsed from scratch: the first call),
- diagnose() on a MetricsTable (lists of floats), for reference,
- then, with 50 solved sibling runs of the same environment and algorithm added to the folder (a
  few dozen rows each, solved in run.json), the tool path again, warm and cold: the diagnosis now
  also finds its solved references in the store (``references.store_references``) and holds the
  run against their band.

Usage: .venv/bin/python bench/bench_diagnose.py [rows] [siblings]
"""

from __future__ import annotations

import math
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.contract.run_folder import M
from gymnasium_solver.diagnostics import diagnose
from gymnasium_solver.diagnostics.references import store_references
from gymnasium_solver.run_store import RunStore
from mcp_server.diagnostic_tools import diagnose_in_store


def make_run(runs_dir: Path, rows: int) -> str:
    run_id = "20261125-000000-beef"
    run_dir = runs_dir / run_id
    run_dir.mkdir(parents=True)
    cols = rf.columns_for("ppo")
    rng = np.random.default_rng(0)
    t = np.linspace(0, 1, rows)
    series = {
        M.ITERATION: np.arange(1, rows + 1), M.ENV_STEPS: np.arange(1, rows + 1) * 512,
        M.EP_RETURN_MEAN: 20 + 300 * t + rng.normal(0, 5, rows),
        M.EVAL_RETURN_MEAN: 20 + 300 * t + rng.normal(0, 20, rows),
        M.ENTROPY: math.log(2) * (1 - 0.5 * t), M.APPROX_KL: 0.01 + rng.normal(0, 0.002, rows),
        M.CLIP_FRACTION: 0.1 + rng.normal(0, 0.01, rows), M.EXPLAINED_VARIANCE: 0.9 + rng.normal(0, 0.02, rows),
        M.EPOCHS_COMPLETED: np.full(rows, 10), M.FPS: 5000 + rng.normal(0, 100, rows),
    }
    lines = [",".join(cols)]
    cells = [series.get(c, rng.random(rows)) for c in cols]
    for i in range(rows):
        row = []
        for c, v in zip(cols, cells, strict=True):
            if c.startswith("eval/") and i % 10:
                row.append("")
            else:
                row.append(rf.format_value(int(v[i]) if c in (M.ITERATION, M.ENV_STEPS) else float(v[i])))
        lines.append(",".join(row))
    (run_dir / rf.METRICS_CSV).write_text("\n".join(lines) + "\n", encoding="utf-8")
    (run_dir / rf.CONFIG_YAML).write_text(
        f"env_id: CartPole-v1\nvariant: ppo\nalgo: ppo\nmax_env_steps: {rows * 512}\nn_epochs: 10\n"
        "learning_rate: 0.0003\nent_coef: 0.0\nvf_coef: 0.5\ntarget_kl: null\nmax_grad_norm: 0.5\n", encoding="utf-8")
    now = rf.utc_now_iso()
    rf.write_run_info(run_dir, rf.RunInfo(
        run_id=run_id, config_id="CartPole-v1:ppo", env_id="CartPole-v1", variant="ppo", algo="ppo", seed=0,
        status=rf.RunStatus.COMPLETED, stop_reason=rf.StopReason.BUDGET_EXHAUSTED, created_at=now, updated_at=now,
        finished_at=now, reward_threshold=475.0, max_env_steps=rows * 512,
        progress=rf.Progress(env_steps=rows * 512, iteration=rows),
        action_space=rf.ActionSpaceInfo(kind="discrete", n=2, max_entropy=math.log(2)),
    ))
    return run_id


def make_solved_sibling(runs_dir: Path, k: int, rows: int = 40) -> None:
    """A small solved CartPole-v1 PPO run (every PPO column), as the trainer would leave it."""
    run_id = f"20261124-{k // 3600:02d}{k // 60 % 60:02d}{k % 60:02d}-{k:04x}"
    run_dir = runs_dir / run_id
    run_dir.mkdir(parents=True)
    cols = rf.columns_for("ppo")
    rng = np.random.default_rng(1000 + k)
    steps = np.arange(1, rows + 1) * 512
    series = {
        M.ITERATION: np.arange(1, rows + 1), M.ENV_STEPS: steps,
        M.EVAL_RETURN_MEAN: np.linspace(20, 480, rows), M.ENTROPY: np.linspace(0.69, 0.5, rows),
        M.APPROX_KL: 0.01 + rng.normal(0, 0.002, rows), M.CLIP_FRACTION: 0.1 + rng.normal(0, 0.01, rows),
        M.EXPLAINED_VARIANCE: np.linspace(0.2, 0.95, rows), M.GRAD_NORM: 5 + rng.normal(0, 0.5, rows),
    }
    cells = [series.get(c, rng.random(rows)) for c in cols]
    lines = [",".join(cols)] + [
        ",".join(rf.format_value(int(v[i]) if c in (M.ITERATION, M.ENV_STEPS) else float(v[i]))
                 for c, v in zip(cols, cells, strict=True)) for i in range(rows)]
    (run_dir / rf.METRICS_CSV).write_text("\n".join(lines) + "\n", encoding="utf-8")
    (run_dir / rf.CONFIG_YAML).write_text("env_id: CartPole-v1\nvariant: ppo\nalgo: ppo\n", encoding="utf-8")
    now, end = rf.utc_now_iso(), int(steps[-1])
    rf.write_run_info(run_dir, rf.RunInfo(
        run_id=run_id, config_id="CartPole-v1:ppo", env_id="CartPole-v1", variant="ppo", algo="ppo", seed=k,
        status=rf.RunStatus.COMPLETED, stop_reason=rf.StopReason.SOLVED, created_at=now, updated_at=now,
        finished_at=now, reward_threshold=475.0, max_env_steps=200_000,
        progress=rf.Progress(env_steps=end, iteration=rows), solved=True,
        solved_at=rf.SolvedAt(env_steps=end, wall_seconds=1.0, iteration=rows, eval_return_mean=480.0),
        action_space=rf.ActionSpaceInfo(kind="discrete", n=2, max_entropy=math.log(2)), metric_columns=list(cols),
    ))


def best_of(fn: Callable[[], object], n: int = 5) -> float:
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times) * 1000


def main() -> None:
    rows = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    siblings = int(sys.argv[2]) if len(sys.argv) > 2 else 50
    load = os.getloadavg()  # figures under load are several times slower: print it with them
    with tempfile.TemporaryDirectory() as tmp:
        runs = Path(tmp)
        run_id = make_run(runs, rows)
        store = RunStore(runs)
        run_dir = store.resolve(run_id)
        info, cfg, arrays, table = store.info(run_dir), store.config(run_dir), store.metric_arrays(run_dir), store.metrics(run_dir)
        pure = best_of(lambda: diagnose(info, cfg, arrays))
        warm = best_of(lambda: diagnose_in_store(store, run_id))
        cold = best_of(lambda: diagnose_in_store(RunStore(runs), run_id))
        listy = best_of(lambda: diagnose(info, cfg, table))
        for k in range(siblings):
            make_solved_sibling(runs, k)
        store = RunStore(runs)
        source = diagnose_in_store(store, run_id).references.solved_source
        refs_warm = best_of(lambda: store_references(store, run_dir, info))
        refs_cold = best_of(lambda: store_references(RunStore(runs), run_dir, info))
        warm_refs = best_of(lambda: diagnose_in_store(store, run_id))
        cold_refs = best_of(lambda: diagnose_in_store(RunStore(runs), run_id))
    print(f"rows: {rows:,}   load average before: {load[0]:.2f}, after: {os.getloadavg()[0]:.2f} "
          f"({os.cpu_count()} cores)")
    print(f"diagnose() on numpy arrays:            {pure:7.1f} ms")
    print(f"diagnose_run tool path, warm store:    {warm:7.1f} ms")
    print(f"diagnose_run tool path, cold store:    {cold:7.1f} ms  (includes parsing metrics.csv)")
    print(f"diagnose() on a MetricsTable (lists):  {listy:7.1f} ms")
    print(f"with {siblings} solved siblings in the runs folder (references: {source}):")
    print(f"diagnose_run tool path, warm store:    {warm_refs:7.1f} ms")
    print(f"diagnose_run tool path, cold store:    {cold_refs:7.1f} ms  (includes parsing every metrics.csv read)")
    print(f"  of which finding the references (store_references), warm / cold: {refs_warm:.1f} / {refs_cold:.1f} ms")


if __name__ == "__main__":
    main()
