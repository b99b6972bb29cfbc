"""The references shipped in gymnasium_solver/presets/references describe the presets as they are today.

A retuned preset with its predecessor's references made the diagnosis call a budget that covers the
new preset short (the second blind held-out set, docs/diagnostics.md): each file records the
fingerprint of the preset it was trained with, and a file made with another version is not used.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from gymnasium_solver.diagnostics import references as refs

FILES = sorted(refs.SHIPPED_DIR.glob("*.json"))


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_every_shipped_reference_was_made_with_todays_preset(path: Path) -> None:
    raw = json.loads(path.read_text(encoding="utf-8"))
    assert raw["preset_fingerprint"] == refs.preset_fingerprint(raw["config_id"]), (
        f"{path.name} was made with another version of {raw['config_id']}: "
        f"run .venv/bin/python scripts/make_references.py --train {raw['config_id']}")
    loaded = refs.shipped_references(raw["config_id"])
    assert len(loaded.runs) == len(raw["runs"]) >= 3 and loaded.steps_to_solve is not None


def test_references_of_another_preset_version_are_not_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copy(refs.shipped_path("CartPole-v1:ppo"), tmp_path / "CartPole-v1.ppo.json")
    monkeypatch.setattr(refs, "SHIPPED_DIR", tmp_path)
    assert len(refs.shipped_references("CartPole-v1:ppo").runs) == 10
    # The preset changed under the file (as a retune does): same name, another config.
    monkeypatch.setattr(refs, "preset_fingerprint", lambda config_id: "another-version")
    stale = refs.shipped_references("CartPole-v1:ppo")
    assert stale.runs == [] and stale.steps_to_solve is None
    assert "made with another version of the preset" in stale.source and "--train" in stale.source


def test_the_fingerprint_is_stable_and_tells_presets_apart() -> None:
    a = refs.preset_fingerprint("CartPole-v1:ppo")
    assert a is not None and a == refs.preset_fingerprint("CartPole-v1:ppo")
    assert a != refs.preset_fingerprint("CartPole-v1:reinforce")
    assert refs.preset_fingerprint("NoSuchEnv-v0:ppo") is None
