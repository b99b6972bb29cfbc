"""Write the seed sample shipped for each preset (gymnasium_solver/presets/seed_samples/<ENV>.<VARIANT>.json).

A seed sample is the preset as shipped, trained once per seed (``gsolve train CONFIG --seeds``'s job): each seed's
env steps to solve, or its budget when it did not solve, with the preset's fingerprint, the commit, the machine and
the library versions. ``gsolve check --against preset`` ranks a run among these seeds and ``gsolve diagnose`` says
where a solved run falls (gymnasium_solver/diagnostics/seed_sample.py). A retuned preset's sample is ignored until
this script remakes it.

    .venv/bin/python scripts/make_seed_samples.py CartPole-v1:ppo CartPole-v1:dqn --seeds 600-639 [--parallel 2]

Use seeds no figure in the docs was measured on (600-639 are not), so the sample is not one a table was picked on.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from gymnasium_solver.config import resolve_config
from gymnasium_solver.diagnostics.references import preset_fingerprint
from gymnasium_solver.diagnostics.seed_sample import (
    MIN_SEEDS,
    SampleMeasured,
    SampleRun,
    SeedSample,
    sample_path,
)
from gymnasium_solver.jobs.backend import make_backend
from gymnasium_solver.jobs.seed_runs import check_seeds, train_seeds
from gymnasium_solver.jobs.seeds import parse_seeds

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
import bench_results  # noqa: E402 - bench/bench_results.py: commit, machine and versions as every bench records them


def sample_of(config_id: str, seeds: list[int], parallel: int) -> SeedSample:
    """Train the preset as shipped once per seed and keep every seed's result (an unsolved seed at its budget)."""
    cfg = resolve_config(config_id)
    fingerprint = preset_fingerprint(config_id)
    if fingerprint is None or cfg.reward_threshold is None:
        raise SystemExit(f"{config_id}: a seed sample needs a preset of ours with a reward threshold")
    measured = bench_results.start_measuring()
    with tempfile.TemporaryDirectory() as runs:
        def ended(run, done: int, total: int) -> None:  # type: ignore[no-untyped-def]
            print(f"{config_id} [{done}/{total}] seed {run.seed}: {run.outcome} "
                  f"({run.env_steps} env steps)", flush=True)

        result = train_seeds(make_backend(Path(runs), parallel), Path(runs), config_id, {}, seeds, False,
                             cfg.reward_threshold, ended)
    broken = [r for r in result.runs if r.outcome not in ("solved", "not solved") or r.env_steps is None]
    if broken or result.stopped:
        raise SystemExit(f"{config_id}: seeds {[r.seed for r in broken]} did not train to their end "
                         f"({broken[0].outcome if broken else result.stopped}); nothing written")
    return SeedSample(config_id=config_id, preset_fingerprint=fingerprint, reward_threshold=cfg.reward_threshold,
                      max_env_steps=cfg.max_env_steps,
                      runs=[SampleRun(seed=r.seed, solved=r.solved, env_steps=r.env_steps or 0) for r in result.runs],
                      measured=SampleMeasured(command=measured.command, commit=measured.commit, date=measured.date,
                                              cpu=measured.machine.label, versions=measured.versions))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("presets", nargs="+", metavar="ENV:VARIANT")
    parser.add_argument("--seeds", nargs="+", required=True, help="e.g. 600-639")
    parser.add_argument("--parallel", type=int, default=1)
    args = parser.parse_args()
    seeds = check_seeds(parse_seeds(args.seeds))
    if len(seeds) < MIN_SEEDS:
        parser.error(f"{len(seeds)} seeds: a rank test needs at least {MIN_SEEDS} to reach p < 0.05")
    for config_id in args.presets:
        start = time.monotonic()
        sample = sample_of(config_id, seeds, args.parallel)
        path = sample_path(config_id)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(sample.model_dump_json(indent=None) + "\n", encoding="utf-8")
        solved = sum(r.solved for r in sample.runs)
        print(f"{path.relative_to(ROOT)}: {solved}/{len(sample.runs)} seeds solved "
              f"({time.monotonic() - start:.0f} s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
