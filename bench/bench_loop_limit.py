"""Our training loop against the physical limit on this machine (issue 23 item 4): how much longer than
stepping the environments and running the policy forward does a solve take, and where does the rest go?

For each preset and its fixed seed:

- **ours**: ``gsolve train PRESET --seed S`` in a process of its own, timed from launch to exit, stopped by
  its own solve (the preset's threshold). Its time is split with what the run folder already records:
  ``time/rollout_seconds`` (collection), ``time/update_seconds`` (GAE scoring and the gradient update), an
  iteration's remaining time (``time/wall_seconds`` less both: evaluation on the rows that evaluated, the
  metrics row, run.json heartbeat and checkpoints on every row), the setup before the first iteration, the
  start-up before the environments exist (imports, config, run folder: launch to ``run.json``'s
  ``finished_at`` less ``progress.wall_seconds``) and the exit after ``finished_at``.
- **the limit**: in this process, the vectorised environment the preset trains on (``n_envs``,
  ``vectorization``, made by gymnasium_solver/envs.py) stepped for the same N env steps (the steps the
  solve needed) with actions sampled from the preset's (untrained) policy network, one batch of
  ``n_envs`` observations per step, run forward both in torch (``torch.no_grad``, ``torch_threads``
  threads) and in numpy as our collector does; the limit is the env steps plus the faster forward (for
  these small networks numpy's: torch's per-op dispatch costs more than the arithmetic). The env steps
  and each forward are reported apart.

Repeats alternate ours and the limit (``--repeats``, default 3) and the figures are medians, the ratio the
median of each repeat's ours / limit. The machine is shared: the load average is recorded beside each
repeat; compare ratios, not absolute seconds. The same ratio in CPU seconds (ours: the process's user +
system time; the limit: this thread's) moves less with the load than the wall-clock one.

    .venv/bin/python bench/bench_loop_limit.py                       # both presets, 3 repeats, print
    .venv/bin/python bench/bench_loop_limit.py --write loop_limit    # and write bench/results/loop_limit.json
    .venv/bin/python bench/bench_loop_limit.py --presets CartPole-v1:ppo --repeats 5
"""

from __future__ import annotations

import argparse
import csv
import datetime
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_results  # noqa: E402 - a sibling script, not a package
from bench_results import PresetRows, Results, Row  # noqa: E402

# Each preset and its fixed seed: CartPole's seed 1 and LunarLander's seed 0, whose env steps to solve the table shows
# (CartPole's is a drift-gate figure, bench/results/gate.json; LunarLander is not in the gate: its N is what its run needs).
PRESETS: dict[str, int] = {"CartPole-v1:ppo": 1, "LunarLander-v3:ppo": 0}
NAME = "loop_limit"
DESCRIPTION = ("Our training loop against the physical limit (vectorised env steps + the policy forward for the "
               "env steps a solve needs) and where the difference goes (bench/bench_loop_limit.py)")
# The parts of our process time, in the order the table shows them; with the limit they add up to `ours`.
PARTS = ("collection_over_limit", "update", "evaluation", "logging_other", "setup", "startup", "exit")
PART_TITLES = {"collection_over_limit": "collection beyond the limit", "update": "update (GAE + gradient steps)",
               "evaluation": "evaluation", "logging_other": "logging, checkpoints, other",
               "setup": "setup (envs, agent)", "startup": "start-up (imports, config, run folder)",
               "exit": "exit"}


def _timestamp(text: str) -> float:
    return datetime.datetime.fromisoformat(text).timestamp()


def split_run(run_dir: Path, launched: float, ended: float) -> dict[str, float]:
    """Seconds of one `gsolve train` process by part, from its run folder (metrics.csv and run.json) and the
    launch and exit wall-clock times: total, run (environment creation to finished_at), collection,
    update, evaluation, logging_other, setup, startup, exit."""
    info = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    with (run_dir / "metrics.csv").open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        raise SystemExit(f"{run_dir}: metrics.csv has no rows")
    run_s = float(info["progress"]["wall_seconds"])
    started = _timestamp(info["finished_at"]) - run_s  # when the clock of time/wall_seconds started
    collection = update = 0.0
    rest: list[tuple[float, bool]] = []  # each row's time beyond its rollout and update, and whether it evaluated
    previous = 0.0
    for row in rows:
        wall, rollout, upd = (float(row[k]) for k in ("time/wall_seconds", "time/rollout_seconds",
                                                         "time/update_seconds"))
        collection, update = collection + rollout, update + upd
        rest.append((wall - previous - rollout - upd, row["eval/return_mean"] != ""))
        previous = wall
    # An iteration without an evaluation spends its rest on the metrics row, the heartbeat and checkpoints:
    # its median is what every row spends so; an evaluating row's rest beyond it is the evaluation.
    plain = [r for r, evaluated in rest[1:] if not evaluated]
    per_row = statistics.median(plain) if plain else 0.0
    first, first_evaluated = rest[0]
    setup = max(first - per_row, 0.0) if not first_evaluated else 0.0
    evaluation = sum(max(r - per_row, 0.0) for r, evaluated in rest if evaluated)
    logging_other = run_s - collection - update - evaluation - setup
    startup = max(started - launched, 0.0)
    return {"total": ended - launched, "run": run_s, "collection": collection, "update": update,
            "evaluation": evaluation, "logging_other": logging_other, "setup": setup, "startup": startup,
            "exit": max(ended - launched - startup - run_s, 0.0)}


def run_ours(config_id: str, seed: int) -> tuple[Row, dict[str, float]]:
    """`gsolve train` as a user runs it (its own process, no progress bar), timed from launch to exit."""
    gsolve = Path(sys.executable).with_name("gsolve")
    with tempfile.TemporaryDirectory(prefix="loop_limit_") as runs_dir:
        cmd = [str(gsolve), "train", config_id, "--seed", str(seed), "--quiet", "--runs-dir", runs_dir]
        cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        launched = time.time()
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        ended = time.time()
        cpu1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        folders = [p for p in Path(runs_dir).iterdir() if p.is_dir()]
        if proc.returncode not in (0, 3) or len(folders) != 1:
            raise SystemExit(f"bench_loop_limit: {' '.join(cmd)} failed (exit {proc.returncode}):\n{proc.stderr[-2000:]}")
        info = json.loads((folders[0] / "run.json").read_text(encoding="utf-8"))
        parts = split_run(folders[0], launched, ended)
    parts["total_cpu"] = cpu1.ru_utime + cpu1.ru_stime - cpu0.ru_utime - cpu0.ru_stime
    solved = info.get("solved_at")
    steps = int(solved["env_steps"] if solved else info["progress"]["env_steps"])
    return Row(seed=seed, solved=solved is not None, env_steps=steps, wall_s=round(parts["total"], 3)), parts


def measure_limit(config_id: str, seed: int, env_steps: int) -> dict[str, float]:
    """Seconds to step the preset's vectorised env for ``env_steps`` env steps with actions sampled from its
    policy network, each step's batch run forward twice: in torch (``torch.no_grad``) and in numpy as our
    collector does (``ActorCritic.act``). limit = env + the faster forward (wall), limit_cpu the same in
    this thread's CPU seconds; env, forward_torch and forward_numpy apart. The loop's own overhead is not in it."""
    import numpy as np
    import torch

    from gymnasium_solver.agents import agent_class
    from gymnasium_solver.config import resolve_config
    from gymnasium_solver.envs import batch_obs, make_vec_env, space_spec

    cfg = resolve_config(config_id, [f"seed={seed}"])
    torch.set_num_threads(cfg.torch_threads)
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    env = make_vec_env(cfg, cfg.n_envs)
    wall = dict.fromkeys(("env", "forward_torch", "forward_numpy"), 0.0)
    cpu = dict(wall)
    try:
        spec = space_spec(env)
        policy = agent_class(cfg.algo)(cfg, spec).policy
        n = cfg.n_envs
        raw, _ = env.reset(seed=seed)
        with torch.no_grad():
            for _ in range(-(-env_steps // n)):
                obs = batch_obs(raw, spec, n)
                t0, c0 = time.perf_counter(), time.thread_time()
                out = policy.actor_head(policy.actor_body(torch.from_numpy(obs)))
                if spec.discrete:
                    actions = torch.multinomial(torch.softmax(out, -1), 1).squeeze(1).numpy()
                else:
                    assert policy.log_std is not None and spec.action_low is not None
                    sampled = out + policy.log_std.exp() * torch.randn_like(out)
                    actions = np.clip(sampled.numpy(), spec.action_low, spec.action_high)
                t1, c1 = time.perf_counter(), time.thread_time()
                policy.act(obs, rng)
                t2, c2 = time.perf_counter(), time.thread_time()
                raw, *_ = env.step(actions)
                t3, c3 = time.perf_counter(), time.thread_time()
                for part, (a, b, ca, cb) in {"forward_torch": (t0, t1, c0, c1), "forward_numpy": (t1, t2, c1, c2),
                                             "env": (t2, t3, c2, c3)}.items():
                    wall[part] += b - a
                    cpu[part] += cb - ca
    finally:
        env.close()
    return {**wall, "limit": wall["env"] + min(wall["forward_torch"], wall["forward_numpy"]),
            "limit_cpu": cpu["env"] + min(cpu["forward_torch"], cpu["forward_numpy"])}


def measure(config_id: str, seed: int, repeats: int) -> tuple[list[Row], dict[str, list[float]]]:
    """``repeats`` rounds of ours then the limit; each round's seconds per part, its ratio and its load."""
    rows: list[Row] = []
    parts: dict[str, list[float]] = {}
    for i in range(repeats):
        load = os.getloadavg()[0]
        row, ours = run_ours(config_id, seed)
        if rows and (row.solved, row.env_steps) != (rows[0].solved, rows[0].env_steps):
            raise SystemExit(f"bench_loop_limit: {config_id} seed {seed} solved at {rows[0].env_steps:,} env steps, "
                             f"then at {row.env_steps:,}: runs are not deterministic here, the figures would not compare")
        limit = measure_limit(config_id, seed, row.env_steps)
        round_parts = {**ours, **limit, "collection_over_limit": ours["collection"] - limit["limit"],
                       "ratio": ours["total"] / limit["limit"], "run_ratio": ours["run"] / limit["limit"],
                       "cpu_ratio": ours["total_cpu"] / limit["limit_cpu"],
                       "load": (load + os.getloadavg()[0]) / 2}
        rows.append(row)
        for key, value in round_parts.items():
            parts.setdefault(key, []).append(round(value, 4))
        print(f"  {config_id} seed {seed} repeat {i + 1}/{repeats}: {row.env_steps:,} env steps, ours "
              f"{ours['total']:.2f} s, limit {limit['limit']:.3f} s, ratio {round_parts['ratio']:.1f} "
              f"(load {round_parts['load']:.1f})", flush=True)
    return rows, parts


def table(presets: dict[str, PresetRows]) -> str:
    """The medians of each preset's repeats: limit, ours, ratio, and where ours goes beyond the limit."""
    head = ["", *presets]
    lines = ["| " + " | ".join(head) + " |", "|---" * len(head) + "|"]

    def med(p: PresetRows, key: str) -> float:
        return statistics.median(p.parts[key])

    def share(p: PresetRows, key: str) -> str:
        return f"{med(p, key):.2f} s ({med(p, key) / med(p, 'total'):.0%})"

    body: list[tuple[str, Any]] = [
        ("env steps (solve, seed)", lambda p: f"{p.arms['ours'][0].env_steps:,} (seed {p.arms['ours'][0].seed})"),
        ("limit: env steps + forward", lambda p: f"{med(p, 'limit'):.3f} s"),
        ("... env steps alone", lambda p: f"{med(p, 'env'):.3f} s"),
        ("... forward: torch no_grad / numpy (ours)", lambda p: f"{med(p, 'forward_torch'):.3f} s / "
                                                               f"{med(p, 'forward_numpy'):.3f} s"),
        ("ours: `gsolve train`, launch to exit", lambda p: f"{med(p, 'total'):.2f} s"),
        ("**ours / limit** (wall)", lambda p: f"**{med(p, 'ratio'):.1f}x**"),
        ("ours from env creation / limit", lambda p: f"{med(p, 'run_ratio'):.1f}x"),
        ("ours / limit in CPU seconds", lambda p: f"{med(p, 'cpu_ratio'):.1f}x"),
        *[(PART_TITLES[k], lambda p, k=k: share(p, k)) for k in PARTS],
        ("load average (median; min-max)", lambda p: f"{med(p, 'load'):.1f}; {min(p.parts['load']):.1f}-"
                                                     f"{max(p.parts['load']):.1f}"),
        ("repeats", lambda p: str(len(p.parts["total"]))),
    ]
    lines += ["| " + " | ".join([title, *(fn(p) for p in presets.values())]) + " |" for title, fn in body]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--presets", nargs="+", metavar="ENV:VARIANT", default=list(PRESETS),
                        help=f"presets to measure (default: {' '.join(PRESETS)})")
    parser.add_argument("--seed", type=int, help="one seed for every preset (default: each preset's in PRESETS)")
    parser.add_argument("--repeats", type=int, default=3, help="rounds of ours + limit per preset (default 3)")
    parser.add_argument("--write", metavar="NAME", help=f"write bench/results/NAME.json (the docs render {NAME})")
    args = parser.parse_args(argv)
    unknown = [p for p in args.presets if p not in PRESETS and args.seed is None]
    if unknown:
        raise SystemExit(f"no fixed seed for {', '.join(unknown)}: give --seed (presets with one: {', '.join(PRESETS)})")
    if args.repeats < 1:
        raise SystemExit("--repeats must be at least 1 (3 or more for a median on a shared machine)")
    measured = bench_results.start_measuring(["bench/bench_loop_limit.py", *(argv if argv is not None else sys.argv[1:])])
    t0 = time.perf_counter()
    presets: dict[str, PresetRows] = {}
    for config_id in args.presets:
        seed = args.seed if args.seed is not None else PRESETS[config_id]
        rows, parts = measure(config_id, seed, args.repeats)
        presets[config_id] = PresetRows(arms={"ours": rows}, parts=parts, config_sha=bench_results.config_sha(config_id))
    print(table(presets))
    if args.write:
        results = Results(name=args.write, description=DESCRIPTION,
                          measured=bench_results.finish(measured, time.perf_counter() - t0), presets=presets)
        print(f"wrote {bench_results.write_results(results)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
