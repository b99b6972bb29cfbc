"""Install anywhere: the presets and the shipped references are package data, inside the wheel a plain
`pip install .` installs, and read through importlib.resources (issue 22, item 3)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from gymnasium_solver.config.presets import PACKAGE_CONFIG_DIR, PACKAGE_DATA_DIR
from gymnasium_solver.diagnostics.references import SHIPPED_DIR

ROOT = Path(__file__).resolve().parent.parent


def test_presets_and_references_are_package_data() -> None:
    import gymnasium_solver

    assert PACKAGE_DATA_DIR == Path(gymnasium_solver.__file__).parent / "presets"
    assert SHIPPED_DIR.parent == PACKAGE_CONFIG_DIR.parent == PACKAGE_DATA_DIR
    assert sorted(PACKAGE_CONFIG_DIR.glob("*.yaml")) and sorted(SHIPPED_DIR.glob("*.json"))


def test_the_wheel_holds_every_preset_and_reference(tmp_path: Path) -> None:
    """Built from a copy of the sources (pip builds in the source tree), without installing anything."""
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, src / name)
    for package in ("gymnasium_solver", "mcp_server"):
        shutil.copytree(ROOT / package, src / package, ignore=shutil.ignore_patterns("__pycache__"))
    out = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--quiet",
                          str(src), "-w", str(tmp_path / "dist")], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    (wheel,) = (tmp_path / "dist").glob("gymnasium_solver-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    shipped = [f"gymnasium_solver/presets/environments/{p.name}" for p in PACKAGE_CONFIG_DIR.glob("*.yaml")]
    shipped += [f"gymnasium_solver/presets/references/{p.name}" for p in SHIPPED_DIR.glob("*.json")]
    shipped += [f"gymnasium_solver/presets/{folder}/{p.name}" for folder in ("seed_samples", "thresholds")
                for p in (PACKAGE_CONFIG_DIR.parent / folder).glob("*.json")]
    assert "gymnasium_solver/presets/thresholds/threshold_reach.json" in shipped  # config/run_notes.py reads it
    missing = [n for n in shipped if n not in names]
    assert not missing, missing
    assert "gymnasium_solver/cli/app.py" in names and "gymnasium_solver/agents/ppo.py" in names and "mcp_server/server.py" in names


def test_python_dash_m_runs_the_cli() -> None:
    """`python -m gymnasium_solver.cli` is the gsolve command (its __main__ once imported a module that is not there)."""
    proc = subprocess.run([sys.executable, "-m", "gymnasium_solver.cli", "--help"], capture_output=True, text=True,
                          check=False)
    assert proc.returncode == 0 and proc.stdout.startswith("usage: gsolve"), proc.stderr[-500:]
