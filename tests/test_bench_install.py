"""README's install, demo and test figures come from bench/bench_install.py's record (no long run here: its
parsers and the rendering of what the make commands printed)."""

from __future__ import annotations

from types import ModuleType

import pytest
from shared_util import load_bench

DEMO = """Installing gymnasium-solver (core: no extras) into .venv (torch 2.13.0 CPU)...
env -u PYTHONDONTWRITEBYTECODE .venv/bin/gsolve train CartPole-v1:ppo
eval at 2048/200000 steps (1%): return 21.0 ± 3.1 | 9,000 fps | return 20.0 | 0:00:00
eval at 4096/200000 steps (2%): return 200.1 ± 4.2 | 9,500 fps | return 30.0 | 0:00:00
eval at 6144/200000 steps (3%): return 500.0 ± 0.0 (solved) | 9,700 fps | return 41.0 | 0:00:01
 6144/200000 steps | 9,700 fps | return 41.0 | eval 500.0 | 0:00:01
solved CartPole-v1:ppo: eval 500.0 >= 475 at 6144 env steps after 0.91 s; run folder runs/20261203-000000-abcdef0
runs/20261203-000000-abcdef0
.venv/bin/gsolve show @last
run 20261203-000000-abcdef0  CartPole-v1:ppo
  status      completed (solved)
  progress    6.1k / 200.0k env steps (3%), 1s
  best eval   500 ± 0 at 6.1k
  final eval  500 at 6.1k
  solved      yes, at 6.1k env steps, 1s (threshold 475)
  seed        0
  algo        ppo
  config      runs/20261203-000000-abcdef0/config.yaml
  metrics     runs/20261203-000000-abcdef0/metrics.csv
""".splitlines()

TESTS = """.venv/bin/ruff check gymnasium_solver mcp_server tests bench scripts
All checks passed!
Success: no issues found in 171 source files
Success: no issues found in 31 source files
........................................................................ [  3%]
........................................................................ [  7%]
2060 passed, 1 warning in 512.34s (0:08:32)
""".splitlines()


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return load_bench("bench_install")


@pytest.fixture(scope="module")
def render() -> ModuleType:
    return load_bench("render_install")


def test_the_trainers_closing_line_gives_the_env_steps_it_solved_at(bench: ModuleType) -> None:
    assert bench.parse_solved(DEMO) == {"config": "CartPole-v1:ppo", "env_steps": 6144, "seconds": 0.91}
    assert bench.parse_solved(DEMO[:5]) is None


def test_the_suites_count_is_read_only_when_nothing_failed(bench: ModuleType) -> None:
    assert bench.parse_passed(TESTS) == {"passed": 2060, "seconds": 512.34}
    assert bench.parse_passed(["3 failed, 2057 passed in 500.00s (0:08:20)"]) is None
    assert bench.parse_passed(["2057 passed, 2 errors in 500.00s (0:08:20)"]) is None


def test_the_demo_block_shows_the_last_evaluations_the_closing_lines_and_the_head_of_show(render: ModuleType) -> None:
    lines = render.demo_lines(DEMO)
    assert lines[0].startswith("eval at 4096/")  # the last two evaluations, not the first
    assert not any(ln.startswith((".venv/", "env -u", "Installing ")) for ln in lines)  # make's echo is not the demo's
    assert "runs/20261203-000000-abcdef0" in lines
    assert lines[-1] == "  ..."  # show's answer is cut after its head, and says so
    assert lines[-2].startswith("  solved      yes")  # the run line and the next SHOW_LINES - 1 of show's answer


def test_the_test_block_shows_the_verdicts_and_the_summary_without_every_progress_line(render: ModuleType) -> None:
    assert render.test_lines(TESTS) == ["All checks passed!", "Success: no issues found in 171 source files",
                                        "Success: no issues found in 31 source files", TESTS[4], "...", TESTS[-1]]
