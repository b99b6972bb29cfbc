"""bench/mutation_report.py's own logic (not the mutation run itself, which is `make mutation`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from shared_util import load_bench

report = load_bench("mutation_report")

DECORATED = '''from reg import rule


@rule("a")
def first(ctx):
    return ctx > 1


def helper(x):
    return x


@rule(
    "b", "c",
)
def second(ctx):
    if ctx:
        return 2
    return None
'''


def test_undecorate_keeps_each_registration_in_order_after_its_function() -> None:
    out = report.undecorate(DECORATED)
    assert "@rule" not in out
    assert out.index("def first") < out.index('rule("a")(first)') < out.index("def helper")
    assert out.rstrip().endswith('rule(\n    "b", "c",\n)(second)')
    registered: list[tuple[tuple[str, ...], str]] = []
    namespace = {"rule": lambda *ids: lambda fn: registered.append((ids, fn.__name__)) or fn}
    exec(compile(out.replace("from reg import rule\n", ""), "<undecorated>", "exec"), namespace)
    assert registered == [(("a",), "first"), (("b", "c"), "second")]
    assert namespace["first"](2) is True and namespace["second"](0) is None  # bodies unchanged


def test_the_table_counts_timeouts_as_kills_and_names_every_survivor(tmp_path: Path) -> None:
    target = report.Target("t", "what", ("gymnasium_solver/x.py",), ("tests/test_x.py",))
    o = report.Outcome(target, counts={"killed": 7, "timeout": 1, "survived": 2},
                       survivors={"m.x_f__mutmut_1": "--- a\n+++ b\n-    a = 1\n+    a = 2\n",
                                  "m.x_f__mutmut_2": "+    b = None\n"},
                       command="make mutation", commit="abc1234", date="2026-11-27", load=(1.0, 2.5))
    block = report.render([o], benign={"m.x_f__mutmut_1": "equivalent: a is never read"})
    assert ("| t | what | `x.py` | `test_x.py` | 10 | 8 | 2 | 80.0% | `abc1234`, 2026-11-27, load 1.0-2.5 |"
            in block)
    assert "- `m.x_f__mutmut_1`: `a = 2` - equivalent: a is never read" in block
    assert "- `m.x_f__mutmut_2`: `b = None` - **not explained**" in block
    assert block.startswith("Measured by `make mutation` with mutmut ")


def test_results_keep_other_targets_and_the_table_needs_every_target(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    outcomes = [report.Outcome(t, {"killed": 1}, {}, 1.0, "make mutation", "abc", "2026-11-27", (0.5, 0.5))
                for t in report.TARGETS]
    report.save(path, outcomes[:1])
    with pytest.raises(SystemExit, match="no verdicts for"):
        report.load(path)
    report.save(path, outcomes[1:])
    again = report.Outcome(report.TARGETS[0], {"killed": 2, "survived": 1}, {}, 2.0, "x", "def", "2026-11-28", (1, 1))
    report.save(path, [again])
    loaded = report.load(path)
    assert [o.target.name for o in loaded] == [t.name for t in report.TARGETS]
    assert (loaded[0].counts, loaded[0].commit, loaded[1].commit) == ({"killed": 2, "survived": 1}, "def", "abc")


def test_a_targets_timeout_multiplier_reaches_mutmuts_config_only_when_set() -> None:
    plain = report.Target("t", "what", ("gymnasium_solver/x.py",), ("tests/test_x.py",))
    looped = report.Target("t", "what", ("gymnasium_solver/x.py",), ("tests/test_x.py",), timeout_multiplier=4.0)
    assert "timeout_multiplier" not in report.mutmut_config(plain)
    assert report.mutmut_config(looped).endswith("use_git_change_detection = false\ntimeout_multiplier = 4.0\n")
