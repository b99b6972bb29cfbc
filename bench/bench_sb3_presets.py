"""Our Stable-Baselines3 presets (SAC, TD3) vs the RL Zoo's tuned hyperparameters, side by side.

Both arms train the same SB3 algorithm through our trainer (gymnasium_solver/agents/sb3.py), so the solve definition
is the same: our deterministic evaluation every ``eval_freq`` env steps (the preset's), stop at the
first evaluation whose mean return reaches the threshold. The Zoo arm is SB3's defaults plus the
RL Zoo's hyperparameters for the env (rl_zoo3's hyperparams/<algo>.yml; its ``n_timesteps`` is the
Zoo arm's budget, as the Zoo trains). The arms alternate seed by seed in one process, so machine load
hits both alike. Wall time: from environment creation to the end of the solving evaluation
(training.TrainResult.solved_at).

Our A2C and DQN presets are our own implementations, not SB3's: bench_presets_vs_zoo.py compares
them with SB3's own A2C and DQN on the Zoo's settings.

    .venv/bin/python bench/bench_sb3_presets.py                       # every pair, seeds 0-2
    .venv/bin/python bench/bench_sb3_presets.py --only Pendulum-v1:sac --seeds 0 1 2 3 4
    .venv/bin/python bench/bench_sb3_presets.py --only Pendulum-v1:sac --seeds 1000 1001 ... --write NAME

``--write NAME`` records the rows, the commit, the machine, the library versions and the load in
bench/results/NAME.json (bench_results.py's format, bench_presets_vs_zoo.py's arms), from which
bench/render_tables.py renders the figures in README.md and docs/.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_results  # noqa: E402 - a sibling script, not a package

from gymnasium_solver.config import build_config, resolve_config  # noqa: E402
from gymnasium_solver.train.training import train  # noqa: E402

# Our preset -> (the Zoo's algorithm file, the Zoo's env key). CartPole-v1:a2c and the DQN presets
# (CartPole-v1, LunarLander-v3) are our own A2C and DQN now: bench_presets_vs_zoo.py compares them with SB3's.
PAIRS = {
    "Pendulum-v1:sac": ("sac", "Pendulum-v1"),
    "Pendulum-v1:td3": ("td3", "Pendulum-v1"),
}
# Keys of the Zoo's files that are ours under the same name.
SAME_NAME = ("learning_rate", "batch_size", "buffer_size", "learning_starts", "gamma", "tau", "train_freq",
             "gradient_steps", "target_update_interval", "exploration_fraction", "exploration_final_eps",
             "exploration_initial_eps", "policy_delay", "target_policy_noise", "target_noise_clip", "n_envs",
             "n_steps", "ent_coef", "gae_lambda", "vf_coef", "max_grad_norm")
# The Zoo's names for ours.
RENAMED = {"normalize_advantage": "normalize_advantages"}
# SB3's default networks where the Zoo does not set one (SAC [256, 256]; TD3 [400, 300]).
SB3_NET_ARCH = {"sac": [256, 256], "td3": [400, 300]}
SB3_ACTIVATION: dict[str, str] = {}
# What we keep from our preset in the Zoo arm: how it is judged, never how it learns.
JUDGED_BY = ("eval_freq", "eval_episodes", "confirm_episodes", "reward_threshold", "iteration_steps", "torch_threads")


def zoo_hyperparams(algo: str, env_id: str) -> dict[str, Any]:
    """The RL Zoo's entry for ``env_id`` in its hyperparams/<algo>.yml, read from the installed rl_zoo3."""
    found = importlib.util.find_spec("rl_zoo3")  # its files only: importing rl_zoo3 itself takes seconds
    if found is None or found.origin is None:
        raise SystemExit("rl_zoo3 is not installed: pip install -e '.[bench]'")
    path = Path(found.origin).parent / "hyperparams" / f"{algo}.yml"
    table = yaml.load(path.read_text(encoding="utf-8"), Loader=yaml.UnsafeLoader)  # noqa: S506 - the Zoo's own file
    if env_id not in table:
        raise SystemExit(f"{path} has no {env_id} entry")
    return dict(table[env_id])


def zoo_config(config_id: str, seed: int) -> Any:
    """Our config for the Zoo's settings: SB3's defaults, the Zoo's values, our judging keys."""
    ours = resolve_config(config_id, [f"seed={seed}"])
    algo, zoo_env = PAIRS[config_id]
    zoo = zoo_hyperparams(algo, zoo_env)
    # The Zoo trains on one env unless its entry sets n_envs (rl_zoo3 exp_manager: hyperparams.get("n_envs", 1)).
    data: dict[str, Any] = {"env_id": ours.env_id, "variant": f"zoo-{algo}", "algo": algo, "seed": seed,
                            "max_env_steps": int(float(zoo["n_timesteps"])),
                            "activation": SB3_ACTIVATION.get(algo, "relu"),
                            "hidden_sizes": SB3_NET_ARCH[algo], "n_envs": 1}
    data |= {k: getattr(ours, k) for k in JUDGED_BY}
    data |= {k: zoo[k] for k in SAME_NAME if k in zoo}
    data |= {ours_key: zoo[k] for k, ours_key in RENAMED.items() if k in zoo}
    if isinstance(data.get("learning_rate"), str):  # the Zoo's "lin_X" schedules: not in our pairs yet
        raise SystemExit(f"{algo} {zoo_env}: the Zoo's learning_rate {data['learning_rate']!r} is a schedule; map it first")
    net = re.search(r"net_arch=\[([0-9, ]+)\]", str(zoo.get("policy_kwargs", "")))
    if net:
        data["hidden_sizes"] = [int(x) for x in net.group(1).split(",")]
    if zoo.get("noise_type") == "normal":
        assert ours.env_id == "Pendulum-v1"  # our noise is in action half-ranges: Pendulum's is 2
        data["action_noise_std"] = float(zoo["noise_std"]) / 2.0
    elif algo == "td3":
        data["action_noise_std"] = 0.0
    return build_config(data, f"Zoo {algo} {zoo_env}")


def run(cfg: Any) -> dict[str, Any]:
    """One training of ``cfg``. Its figure (``steps``, ``wall_s``) is where it solved, or, when it did not
    solve, everything it spent (its whole budget): never to be read as a time to solve."""
    with tempfile.TemporaryDirectory() as runs_dir:
        result = train(cfg, Path(runs_dir))
    s = result.solved_at
    return {"solved": result.solved, "steps": s.env_steps if s else result.env_steps,
            "wall_s": s.wall_seconds if s else result.wall_seconds, "budget": cfg.max_env_steps}


def describe(config_id: str, arm: str, seed: int, r: dict[str, Any]) -> str:
    how = (f"solved at {r['steps']} env steps, {r['wall_s']:.1f} s" if r["solved"] else
           f"NOT solved within budget: {r['steps']} env steps ({r['wall_s']:.1f} s)")
    return f"{config_id} {arm:4} seed {seed}: {how}"


def summarise(config_id: str, rows: dict[str, list[dict[str, Any]]]) -> tuple[dict[str, Any], str]:
    """Medians per arm over the seeds (unsolved seeds count with their whole budget) and the verdict line."""
    summary: dict[str, Any] = {}
    for arm, results in rows.items():
        if results:
            summary[arm] = {"solved": f"{sum(r['solved'] for r in results)}/{len(results)}",
                            "median_env_steps": statistics.median(r["steps"] for r in results),
                            "median_wall_s": round(statistics.median(r["wall_s"] for r in results), 1)}
    line = f"== {config_id}: " + " | ".join(f"{arm} {s}" for arm, s in summary.items())
    if len(summary) == 2:
        o, z = summary["ours"], summary["zoo"]
        partly = "" if all(r["solved"] for r in rows["zoo"]) else " (zoo figures include unsolved seeds at their whole budget)"
        steps = o["median_env_steps"] / z["median_env_steps"]
        wall = o["median_wall_s"] / z["median_wall_s"]
        solved = all(r["solved"] for r in rows["ours"]) and steps <= 1
        line += (f"; steps ours/zoo = {steps:.2f} (target <= 1), wall ours/zoo = {wall:.2f}{partly}: "
                 f"half the wall time {'MET' if solved and wall <= 0.5 else 'MISSED'}, "
                 f"3x faster {'MET' if solved and wall <= 1 / 3 else 'MISSED'}")
    return summary, line


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", choices=list(PAIRS), default=list(PAIRS))
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--arms", nargs="+", choices=["ours", "zoo"], default=["ours", "zoo"],
                        help="train only these arms (e.g. to time one arm while tuning); the comparison needs both")
    parser.add_argument("--json", type=Path, help="also write the per-seed results here")
    parser.add_argument("--write", metavar="NAME", help="record the rows in bench/results/NAME.json (README and "
                        "docs/ render their figures from it: bench/render_tables.py)")
    args = parser.parse_args()
    measured = bench_results.start_measuring()
    everything: dict[str, Any] = {}
    for config_id in args.only:
        rows: dict[str, list[dict[str, Any]]] = {arm: [] for arm in args.arms}
        for seed in args.seeds:  # alternate the arms so that load hits both alike
            for arm in args.arms:
                cfg = resolve_config(config_id, [f"seed={seed}"]) if arm == "ours" else zoo_config(config_id, seed)
                rows[arm].append(run(cfg))
                print(describe(config_id, arm, seed, rows[arm][-1]), flush=True)
        summary, line = summarise(config_id, rows)
        print(line, flush=True)
        everything[config_id] = {"seeds": args.seeds, "summary": summary, "runs": rows}
    if args.json:
        args.json.write_text(json.dumps(everything, indent=1), encoding="utf-8")
    if args.write:
        write(args.write, bench_results.finish(measured), everything)


def write(name: str, measured: bench_results.Measured, everything: dict[str, Any],
          directory: Path = bench_results.RESULTS_DIR) -> Path:
    """Record every preset's rows per arm (one per seed, in seed order) in ``<directory>/<name>.json``."""
    with_zoo = any("zoo" in e["runs"] for e in everything.values())
    what = ("our preset and SB3 with the RL Zoo's settings through our trainer, arms alternating seed by seed"
            if with_zoo else "our preset")
    presets = {}
    for config_id, e in everything.items():
        arms = {arm: [bench_results.Row(seed=seed, solved=r["solved"], env_steps=r["steps"], wall_s=round(r["wall_s"], 3))
                      for seed, r in zip(e["seeds"], runs, strict=True)]
                for arm, runs in e["runs"].items()}
        presets[config_id] = bench_results.PresetRows(arms=arms, budget=resolve_config(config_id, []).max_env_steps,
                                                      config_sha=bench_results.config_sha(config_id))
    description = f"{', '.join(everything)}: {what} (bench/bench_sb3_presets.py)"
    path = bench_results.write_results(bench_results.Results(name=name, description=description,
                                                             measured=measured, presets=presets), directory)
    print(f"wrote {path}", flush=True)
    return path


if __name__ == "__main__":
    main()
