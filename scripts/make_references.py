"""Write the reference runs shipped for each preset (config/references/<ENV>.<VARIANT>.json).

A reference is a solved run of the preset itself: its env steps to solve and the optimisation
metrics the diagnosis compares against (references.BAND_METRICS), at full resolution (solved runs
are short). They come from the healthy runs of the corpus (tests/fixtures/corpus, labels.json
``healthy: true``), i.e. real runs of our trainer with the preset config and different seeds; a
diagnosis uses them when the user's runs folder holds fewer than 3 solved runs of that environment.

    .venv/bin/python scripts/make_references.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from gymnasium_solver.diagnostics.references import SHIPPED_DIR, reference_record, shipped_path
from gymnasium_solver.diagnostics.series import RunData
from gymnasium_solver.run_folder import parse_metrics_text, read_run_info

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "fixtures" / "corpus"


def main() -> int:
    by_preset: dict[str, list[dict[str, object]]] = {}
    for folder in sorted(p for p in CORPUS.iterdir() if (p / "labels.json").is_file()):
        labels = json.loads((folder / "labels.json").read_text(encoding="utf-8"))
        info = read_run_info(folder)
        if not labels.get("healthy") or not info.solved:
            continue
        data = RunData(parse_metrics_text((folder / "metrics.csv").read_text(encoding="utf-8")))
        steps = info.solved_at.env_steps if info.solved_at else None
        by_preset.setdefault(info.config_id, []).append(reference_record(labels["case"], steps, data))
    SHIPPED_DIR.mkdir(parents=True, exist_ok=True)
    for config_id, runs in sorted(by_preset.items()):
        path = shipped_path(config_id)
        path.write_text(json.dumps({"config_id": config_id, "source": "healthy corpus runs (scripts/make_references.py)",
                                    "runs": runs}, separators=(",", ":")) + "\n", encoding="utf-8")
        print(f"{path.relative_to(ROOT)}: {len(runs)} solved runs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
