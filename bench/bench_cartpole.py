"""Wall time to solve CartPole-v1: gymnasium-solver's PPO preset vs Stable-Baselines3 + RL-Zoo.

One solve definition for both: the mean return of 10 deterministic evaluation episodes of the
current policy reaches 475, checked every ``--eval-freq`` environment steps (the same interval for
both). Wall time runs from environment creation to the end of the solving evaluation, evaluation
time included, imports excluded. Each framework runs in its own subprocess so that neither one's
torch thread settings affect the other.

    .venv/bin/python bench/bench_cartpole.py                # seeds 0-9, both frameworks
    .venv/bin/python bench/bench_cartpole.py --seeds 0 1 2  # fewer seeds
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

THRESHOLD = 475.0
EVAL_EPISODES = 10
# RL-Zoo's tuned PPO hyperparameters for CartPole-v1 (rl-baselines3-zoo, hyperparams/ppo.yml).
ZOO = dict(n_envs=8, n_timesteps=100_000, n_steps=32, batch_size=256, gae_lambda=0.8, gamma=0.98,
           n_epochs=20, ent_coef=0.0, learning_rate=0.001, clip_range=0.2)


def run_ours(seed: int, eval_freq: int | None) -> dict:
    from gymnasium_solver.config import resolve_config
    from gymnasium_solver.training import train

    overrides = [f"seed={seed}"] + ([f"eval_freq={eval_freq}"] if eval_freq else [])
    cfg = resolve_config("CartPole-v1:ppo", overrides)
    with tempfile.TemporaryDirectory() as runs_dir:
        result = train(cfg, Path(runs_dir))
    solved = result.solved_at
    return {
        "solved": bool(result.solved),
        "wall_s": solved.wall_seconds if solved else None,
        "env_steps": solved.env_steps if solved else None,
        "eval_freq": cfg.eval_freq,
    }


def run_sb3(seed: int, eval_freq: int) -> dict:
    from stable_baselines3 import PPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.evaluation import evaluate_policy

    def linear(start: float):
        return lambda progress_remaining: progress_remaining * start

    class SolveCallback(BaseCallback):
        """Evaluate every eval_freq env steps; stop at the first evaluation that solves."""

        def __init__(self, eval_env, t0: float):
            super().__init__()
            self.eval_env, self.t0, self.next_eval = eval_env, t0, eval_freq
            self.solved_at: tuple[float, int] | None = None

        def _on_step(self) -> bool:
            if self.num_timesteps < self.next_eval:
                return True
            self.next_eval += eval_freq
            mean, _ = evaluate_policy(self.model, self.eval_env, n_eval_episodes=EVAL_EPISODES,
                                      deterministic=True)
            if mean >= THRESHOLD:
                self.solved_at = (time.perf_counter() - self.t0, self.num_timesteps)
                return False
            return True

    t0 = time.perf_counter()
    env = make_vec_env("CartPole-v1", n_envs=ZOO["n_envs"], seed=seed)
    eval_env = make_vec_env("CartPole-v1", n_envs=EVAL_EPISODES, seed=seed + 10_000)
    model = PPO("MlpPolicy", env, n_steps=ZOO["n_steps"], batch_size=ZOO["batch_size"],
                gae_lambda=ZOO["gae_lambda"], gamma=ZOO["gamma"], n_epochs=ZOO["n_epochs"],
                ent_coef=ZOO["ent_coef"], learning_rate=linear(ZOO["learning_rate"]),
                clip_range=linear(ZOO["clip_range"]), seed=seed, device="cpu", verbose=0)
    callback = SolveCallback(eval_env, t0)
    model.learn(total_timesteps=ZOO["n_timesteps"], callback=callback)
    solved = callback.solved_at
    return {"solved": solved is not None, "wall_s": solved[0] if solved else None,
            "env_steps": solved[1] if solved else None, "eval_freq": eval_freq}


def worker(framework: str, seeds: list[int], eval_freq: int | None) -> None:
    for seed in seeds:
        result = run_ours(seed, eval_freq) if framework == "ours" else run_sb3(seed, eval_freq or 2048)
        print(json.dumps({"framework": framework, "seed": seed, **result}), flush=True)


def run_worker(framework: str, seeds: list[int], eval_freq: int | None) -> list[dict]:
    cmd = [sys.executable, __file__, "--worker", framework, "--seeds", *map(str, seeds)]
    if eval_freq:
        cmd += ["--eval-freq", str(eval_freq)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def median_wall(rows: list[dict]) -> float:
    """Median wall-to-solve; an unsolved seed counts as infinitely slow."""
    return statistics.median(r["wall_s"] if r["solved"] else float("inf") for r in rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, nargs="+", default=list(range(10)))
    parser.add_argument("--eval-freq", type=int, default=None,
                        help="env steps between evaluations for both (default: our preset's eval_freq)")
    parser.add_argument("--worker", choices=["ours", "sb3"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.seeds, args.eval_freq)
        return

    ours = run_worker("ours", args.seeds, args.eval_freq)
    eval_freq = args.eval_freq or ours[0]["eval_freq"]
    sb3 = run_worker("sb3", args.seeds, eval_freq)
    print(f"CartPole-v1, solved = mean of {EVAL_EPISODES} deterministic eval episodes >= {THRESHOLD:g}, "
          f"evaluated every {eval_freq} env steps; wall = env creation -> solving evaluation")
    print(f"{'seed':>4} | {'ours solved':>11} {'env steps':>9} {'wall s':>7} | {'SB3 solved':>10} {'env steps':>9} {'wall s':>7}")
    for o, s in zip(ours, sb3, strict=True):
        def cell(r: dict) -> str:
            return (f"{'yes' if r['solved'] else 'NO':>10} {r['env_steps'] or '-':>9} "
                    f"{(format(r['wall_s'], '.2f') if r['wall_s'] is not None else '-'):>7}")
        print(f"{o['seed']:>4} | {cell(o):>29} | {cell(s)}")
    mo, ms = median_wall(ours), median_wall(sb3)
    print(f"solved: ours {sum(r['solved'] for r in ours)}/{len(ours)}, SB3 {sum(r['solved'] for r in sb3)}/{len(sb3)}")
    print(f"median wall-to-solve: ours {mo:.2f} s, SB3 {ms:.2f} s, ratio ours/SB3 = {mo / ms:.2f} "
          f"(SB3 is {ms / mo:.1f}x slower)")


if __name__ == "__main__":
    main()
