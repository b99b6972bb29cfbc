"""bench/render_ab.py: the block of an A/B file names both arms' tails and the tests, from the file's rows."""

from __future__ import annotations

import json
from pathlib import Path

from shared_util import load_bench

render_ab = load_bench("render_ab")
ANALYSIS = Path(__file__).resolve().parents[1] / "bench" / "analysis"


def test_a_file_without_a_recorded_tail_gets_it_from_its_rows(tmp_path: Path) -> None:
    old = json.loads((ANALYSIS / "ab_pendulum_ppo_target_kl.json").read_text(encoding="utf-8"))
    assert "tail" not in old  # written before the bench counted the tail
    n = len(old["rows"]["before"])
    old["rows"]["before"][-1].update(solved=False, env_steps=300000)  # an unsolved seed: always in the tail
    path = tmp_path / "ab_made_up_case.json"
    path.write_text(json.dumps(old), encoding="utf-8")
    text = render_ab.render_file(path)
    before = next(line for line in text.splitlines() if line.startswith("| before |"))
    after = next(line for line in text.splitlines() if line.startswith("| after |"))
    assert f"| {n - 1}/{n} |" in before and "300,000 (5039)" in before
    assert "| 1 (5039) |" in before  # the unsolved seed, and nothing else past 3x 8,192
    assert "| 1 (5011) |" in after  # 28,672 > 24,576
    assert "(24,576 env steps)" in text and "Mann-Whitney U" in text and "Fisher's exact test" in text
    assert render_ab.block_name(path) == "ab-made-up-case"


def test_every_ab_file_in_the_repository_has_a_block_renderer() -> None:
    names = {render_ab.block_name(p) for p in ANALYSIS.glob("ab_*.json")}
    assert names and names <= set(render_ab.RENDERERS)
