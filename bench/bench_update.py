"""One PPO, A2C or DQN update through numpy's gradients (gymnasium_solver/agents/numpy_grad.py) against autograd's,
on data of each preset's own shape (issue 23 item 4: the update is most of a CartPole solve's time).

For each preset: its config and vectorised env; PPO and A2C: one rollout of its untrained policy (``n_envs`` x
``n_steps``), then ``targets`` + ``update`` of it; DQN: a replay buffer of 100 collections of its untrained policy,
then the ``gradient_steps`` gradient steps that follow one collection. Each is timed on both paths in this process's
CPU time (one torch thread, as training sets it): the median of 5 blocks of ``--repeats`` updates, the paths
alternating block by block. The
weights move with every update, which does not change what one costs. The last column is the largest difference
between the two paths' weights after one update from the same start, relative to the largest weight (float32
rounding, not a different update).

    .venv/bin/python bench/bench_update.py                     # print
    .venv/bin/python bench/bench_update.py --write update_cost # and write bench/results/update_cost.json
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_results  # noqa: E402 - a sibling script, not a package
from bench_results import PresetRows, Results  # noqa: E402

from gymnasium_solver.agents import agent_class  # noqa: E402
from gymnasium_solver.agents.common import ObsNormalizer  # noqa: E402
from gymnasium_solver.agents.networks import limit_threads  # noqa: E402
from gymnasium_solver.config import resolve_config  # noqa: E402
from gymnasium_solver.envs import make_vec_env, space_spec  # noqa: E402
from gymnasium_solver.train.rollout import RolloutCollector  # noqa: E402

PRESETS = ("CartPole-v1:ppo", "CartPole-v1:a2c", "Acrobot-v1:ppo", "LunarLander-v3:ppo",
           "LunarLander-v3:ppo_continuous", "CartPole-v1:dqn", "LunarLander-v3:dqn")
DQN_FILL = 100  # collections of train_freq vector steps in the replay buffer before timing
NAME = "update_cost"
DESCRIPTION = "One PPO / A2C / DQN update through numpy's gradients against autograd's (bench/bench_update.py)"
PATHS = ("autograd_ms", "numpy_ms")


def _agent(config_id: str) -> tuple[Any, Any, Any]:
    """(config, a fresh agent seeded 0, one rollout of its untrained policy; DQN: None, its buffer filled)."""
    cfg: Any = resolve_config(config_id)  # PPO, A2C or DQN: their own fields below
    env = make_vec_env(cfg, cfg.n_envs)
    spec = space_spec(env)
    torch.manual_seed(0)
    agent = agent_class(cfg.algo)(cfg, spec)
    collector = RolloutCollector(env, spec, ObsNormalizer((spec.obs_dim,), False), 1.0, seed=0)
    rollout = None
    if cfg.algo == "dqn":
        for _ in range(DQN_FILL):
            agent.buffer.add_rollout(collector.collect_steps(agent.explorer, cfg.train_freq))
    else:
        rollout = agent.collect(collector)
    env.close()
    return cfg, agent, rollout


def _autograd(agent: Any) -> Any:
    agent.policy.numpy_net = lambda: None  # the update's other path
    return agent


def _update(agent: Any, rollout: Any) -> None:
    if rollout is None:  # DQN: the gradient steps after one collection
        for _ in range(agent.cfg.gradient_steps):
            agent._gradient_step()
    else:
        agent.update(agent.targets(rollout), 0.0)


def gradient_steps(cfg: Any) -> int:
    """Gradient steps in one update: PPO's epochs x minibatches, A2C's one, DQN's gradient_steps."""
    if cfg.algo == "ppo":
        return int(cfg.n_epochs * max(1, round(cfg.n_envs * cfg.n_steps / cfg.batch_size)))
    return int(cfg.gradient_steps) if cfg.algo == "dqn" else 1


def measure(config_id: str, repeats: int) -> tuple[dict[str, list[float]], int, float]:
    """CPU ms per update on each path (one figure per block), gradient steps per update, weight difference."""
    cfg, numpy_agent, rollout = _agent(config_id)
    if numpy_agent.policy.numpy_net() is None:
        raise SystemExit(f"{config_id}: its policy keeps autograd (numpy_grad.numpy_trainable): nothing to compare")
    _, autograd_agent, _ = _agent(config_id)
    _autograd(autograd_agent)
    torch.manual_seed(1)
    _update(numpy_agent, rollout)
    torch.manual_seed(1)
    _update(autograd_agent, rollout)
    pairs = list(zip(numpy_agent.policy.parameters(), autograd_agent.policy.parameters(), strict=True))
    scale = max(float(q.detach().abs().max()) for _, q in pairs)
    difference = max(float((p - q).detach().abs().max()) for p, q in pairs) / scale
    steps = gradient_steps(cfg)
    blocks: dict[str, list[float]] = {path: [] for path in PATHS}
    agents = {"autograd_ms": autograd_agent, "numpy_ms": numpy_agent}
    for agent in agents.values():
        for _ in range(3):
            _update(agent, rollout)
    for _ in range(5):
        for path, agent in agents.items():
            start = time.process_time()
            for _ in range(repeats):
                _update(agent, rollout)
            blocks[path].append((time.process_time() - start) / repeats * 1e3)
    return blocks, steps, difference


def table(presets: dict[str, PresetRows]) -> str:
    lines = ["| preset | gradient steps per update | autograd, ms | numpy, ms | autograd / numpy | weights differ by |",
             "|---|---|---|---|---|---|"]
    for config_id, p in presets.items():
        auto, mine = statistics.median(p.parts["autograd_ms"]), statistics.median(p.parts["numpy_ms"])
        lines.append(f"| `{config_id}` | {int(p.parts['gradient_steps'][0])} | {auto:.2f} | {mine:.2f} | "
                     f"{auto / mine:.2f}x | {p.parts['weight_difference'][0]:.1e} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--presets", nargs="+", default=list(PRESETS))
    parser.add_argument("--repeats", type=int, default=10, help="updates per timed block (default 10)")
    parser.add_argument("--write", metavar="NAME", help=f"write bench/results/NAME.json (the docs render {NAME})")
    args = parser.parse_args(argv)
    limit_threads(1)
    measured = bench_results.start_measuring(None if argv is None else [__file__, *argv])
    presets: dict[str, PresetRows] = {}
    for config_id in args.presets:
        blocks, steps, difference = measure(config_id, args.repeats)
        presets[config_id] = PresetRows(arms={}, parts={**blocks, "gradient_steps": [float(steps)],
                                                        "weight_difference": [difference]})
        print(table({config_id: presets[config_id]}).splitlines()[-1], flush=True)
    results = Results(name=args.write or NAME, description=DESCRIPTION, measured=bench_results.finish(measured),
                      presets=presets)
    print(table(presets))
    print(f"CPU ms per update, median of 5 blocks of {args.repeats}; load {results.measured.load_start:g}-"
          f"{results.measured.load_end:g}")
    if args.write:
        print(f"wrote {bench_results.write_results(results)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
