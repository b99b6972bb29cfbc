"""Write the reference runs shipped for each preset (gymnasium_solver/presets/references/<ENV>.<VARIANT>.json).

A reference is a solved run of the preset itself: its env steps to solve and the optimisation
metrics the diagnosis compares against (references.BAND_METRICS), at full resolution (solved runs
are short); a diagnosis uses them when the user's runs folder holds fewer than 3 solved runs of
that environment. They must describe the preset as it is now: a retuned preset with the old
preset's references makes the diagnosis compare a run with a config nobody ships (stale solve
steps make a budget that covers the preset look short).

    .venv/bin/python scripts/make_references.py --train CartPole-v1:ppo Pendulum-v1:sac ...
        # train each preset on --seeds (default 100-104, seeds no corpus run uses) and write its file
    .venv/bin/python scripts/make_references.py
        # from the healthy runs of the corpus (tests/fixtures/corpus, labels.json ``healthy: true``)
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from gymnasium_solver.contract.run_folder import parse_metrics_text, read_run_info
from gymnasium_solver.diagnostics.references import (
    SHIPPED_DIR,
    preset_fingerprint,
    reference_record,
    shipped_path,
)
from gymnasium_solver.diagnostics.series import RunData

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "fixtures" / "corpus"


def trained(config_ids: list[str], seeds: list[int]) -> dict[str, list[dict[str, object]]]:
    """Each preset trained as shipped on ``seeds``; its solved runs as reference records."""
    import tempfile

    from gymnasium_solver.config import resolve_config
    from gymnasium_solver.train.training import train

    by_preset: dict[str, list[dict[str, object]]] = {}
    for config_id in config_ids:
        for seed in seeds:
            with tempfile.TemporaryDirectory() as runs:
                result = train(resolve_config(config_id, [f"seed={seed}"]), Path(runs))
                folder = Path(runs) / result.run_id
                info = read_run_info(folder)
                data = RunData(parse_metrics_text((folder / "metrics.csv").read_text(encoding="utf-8")))
            if not info.solved or info.solved_at is None:
                print(f"{config_id} seed {seed}: not solved in {info.progress.env_steps} env steps; left out")
                continue
            print(f"{config_id} seed {seed}: solved at {info.solved_at.env_steps} env steps", flush=True)
            by_preset.setdefault(config_id, []).append(
                reference_record(f"{config_id} seed {seed}", info.solved_at.env_steps, data))
    return by_preset


def from_corpus() -> dict[str, list[dict[str, object]]]:
    by_preset: dict[str, list[dict[str, object]]] = {}
    for folder in sorted(p for p in CORPUS.iterdir() if (p / "labels.json").is_file()):
        labels = json.loads((folder / "labels.json").read_text(encoding="utf-8"))
        info = read_run_info(folder)
        if not labels.get("healthy") or not info.solved:
            continue
        data = RunData(parse_metrics_text((folder / "metrics.csv").read_text(encoding="utf-8")))
        steps = info.solved_at.env_steps if info.solved_at else None
        by_preset.setdefault(info.config_id, []).append(reference_record(labels["case"], steps, data))
    return by_preset


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train", nargs="+", metavar="ENV:VARIANT", help="train these presets for their references")
    parser.add_argument("--seeds", nargs="+", type=int, default=[100, 101, 102, 103, 104])
    args = parser.parse_args()
    if args.train:
        by_preset, source = trained(args.train, args.seeds), f"the preset trained on seeds {args.seeds}"
    else:
        by_preset, source = from_corpus(), "healthy corpus runs"
    SHIPPED_DIR.mkdir(parents=True, exist_ok=True)
    for config_id, runs in sorted(by_preset.items()):
        path = shipped_path(config_id)
        path.write_text(json.dumps({"config_id": config_id, "source": f"{source} (scripts/make_references.py)",
                                    "preset_fingerprint": preset_fingerprint(config_id), "runs": runs},
                                   separators=(",", ":")) + "\n", encoding="utf-8")
        print(f"{path.relative_to(ROOT)}: {len(runs)} solved runs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
