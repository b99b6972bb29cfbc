"""`gsolve train ENV_ID` with no settings vs rl_zoo3's hyperparameters in SB3, on environments without a preset (issue 22).

For each ENV_ID (or ENV_ID:ALGO) and seed, the two arms alternate, each in its own subprocess:

- ours: ``gsolve train ENV_ID --seed S`` exactly as a user types it: whatever the settings chain picks
  (the RL Zoo's entry for the env and algorithm, else gsolve's defaults), read back from the run
  folder's run.json (``config_origin.settings``: ``zoo`` or ``default``);
- the Zoo's: Stable-Baselines3's own algorithm trained with what rl_zoo3 would pass it. Where the Zoo
  has an entry (matched by name for another version, as the chain does: InvertedPendulum-v2 for -v5),
  that entry, reproduced by bench_presets_vs_zoo.run_sb3 (n_envs, ``normalize`` as VecNormalize,
  ``lin_`` schedules, policy_kwargs, every keyword of the algorithm; anything else refused). Where it
  has none, our resolved config written as a Zoo entry (``zoo_entry_from_config``: what rl_zoo3's
  ``-params`` / ``--conf-file`` would take), so both arms train the same hyperparameters; the
  results say which (``source``). Dict observations with text entries (MiniGrid's ``mission``) reach
  SB3 as ours sees them: the text entries dropped, the rest flattened (``DROP_TEXT_AND_FLATTEN``).

One solve definition for both arms, the resolved config's: the mean return of ``eval_episodes``
deterministic evaluation episodes reaches ``reward_threshold``, checked every ``eval_freq`` env steps,
within the Zoo's ``n_timesteps`` (ours: ``max_env_steps``, which the chain takes from it). An env with
no threshold in its Gymnasium spec takes the one in THRESHOLDS (the reason beside it) or
``--threshold ENV_ID=VALUE``, given to both arms (ours as ``--set reward_threshold=VALUE``, which
changes when a run stops, not how it trains). Wall seconds run from environment creation to the end of
the solving evaluation in both arms (imports excluded; bench_presets_vs_zoo.py's definition);
``process_s`` is the whole subprocess, imports and Python start included. SB3 runs torch on one
thread; ours on the config's ``torch_threads``.

    .venv/bin/python bench/bench_any_env.py MountainCarContinuous-v0 Taxi-v4 --seeds 0 1 2 --write any_env
    .venv/bin/python bench/bench_any_env.py MiniGrid-Empty-5x5-v0 --env-package minigrid --write any_env_2
    .venv/bin/python bench/bench_any_env.py Acrobot-v1:a2c --arms ours       # one arm only

``--estimate STEPS`` runs only the Zoo's arm on the first seed for STEPS env steps (its schedules still over the
Zoo's n_timesteps): its env steps per second, recorded, estimate what a full side-by-side run would cost, for
the envs this shared machine cannot measure in a session (docs/benchmarks.md says which and why).

    .venv/bin/python bench/bench_any_env.py MountainCar-v0 InvertedDoublePendulum-v5 --estimate 20000 --write any_env_estimates

``--write NAME`` records the rows (per seed: solved, env steps, wall seconds, our settings' source), the
commit, the machine, the library versions and the load in bench/results/NAME.json, which holds one bench run
(a NAME already there is replaced: give a re-run a new NAME, e.g. any_env_3); bench/render_tables.py renders
docs/benchmarks.md's ``any-env`` block, each env from the newest run that measured it.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_presets_vs_zoo as shared  # noqa: E402 - a sibling script, not a package
import bench_results  # noqa: E402 - a sibling script, not a package

ARMS = ("ours", "zoo")
GSOLVE = Path(sys.executable).with_name("gsolve")
# Thresholds for envs whose Gymnasium spec has none and for which the Zoo publishes no score: id -> (value, why).
THRESHOLDS: dict[str, tuple[float, str]] = {
    "MiniGrid-Empty-5x5-v0": (0.9, "reaching the goal within 11 steps (return 1 - 0.9 * steps / 100; the shortest "
                                   "path is 5 steps, 0.955); no threshold in its spec and no Zoo entry or score"),
    "CliffWalking-v1": (-13.0, "the shortest safe path's return (13 steps of -1); no threshold in its spec and no Zoo "
                               "entry or score"),
}
# Where our config's keys go in a Zoo entry for SB3's PPO / A2C (zoo_entry_from_config); SB3's keyword names.
TO_ZOO = {"n_envs": "n_envs", "n_steps": "n_steps", "batch_size": "batch_size", "n_epochs": "n_epochs",
          "gamma": "gamma", "gae_lambda": "gae_lambda", "learning_rate": "learning_rate", "clip_range": "clip_range",
          "clip_range_vf": "clip_range_vf", "ent_coef": "ent_coef", "vf_coef": "vf_coef",
          "max_grad_norm": "max_grad_norm", "normalize_advantages": "normalize_advantage", "target_kl": "target_kl",
          "use_sde": "use_sde", "sde_sample_freq": "sde_sample_freq"}
# DQN's keys are SB3's own names (its DQN takes every one; our n_steps is its n-step return, as SB3's).
TO_ZOO_BY_ALGO = {"ppo": TO_ZOO, "a2c": TO_ZOO, "dqn": {"n_envs": "n_envs"} | {k: k for k in shared.DQN_KWARGS}}
ACTIVATIONS = {"tanh": "nn.Tanh", "relu": "nn.ReLU"}


class Target(NamedTuple):
    """One environment to bench: the id as given, the resolved algorithm, threshold, budget and settings' source."""

    config_id: str
    env_id: str
    algo: str
    source: str  # "zoo" or "default": where the chain took ours from
    where: str
    threshold: float
    threshold_note: str  # "" when the env's spec sets it
    budget: int
    eval_freq: int
    eval_episodes: int


class Outcome(NamedTuple):
    """One arm's run on one seed, as recorded."""

    seed: int
    solved: bool
    env_steps: int
    wall_s: float
    process_s: float
    best_eval: float | None
    source: str | None


def parse_thresholds(items: Sequence[str]) -> dict[str, float]:
    """``ENV_ID=VALUE`` pairs -> {env id: threshold}; SystemExit with one sentence for a malformed one."""
    out: dict[str, float] = {}
    for item in items:
        env_id, sep, value = item.partition("=")
        try:
            number = float(value)
        except ValueError:
            number = math.nan
        if not sep or not env_id or not math.isfinite(number):
            raise SystemExit(f"--threshold takes ENV_ID=NUMBER (e.g. CliffWalking-v1=-13), got {item!r}")
        out[env_id] = number
    return out


def threshold_overrides(env_id: str, spec_threshold: float | None, given: dict[str, float]) -> tuple[list[str], str]:
    """The ``--set`` both arms resolve with, and why: ``--threshold`` first, else the spec's (nothing to set),
    else THRESHOLDS; SystemExit naming the flag when none of them has one."""
    if env_id in given:
        spec = f"; its spec's is {spec_threshold:g}" if spec_threshold is not None else ""
        return [f"reward_threshold={given[env_id]!r}"], f"given with --threshold{spec}"
    if spec_threshold is not None:
        return [], ""
    if env_id in THRESHOLDS:
        value, why = THRESHOLDS[env_id]
        return [f"reward_threshold={value!r}"], why
    raise SystemExit(f"{env_id} has no reward threshold in its spec and none in THRESHOLDS: give one with "
                     f"--threshold {env_id}=VALUE")


def resolve_target(config_id: str, packages: Sequence[str], given: dict[str, float]) -> Target:
    """The environment as both arms will train it; SystemExit with gsolve's own sentence for an unknown id, a
    missing extra, an algorithm the spaces refuse, or an env that has a preset (bench_presets_vs_zoo.py's)."""
    from gymnasium_solver.config import env_modules
    from gymnasium_solver.config.chain import check_trainable, resolve_with_origin
    from gymnasium_solver.config.model import ConfigError

    try:
        env_modules.grant_packages(packages)
        first = resolve_with_origin(config_id, [])
        extra, note = threshold_overrides(first.config.env_id, first.config.reward_threshold, given)
        resolved = resolve_with_origin(config_id, extra) if extra else first
        check_trainable(resolved.config)
    except (ConfigError, env_modules.EnvModuleError) as exc:
        raise SystemExit(f"{config_id}: {exc}") from None
    cfg = resolved.config
    if first.origin.settings == "preset":
        raise SystemExit(f"{config_id} trains our preset ({first.origin.where}): this bench measures environments "
                         "without one; bench/bench_presets_vs_zoo.py compares presets with the Zoo")
    if first.origin.settings == "default" and cfg.algo.value not in TO_ZOO_BY_ALGO:
        raise SystemExit(f"{config_id}: with gsolve's defaults for {cfg.algo.value} there is no Zoo entry to compare "
                         f"with, and this bench writes ours as one for {', '.join(TO_ZOO_BY_ALGO)} only")
    assert cfg.reward_threshold is not None
    return Target(config_id, cfg.env_id, cfg.algo.value, first.origin.settings, first.origin.where,
                  float(cfg.reward_threshold), note, cfg.max_env_steps, cfg.eval_freq, cfg.eval_episodes)


def zoo_entry_from_config(cfg: Any) -> dict[str, Any]:
    """Our resolved PPO / A2C / DQN config as an entry in the Zoo's format (what rl_zoo3's ``-params`` would pass):
    every key that SB3 takes under another name, the network as ``policy_kwargs``, a schedule to 0 as
    ``lin_X``. SystemExit for a setting SB3 cannot be given (a schedule that does not end at 0)."""
    data = cfg.model_dump(mode="json")
    entry: dict[str, Any] = {"policy": "MlpPolicy", "n_timesteps": cfg.max_env_steps,
                             "normalize": bool(cfg.normalize_observations) and "{'norm_obs': True, 'norm_reward': False}"}
    for ours, theirs in TO_ZOO_BY_ALGO[cfg.algo.value].items():
        if ours not in data or data[ours] is None:
            continue
        value = data[ours]
        if isinstance(value, dict):
            if value.get("end") != 0:
                raise SystemExit(f"{cfg.env_id}: {ours} goes from {value['start']} to {value['end']}; the Zoo's "
                                 "schedules (lin_X) end at 0")
            value = f"lin_{value['start']}"
        entry[theirs] = value
    policy: dict[str, Any] = {"net_arch": list(cfg.hidden_sizes), "activation_fn": ACTIVATIONS[cfg.activation]}
    if cfg.algo.value != "dqn":  # SB3's QNetwork has no action noise and no orthogonal initialisation
        policy |= {"log_std_init": cfg.log_std_init, "ortho_init": cfg.ortho_init}
    entry["policy_kwargs"] = "dict(" + ", ".join(f"{k}={v}" for k, v in policy.items()) + ")"
    unknown = sorted(set(entry) - shared.HANDLED - set(shared.SB3_KWARGS[cfg.algo.value]))
    if unknown:
        raise SystemExit(f"{cfg.env_id}: {unknown} have no SB3 keyword in this bench")
    return entry


def drop_text_and_flatten(env: Any) -> Any:
    """A Dict observation as our envs give it to the network: text entries dropped, the rest flattened."""
    import gymnasium as gym

    space = env.observation_space
    if not isinstance(space, gym.spaces.Dict):
        return env
    kept = [k for k, s in space.spaces.items() if not isinstance(s, gym.spaces.Text)
            and type(s).__name__ != "MissionSpace"]
    return gym.wrappers.FlattenObservation(gym.wrappers.FilterObservation(env, kept))


def run_zoo_arm(target: Target, seed: int, max_steps: int | None = None) -> dict[str, Any]:
    """The Zoo's arm in this (worker) process: SB3 with the Zoo's entry, else with ours as one."""
    import gymnasium as gym

    from gymnasium_solver.config import resolve_config
    from gymnasium_solver.config.zoo import zoo_entry

    cfg = resolve_config(target.config_id, [f"seed={seed}", *threshold_set(target)])
    found = zoo_entry(target.env_id, target.algo, by_name=True) if target.source == "zoo" else None
    entry = shared.zoo_table_entry(target.algo, found.env_id) if found else zoo_entry_from_config(cfg)
    space = gym.make(cfg.env_id, **cfg.env_kwargs).observation_space
    wrapper = drop_text_and_flatten if isinstance(space, gym.spaces.Dict) else None
    out = shared.run_sb3(cfg, target.algo, entry, seed, max_steps, wrapper=wrapper)
    return {**out, "source": f"the Zoo's {found.env_id} entry" if found else "ours, as a Zoo entry"}


def ours_command(target: Target, seed: int, runs_dir: Path, packages: Sequence[str]) -> list[str]:
    """``gsolve train ENV --seed S``, with only what the bench needs on top: where runs go, no bar, the
    threshold where the spec has none, the packages that register the id, and the Zoo arm's solve definition (the
    first evaluation at the threshold: no confirmation episodes)."""
    cmd = [str(GSOLVE), "train", target.config_id, "--seed", str(seed), "--runs-dir", str(runs_dir), "--quiet",
           "--no-fail"]
    for pkg in packages:
        cmd += ["--env-package", pkg]
    return [*cmd, "--set", *threshold_set(target), "confirm_episodes=0"]


def threshold_set(target: Target) -> list[str]:
    """What both arms add to the settings: the threshold, where the env's spec has none."""
    return [f"reward_threshold={target.threshold!r}"] if target.threshold_note else []


def outcome_from_run(run: dict[str, Any], seed: int, process_s: float) -> Outcome:
    """Our arm's record from its run.json: solved at which env steps and wall seconds, else what it spent."""
    solved = run.get("solved_at")
    best = (run.get("best_eval") or {}).get("return_mean")
    progress = run.get("progress") or {}
    return Outcome(seed=seed, solved=solved is not None,
                   env_steps=int(solved["env_steps"] if solved else progress.get("env_steps", 0)),
                   wall_s=float(solved["wall_seconds"] if solved else progress.get("wall_seconds", 0.0)),
                   process_s=process_s, best_eval=best, source=(run.get("config_origin") or {}).get("settings"))


def run_ours(target: Target, seed: int, packages: Sequence[str]) -> Outcome:
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        proc = subprocess.run(ours_command(target, seed, Path(tmp), packages), capture_output=True, text=True)
        process_s = time.perf_counter() - t0
        runs = sorted(Path(tmp).glob("*/run.json"))
        if proc.returncode != 0 or len(runs) != 1:
            raise SystemExit(f"gsolve train {target.config_id} --seed {seed} failed (exit {proc.returncode}): "
                             f"{proc.stderr.strip()[-2000:]}")
        return outcome_from_run(json.loads(runs[0].read_text(encoding="utf-8")), seed, process_s)


def run_zoo(target: Target, seed: int, packages: Sequence[str], thresholds: Sequence[str],
            max_steps: int | None = None) -> Outcome:
    cmd = [sys.executable, __file__, target.config_id, "--worker", "--seeds", str(seed)]
    cmd += ["--estimate", str(max_steps)] if max_steps is not None else []
    cmd += [x for pkg in packages for x in ("--env-package", pkg)]
    cmd += [x for t in thresholds for x in ("--threshold", t)]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    process_s = time.perf_counter() - t0
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not lines:
        raise SystemExit(f"the Zoo's arm on {target.config_id} seed {seed} failed (exit {proc.returncode}): "
                         f"{proc.stderr.strip()[-2000:]}")
    r = json.loads(lines[-1])
    best = r["best_eval"] if r["best_eval"] is not None and math.isfinite(r["best_eval"]) else None
    return Outcome(seed=seed, solved=r["solved"], env_steps=int(r["env_steps"]), wall_s=float(r["wall_s"]),
                   process_s=process_s, best_eval=best, source=r["source"])


# ---------------------------------------------------------------------------------------------
# Summaries and the results file
# ---------------------------------------------------------------------------------------------
class ArmSummary(NamedTuple):
    solved: int
    seeds: int
    median_env_steps: float
    median_wall_s: float


def summarise(rows: Sequence[Outcome]) -> ArmSummary:
    """Medians over seeds; an unsolved seed counts with what it spent (its budget's steps and seconds), so a
    median with an unsolved seed in it is a lower bound and ``solved`` says how many did."""
    if not rows:
        raise ValueError("no rows")
    return ArmSummary(sum(r.solved for r in rows), len(rows), statistics.median(r.env_steps for r in rows),
                      statistics.median(r.wall_s for r in rows))


def cell(r: Outcome) -> str:
    best = f" (best {r.best_eval:.3g})" if not r.solved and r.best_eval is not None else ""
    return f"{'yes' if r.solved else 'NO':>3} {r.env_steps:>9,} {r.wall_s:>8.1f}s{best}"


def to_rows(rows: Sequence[Outcome]) -> list[bench_results.Row]:
    return [bench_results.Row(seed=r.seed, solved=r.solved, env_steps=r.env_steps, wall_s=round(r.wall_s, 3),
                              process_s=round(r.process_s, 3), source=r.source) for r in rows]


def record(target: Target, rows: dict[str, list[Outcome]]) -> bench_results.PresetRows:
    return bench_results.PresetRows(arms={arm: to_rows(r) for arm, r in rows.items() if r}, budget=target.budget,
                                    threshold=target.threshold, threshold_note=target.threshold_note or None,
                                    settings=f"{target.source}: {target.where}")


def write(name: str, measured: bench_results.Measured, records: dict[str, bench_results.PresetRows],
          directory: Path = bench_results.RESULTS_DIR) -> Path:
    """Record the envs' rows in ``<directory>/<name>.json`` (replaced: every env in it from this one run)."""
    description = ("gsolve train ENV_ID with no settings vs SB3 with the RL Zoo's hyperparameters (or ours as a Zoo "
                   "entry where it has none), arms alternating seed by seed (bench/bench_any_env.py)")
    return bench_results.write_results(bench_results.Results(name=name, description=description, measured=measured,
                                                             presets=records), directory)


def build_parser() -> argparse.ArgumentParser:
    """The bench's command line; bench/any_env_drift.py reads a recorded run's command back with it."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("envs", nargs="+", metavar="ENV_ID[:ALGO]")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--arms", nargs="+", choices=ARMS, default=list(ARMS))
    parser.add_argument("--env-package", action="append", default=[], metavar="PKG",
                        help="import PKG (it registers ids, e.g. minigrid) in both arms; repeatable")
    parser.add_argument("--threshold", action="append", default=[], metavar="ENV_ID=VALUE",
                        help="the solve threshold for an env whose spec has none (both arms)")
    parser.add_argument("--estimate", type=int, metavar="STEPS", help="for envs too long to measure here: the Zoo's "
                        "arm alone, first seed, stopped after STEPS env steps; its speed estimates a full run")
    parser.add_argument("--write", metavar="NAME", help="record the rows in bench/results/NAME.json")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    return parser


def main(argv: list[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    if args.estimate is not None and args.estimate < 1:
        raise SystemExit(f"--estimate takes a number of env steps >= 1, got {args.estimate}")
    given = parse_thresholds(args.threshold)
    targets = [resolve_target(env, args.env_package, given) for env in args.envs]  # every bad id before any run
    if args.worker:
        result = run_zoo_arm(targets[0], args.seeds[0], args.estimate)
        print(json.dumps({"seed": args.seeds[0], **result}), flush=True)
        return
    measured = bench_results.start_measuring()
    records = {}
    for target in targets:
        note = f" ({target.threshold_note})" if target.threshold_note else ""
        print(f"\n{target.config_id}: ours = {target.source} ({target.where}); solved = mean of "
              f"{target.eval_episodes} deterministic eval episodes >= {target.threshold:g}{note}, every "
              f"{target.eval_freq:,} env steps, within {target.budget:,} (both arms); load {os.getloadavg()[0]:.2f}",
              flush=True)
        arms, seeds = (["zoo"], args.seeds[:1]) if args.estimate else (args.arms, args.seeds)
        rows: dict[str, list[Outcome]] = {arm: [] for arm in arms}
        for seed in seeds:
            for arm in arms:
                r = (run_ours(target, seed, args.env_package) if arm == "ours"
                     else run_zoo(target, seed, args.env_package, args.threshold, args.estimate))
                rows[arm].append(r)
                print(f"  seed {seed} {arm:>4}: {cell(r)}  [{r.source}; process {r.process_s:.1f}s]", flush=True)
        for arm, arm_rows in rows.items():
            s = summarise(arm_rows)
            print(f"  {arm}: solved {s.solved}/{s.seeds}, median env steps {s.median_env_steps:,.0f}, median wall "
                  f"{s.median_wall_s:.1f} s")
        records[target.config_id] = record(target, rows)
        if args.write:  # after each env, so an interrupted bench keeps the envs it finished
            print(f"wrote {write(args.write, bench_results.finish(measured), records)}", flush=True)


if __name__ == "__main__":
    main()
