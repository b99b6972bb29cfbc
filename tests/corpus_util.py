"""The committed planted-fault corpus (tests/fixtures/corpus/), shared by the diagnostics tests."""

from __future__ import annotations

import shutil
from pathlib import Path

from gymnasium_solver.contract import run_folder as rf

CORPUS = Path(__file__).parent / "fixtures" / "corpus"


def copy_case(case: str, runs_dir: Path) -> str:
    """Copy one corpus run into ``runs_dir`` under its own run id; return that id."""
    run_id = rf.read_run_info(CORPUS / case).run_id
    dst = runs_dir / run_id
    dst.mkdir(parents=True)
    for name in (rf.RUN_JSON, rf.CONFIG_YAML, rf.METRICS_CSV):
        shutil.copy2(CORPUS / case / name, dst / name)
    return run_id
