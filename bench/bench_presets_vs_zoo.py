"""Env steps and wall time to solve: our PPO, A2C, DQN (and REINFORCE) presets vs SB3 with the RL Zoo's tuning.

One solve definition for both arms, our preset's: the mean return of ``eval_episodes`` deterministic
evaluation episodes (fresh random starts, in parallel) reaches ``reward_threshold``, checked every
``eval_freq`` env steps. Wall time runs from environment creation to the end of the solving
evaluation, evaluations included, imports excluded.

Ours: the preset as shipped (its ``max_env_steps`` is its budget). The Zoo arm: Stable-Baselines3's own
algorithm with the entry for the env in the installed ``rl_zoo3``'s hyperparams file, by our preset's
algo (zoo_algo):

    our preset    SB3 algorithm    the Zoo's file
    ppo           PPO              hyperparams/ppo.yml
    a2c           A2C              hyperparams/a2c.yml
    dqn           DQN              hyperparams/dqn.yml
    reinforce     PPO              hyperparams/ppo.yml  (the Zoo has no REINFORCE)

From the entry: n_envs (1 if unset, as the Zoo trains), n_timesteps as its budget, ``lin_`` schedules,
``normalize`` as VecNormalize, ``policy_kwargs``, and every keyword of that algorithm it sets
(PPO_KWARGS, A2C_KWARGS, DQN_KWARGS: e.g. ``use_sde``/``sde_sample_freq`` for PPO, DQN's replay,
target-update and exploration settings); an entry that sets anything else is refused. SB3's defaults
for the rest; evaluated with ``evaluate_policy`` on ``eval_episodes`` parallel envs (observations
normalised with the training statistics when ``normalize`` is on). Both arms run torch on one thread.

Every (arm, preset, seed) runs in its own subprocess, so neither framework's imports or thread
settings touch the other's; the arms alternate seed by seed, so machine load hits both alike and
the ratios are what to compare on a shared machine.

Pass (PPO, A2C and DQN presets): our median env steps <= the Zoo's median env steps AND Zoo median wall /
our median wall >= 3. Unsolved seeds count against us both ways: ours as infinitely many steps and
seconds, the Zoo's with the steps and seconds it spent (a lower bound, marked ">="). ``--zoo-max-steps``
caps the Zoo arm's budget (its schedules, DQN's exploration included, still run over the Zoo's
``n_timesteps``) where a full Zoo run is too long to repeat: the verdict stays conservative, the Zoo's
figures become lower bounds. REINFORCE presets are compared with the Zoo's PPO for the same env as
information only. (SAC and TD3 presets: bench_sb3_presets.py.)

    .venv/bin/python bench/bench_presets_vs_zoo.py                                  # every preset, seeds 0-4
    .venv/bin/python bench/bench_presets_vs_zoo.py --presets CartPole-v1:ppo --seeds 0 1 2 3 4 5 6 7 8 9
    .venv/bin/python bench/bench_presets_vs_zoo.py --presets Pendulum-v1:ppo --arms zoo   # one arm only
    .venv/bin/python bench/bench_presets_vs_zoo.py --presets LunarLander-v3:ppo --zoo-max-steps 400000
    .venv/bin/python bench/bench_presets_vs_zoo.py --presets CartPole-v1:dqn --seeds 0 1 2 3 4   # vs SB3's DQN
    .venv/bin/python bench/bench_presets_vs_zoo.py --presets LunarLander-v3:dqn --seeds 0 1 2 3 4
    .venv/bin/python bench/bench_presets_vs_zoo.py --presets CartPole-v1:ppo --seeds 10 11 ... --write NAME

``--write NAME`` records the rows, the commit, the machine, the library versions and the load in
bench/results/NAME.json, from which bench/render_tables.py renders the figures in README.md and docs/.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, cast

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_results  # noqa: E402 - a sibling script, not a package

PRESETS = ("CartPole-v1:ppo", "Acrobot-v1:ppo", "Pendulum-v1:ppo", "LunarLander-v3:ppo",
           "LunarLander-v3:ppo_continuous", "CartPole-v1:a2c", "CartPole-v1:dqn", "LunarLander-v3:dqn",
           "CartPole-v1:reinforce", "Acrobot-v1:reinforce")
# Our preset -> the Zoo's key, where it is not the env id (Gymnasium's LunarLander with continuous=True
# is what the Zoo files under LunarLanderContinuous-v3).
ZOO_KEY = {"LunarLander-v3:ppo_continuous": "LunarLanderContinuous-v3"}
# Keywords of the Zoo's entries that SB3's PPO / A2C / DQN take as they are (but for SCHEDULED); SB3's
# default for each one the entry does not set.
PPO_KWARGS = ("learning_rate", "clip_range", "n_steps", "batch_size", "gae_lambda", "gamma", "n_epochs",
              "ent_coef", "vf_coef", "max_grad_norm", "normalize_advantage", "target_kl", "use_sde",
              "sde_sample_freq", "clip_range_vf")
A2C_KWARGS = ("learning_rate", "n_steps", "gae_lambda", "gamma", "ent_coef", "vf_coef", "max_grad_norm",
              "normalize_advantage", "use_rms_prop", "rms_prop_eps", "use_sde", "sde_sample_freq")
DQN_KWARGS = ("learning_rate", "batch_size", "buffer_size", "learning_starts", "gamma", "target_update_interval",
              "train_freq", "gradient_steps", "exploration_fraction", "exploration_final_eps",
              "exploration_initial_eps", "tau", "max_grad_norm", "n_steps")
# The Zoo's file (zoo_algo) -> the keywords above for its SB3 algorithm.
SB3_KWARGS = {"ppo": PPO_KWARGS, "a2c": A2C_KWARGS, "dqn": DQN_KWARGS}
# The keywords the Zoo may write as "lin_X" (rl_zoo3's ExperimentManager._preprocess_schedules).
SCHEDULED = ("learning_rate", "clip_range", "clip_range_vf")
# What the Zoo's entry may hold besides those keywords, and how this script treats it.
HANDLED = {"n_envs", "n_timesteps", "policy", "normalize", "policy_kwargs"}
ARMS = ("ours", "zoo")
WALL_RATIO_TARGET = 3.0


def zoo_algo(config_id: str) -> str:
    """The SB3 algorithm (and the Zoo's hyperparams file) the preset is compared with: the preset's own
    for PPO, A2C and DQN; PPO for REINFORCE (the Zoo has no REINFORCE)."""
    from gymnasium_solver.config import resolve_config

    algo = str(resolve_config(config_id, []).algo)
    if algo == "reinforce":
        return "ppo"
    if algo not in SB3_KWARGS:
        raise SystemExit(f"{config_id} is a {algo} preset: this bench compares {', '.join(SB3_KWARGS)} and "
                         "reinforce presets (bench_sb3_presets.py compares sac and td3)")
    return algo


def zoo_entry(config_id: str, env_id: str) -> dict[str, Any]:
    """The RL Zoo's entry for the preset's env and algorithm (zoo_algo), read from the installed rl_zoo3."""
    return zoo_table_entry(zoo_algo(config_id), ZOO_KEY.get(config_id, env_id), f" (for {config_id})")


def zoo_table_entry(algo: str, key: str, why: str = "") -> dict[str, Any]:
    """The entry ``key`` of the installed rl_zoo3's hyperparams/<algo>.yml, as the Zoo's file writes it;
    SystemExit when there is none or it sets what run_sb3 does not reproduce."""
    import rl_zoo3
    import yaml

    path = Path(rl_zoo3.__file__).parent / "hyperparams" / f"{algo}.yml"
    table = yaml.load(path.read_text(encoding="utf-8"), Loader=yaml.UnsafeLoader)  # noqa: S506 - the Zoo's own file
    if key not in table:
        raise SystemExit(f"{path} has no {key} entry{why}")
    entry = dict(table[key])
    unknown = sorted(set(entry) - HANDLED - set(SB3_KWARGS[algo]))
    if unknown:
        raise SystemExit(f"the Zoo's {key} entry sets {unknown}, which this bench does not reproduce")
    return entry


def schedule(value: Any) -> Any:
    """The Zoo's ``lin_X`` (linear from X to 0 over the budget) as SB3's callable; a number as is."""
    if isinstance(value, str) and value.startswith("lin_"):
        start = float(value[4:])
        return lambda progress_remaining: progress_remaining * start
    return float(value)


def sb3_kwargs(algo: str, zoo: dict[str, Any]) -> dict[str, Any]:
    """The keywords for SB3's ``algo`` from the Zoo's entry: its values, ``lin_`` schedules as SB3's
    callables and ``policy_kwargs`` evaluated as the Zoo does; SB3's defaults for what it does not set."""
    from torch import nn  # noqa: F401 - the Zoo's policy_kwargs strings name nn.ReLU etc.

    kwargs = {k: schedule(zoo[k]) if k in SCHEDULED else zoo[k] for k in SB3_KWARGS[algo] if k in zoo}
    if "policy_kwargs" in zoo:
        kwargs["policy_kwargs"] = eval(zoo["policy_kwargs"]) if isinstance(zoo["policy_kwargs"], str) \
            else zoo["policy_kwargs"]  # noqa: S307 - the Zoo's own file
    return kwargs


def normalize_kwargs(value: Any, gamma: float) -> dict[str, Any] | None:
    """The Zoo's ``normalize`` (true, or a dict as a string) as VecNormalize keywords; None = off."""
    if value in (None, False):
        return None
    kwargs: dict[str, Any] = {"gamma": gamma}
    if isinstance(value, str):
        kwargs |= eval(value)  # noqa: S307 - the Zoo's own file, e.g. "{'norm_obs': True, 'norm_reward': False}"
    return kwargs


# One solve definition for both arms: the first evaluation at the threshold (the Zoo arm has no confirmation episodes).
ZOO_SOLVE = ("confirm_episodes=0",)


def run_ours(config_id: str, seed: int, sets: tuple[str, ...] = ()) -> dict[str, Any]:
    """Our preset on ``seed`` (with ``sets`` on top: ZOO_SOLVE beside the Zoo's arm; the drift gate adds nothing)."""
    import torch

    from gymnasium_solver.config import resolve_config
    from gymnasium_solver.train.training import train

    cfg = resolve_config(config_id, [f"seed={seed}", *sets])
    torch.set_num_threads(cfg.torch_threads)
    with tempfile.TemporaryDirectory() as runs_dir:
        result = train(cfg, Path(runs_dir))
    solved = result.solved_at
    best = result.best_eval.return_mean if result.best_eval else None
    return {"solved": solved is not None, "env_steps": solved.env_steps if solved else result.env_steps,
            "wall_s": solved.wall_seconds if solved else result.wall_seconds, "best_eval": best}


def run_zoo(config_id: str, seed: int, max_steps: int | None = None) -> dict[str, Any]:
    from gymnasium_solver.config import resolve_config

    ours = resolve_config(config_id, [f"seed={seed}"])
    return run_sb3(ours, zoo_algo(config_id), zoo_entry(config_id, ours.env_id), seed, max_steps)


def run_sb3(ours: Any, algo: str, zoo: dict[str, Any], seed: int, max_steps: int | None = None,
            wrapper: Any = None) -> dict[str, Any]:
    """SB3's ``algo`` trained with ``zoo`` (an entry in the Zoo's format) on ``ours.env_id``, evaluated by our
    config's solve definition (its eval_freq, eval_episodes, reward_threshold); ``wrapper`` wraps each env."""
    import torch
    from stable_baselines3 import A2C, DQN, PPO
    from stable_baselines3.common.callbacks import BaseCallback, CallbackList
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.evaluation import evaluate_policy
    from stable_baselines3.common.logger import Logger
    from stable_baselines3.common.vec_env import VecNormalize

    torch.set_num_threads(1)
    assert ours.reward_threshold is not None  # resolve_config fills in the spec's
    threshold = ours.reward_threshold
    gamma = float(zoo.get("gamma", 0.99))
    norm = normalize_kwargs(zoo.get("normalize"), gamma)

    class SolveCallback(BaseCallback):
        """Evaluate every eval_freq env steps (our preset's); stop at the first evaluation that solves."""

        def __init__(self, eval_env: Any, t0: float):
            super().__init__()
            self.eval_env, self.t0, self.next_eval = eval_env, t0, ours.eval_freq
            self.solved_at: tuple[int, float] | None = None
            self.best = -math.inf

        def _on_step(self) -> bool:
            if self.num_timesteps < self.next_eval:
                return True
            self.next_eval += ours.eval_freq
            train_norm = self.model.get_vec_normalize_env()
            if train_norm is not None:
                self.eval_env.obs_rms = train_norm.obs_rms
            returns, _ = evaluate_policy(self.model, self.eval_env, n_eval_episodes=ours.eval_episodes,
                                         deterministic=True, return_episode_rewards=True)
            mean = statistics.fmean(cast("list[float]", returns))  # return_episode_rewards=True: a list
            self.best = max(self.best, mean)
            if mean >= threshold:
                self.solved_at = (self.num_timesteps, time.perf_counter() - self.t0)
                return False
            return True

    t0 = time.perf_counter()
    env = make_vec_env(ours.env_id, n_envs=int(zoo.get("n_envs", 1)), seed=seed, env_kwargs=ours.env_kwargs,
                       wrapper_class=wrapper)
    eval_env = make_vec_env(ours.env_id, n_envs=ours.eval_episodes, seed=seed + 10_000, env_kwargs=ours.env_kwargs,
                            wrapper_class=wrapper)
    if norm is not None:
        env = VecNormalize(env, **norm)
        eval_env = VecNormalize(eval_env, training=False, norm_reward=False, gamma=gamma)
    sb3_class: Any = {"ppo": PPO, "a2c": A2C, "dqn": DQN}[algo]
    model = sb3_class(zoo.get("policy", "MlpPolicy"), env, seed=seed, device="cpu", verbose=0,
                      **sb3_kwargs(algo, zoo))
    # SB3's own logger at verbose=0 writes nothing, but makes a folder in /tmp (SB3-<date>) for every run: this
    # one is the same without the folder.
    model.set_logger(Logger(folder=None, output_formats=[]))
    callback = SolveCallback(eval_env, t0)
    budget = int(float(zoo["n_timesteps"]))
    callbacks: list[BaseCallback] = [callback]
    if max_steps is not None and max_steps < budget:
        # Stop at max_steps; learn() still runs over the Zoo's n_timesteps, so its lin_ schedules are the Zoo's.
        cap = max_steps

        class Cap(BaseCallback):
            def _on_step(self) -> bool:
                return self.num_timesteps < cap

        callbacks.append(Cap())
    model.learn(total_timesteps=budget, callback=CallbackList(callbacks))
    solved = callback.solved_at
    return {"solved": solved is not None, "env_steps": solved[0] if solved else model.num_timesteps,
            "wall_s": solved[1] if solved else time.perf_counter() - t0, "best_eval": callback.best}


def run_arm(arm: str, config_id: str, seed: int, zoo_max_steps: int | None) -> dict[str, Any]:
    """One training in a fresh subprocess; its result line."""
    cmd = [sys.executable, __file__, "--worker", arm, "--presets", config_id, "--seeds", str(seed)]
    if zoo_max_steps is not None:
        cmd += ["--zoo-max-steps", str(zoo_max_steps)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not lines:
        raise SystemExit(f"{arm} {config_id} seed {seed} failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
    return dict(json.loads(lines[-1]))


def median(rows: list[dict[str, Any]], key: str, unsolved_as_spent: bool) -> float:
    """Median over seeds; an unsolved seed counts as infinitely many steps and seconds, or (for the
    Zoo: pessimistic for us) as what it spent, a lower bound."""
    return statistics.median(r[key] if r["solved"] or unsolved_as_spent else math.inf for r in rows)


def cell(r: dict[str, Any] | None) -> str:
    if r is None:
        return f"{'-':>28}"
    best = f" (best {r['best_eval']:.0f})" if not r["solved"] and r["best_eval"] is not None else ""
    return f"{'yes' if r['solved'] else 'NO':>3} {r['env_steps']:>9,} {r['wall_s']:>7.2f}{best:>7}"


def report(config_id: str, algo: str, rows: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """Print one preset's table, medians, ratios and verdict; return the summary."""
    ours, zoo = rows.get("ours", []), rows.get("zoo", [])
    against = zoo_algo(config_id) if zoo else "-"  # ours alone: any preset, sac and td3 included
    print(f"\n{config_id}: seed | ours solved env steps wall s | Zoo {against.upper()} solved env "
          "steps wall s")
    for i in range(max(len(ours), len(zoo))):
        o, z = (ours[i] if i < len(ours) else None), (zoo[i] if i < len(zoo) else None)
        print(f"{(o or z or {}).get('seed', '?'):>4} | {cell(o)} | {cell(z)}")
    summary: dict[str, Any] = {"preset": config_id}
    for arm, arm_rows in rows.items():
        if arm_rows:
            spent = arm == "zoo"
            lower = spent and not all(r["solved"] for r in arm_rows)
            summary[arm] = {"solved": sum(r["solved"] for r in arm_rows), "seeds": len(arm_rows),
                            "median_env_steps": median(arm_rows, "env_steps", spent),
                            "median_wall_s": median(arm_rows, "wall_s", spent), "lower_bound": lower}
            ge = ">= " if lower else ""
            print(f"  {arm}: solved {summary[arm]['solved']}/{len(arm_rows)}, median env steps "
                  f"{ge}{summary[arm]['median_env_steps']:,.0f}, median wall {ge}{summary[arm]['median_wall_s']:.2f} s")
    if ours and zoo:
        steps_ratio = summary["zoo"]["median_env_steps"] / summary["ours"]["median_env_steps"]
        wall_ratio = summary["zoo"]["median_wall_s"] / summary["ours"]["median_wall_s"]
        passed = steps_ratio >= 1.0 and wall_ratio >= WALL_RATIO_TARGET
        vs = f"vs SB3's {against.upper()} with the Zoo's {against}.yml"
        verdict = (f"info only, {vs} (the Zoo has no REINFORCE)" if algo not in SB3_KWARGS
                   else f"{'PASS' if passed else 'FAIL'} {vs}")
        if summary["zoo"]["lower_bound"]:
            verdict += " (the Zoo's medians are lower bounds: unsolved Zoo seeds count with what they spent)"
        summary |= {"steps_ratio": steps_ratio, "wall_ratio": wall_ratio, "verdict": verdict}
        ge = ">= " if summary["zoo"]["lower_bound"] else ""
        print(f"  Zoo median env steps / ours = {ge}{steps_ratio:.2f} (pass >= 1), Zoo median wall / ours = {ge}"
              f"{wall_ratio:.2f} (pass >= {WALL_RATIO_TARGET:g}): {verdict}")
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--presets", nargs="+", default=list(PRESETS), metavar="ENV:VARIANT")
    parser.add_argument("--seeds", type=int, nargs="+", default=list(range(5)))
    parser.add_argument("--arms", nargs="+", choices=ARMS, default=list(ARMS))
    parser.add_argument("--zoo-max-steps", type=int, default=None,
                        help="stop the Zoo arm after this many env steps (default: its n_timesteps)")
    parser.add_argument("--json", type=Path, help="also write the per-seed rows and summaries here")
    parser.add_argument("--write", metavar="NAME", help="record the rows in bench/results/NAME.json (README and "
                        "docs/ render their figures from it: bench/render_tables.py)")
    parser.add_argument("--worker", choices=ARMS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        config_id, seed = args.presets[0], args.seeds[0]
        result = run_ours(config_id, seed, ZOO_SOLVE) if args.worker == "ours" else run_zoo(config_id, seed, args.zoo_max_steps)
        print(json.dumps({"arm": args.worker, "seed": seed, **result}), flush=True)
        return

    from gymnasium_solver.config import resolve_config

    # Every preset's settings, and its Zoo entry when the Zoo arm runs, before the first run: a preset this bench
    # cannot compare must not end a long run after its rows were measured, unrecorded.
    for config_id in args.presets:
        env_id = resolve_config(config_id, []).env_id
        if "zoo" in args.arms:
            zoo_entry(config_id, env_id)
    measured = bench_results.start_measuring()
    summaries, all_rows = [], {}
    for config_id in args.presets:
        cfg = resolve_config(config_id, [])
        print(f"\n{config_id}: solved = mean of {cfg.eval_episodes} deterministic eval episodes >= "
              f"{cfg.reward_threshold:g}, evaluated every {cfg.eval_freq:,} env steps (both arms)", flush=True)
        rows: dict[str, list[dict[str, Any]]] = {arm: [] for arm in args.arms}
        for seed in args.seeds:
            for arm in args.arms:
                r = run_arm(arm, config_id, seed, args.zoo_max_steps)
                rows[arm].append(r)
                print(f"  seed {seed} {arm:>4}: {cell(r)}", flush=True)
        summaries.append(report(config_id, str(cfg.algo), rows))
        all_rows[config_id] = rows
    if args.json:
        args.json.write_text(json.dumps({"rows": all_rows, "summaries": summaries}, indent=1, default=str))
    if args.write:
        write(args.write, bench_results.finish(measured), all_rows)


def write(name: str, measured: bench_results.Measured, all_rows: dict[str, dict[str, list[dict[str, Any]]]],
          directory: Path = bench_results.RESULTS_DIR) -> None:
    """Record every preset's rows per arm in bench/results/<name>.json."""
    from gymnasium_solver.config import resolve_config

    with_zoo = any("zoo" in rows for rows in all_rows.values())
    what = "our preset and SB3 with the RL Zoo's settings, arms alternating seed by seed" if with_zoo else "our preset"
    description = f"{', '.join(all_rows)}: {what} (bench/bench_presets_vs_zoo.py)"

    presets = {}
    for config_id, rows in all_rows.items():
        arms = {arm: [bench_results.Row(seed=r["seed"], solved=r["solved"], env_steps=r["env_steps"],
                                        wall_s=round(r["wall_s"], 3)) for r in arm_rows]
                for arm, arm_rows in rows.items()}
        presets[config_id] = bench_results.PresetRows(arms=arms, budget=resolve_config(config_id, []).max_env_steps,
                                                      config_sha=bench_results.config_sha(config_id),
                                                      config=bench_results.resolved_config(config_id))
    path = bench_results.write_results(bench_results.Results(name=name, description=description,
                                                             measured=measured, presets=presets), directory)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
