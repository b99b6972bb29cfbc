"""The two held-out sets (tests/fixtures/heldout, heldout2) as regression tests of the diagnosis.

Neither is blind any more: each was scored once blind (heldout: 1/8, heldout2: 2/7; docs/diagnostics.md)
and the diagnosis changed after. These pin today's figures so a change that loses a case says so;
they are not the accuracy figure (that is the first, blind scoring of a set nobody tuned to).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def score() -> ModuleType:
    spec = importlib.util.spec_from_file_location("score_heldout", ROOT / "scripts" / "score_heldout.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("score_heldout", module)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(("folder", "expected"), [
    ("heldout", "held-out fault runs: 8; top change moves the planted key the right way: 7/8 (88%); an acceptable "
                "key: 8/8 (100%); healthy runs with a warning: 0/2"),
    ("heldout2", "held-out fault runs: 7; top change moves the planted key the right way: 7/7 (100%); an acceptable "
                 "key: 7/7 (100%); healthy runs with a warning: 0/2"),
])
def test_held_out_sets_keep_todays_scores(score: ModuleType, capsys: pytest.CaptureFixture[str],
                                          folder: str, expected: str) -> None:
    assert score.main(ROOT / "tests" / "fixtures" / folder) == 0
    assert capsys.readouterr().out.rstrip().endswith(expected)
