"""The `mujoco` extra (issue 22 item 3): a MuJoCo environment without a preset takes the RL Zoo's settings
for the same environment's older version (matched by name, and said so) and trains; `make test` installs
the extra, so this runs there rather than being skipped."""

from __future__ import annotations

from pathlib import Path

import pytest

from gymnasium_solver.cli import app as cli
from gymnasium_solver.config import resolve_with_origin
from gymnasium_solver.contract import run_folder as rf


def test_inverted_pendulum_v5_takes_the_zoos_v2_entry_and_says_so() -> None:
    r = resolve_with_origin("InvertedPendulum-v5:ppo")
    assert r.origin.settings == "zoo" and r.config.algo == "ppo"
    assert any("this is its InvertedPendulum-v2 entry" in n for n in r.origin.notes), r.origin.notes
    assert r.config.normalize_observations is True  # the Zoo's `normalize: true`, mapped


@pytest.mark.parametrize("config_id", ["InvertedPendulum-v5:ppo", "InvertedDoublePendulum-v5:sac"])
def test_a_mujoco_environment_trains(config_id: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GSOLVE_CONFIG", "")
    short = ["max_env_steps=512", "eval_freq=256", "eval_episodes=1"]
    if config_id.endswith(":sac"):
        short += ["learning_starts=128", "buffer_size=1000"]
    code = cli.main(["train", config_id, "--set", *short, "--runs-dir", str(tmp_path), "--quiet", "--no-fail"])
    out = capsys.readouterr()
    assert code == 0, out.err
    info = rf.read_run_info(Path(out.out.strip().splitlines()[-1]))
    assert info.status == rf.RunStatus.COMPLETED and info.progress.env_steps >= 512
    assert info.env_id == config_id.split(":")[0]
