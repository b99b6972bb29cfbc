"""bench/mutation_report.py's own logic (not the mutation run itself, which is `make mutation`)."""

from __future__ import annotations

from pathlib import Path

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
                                  "m.x_f__mutmut_2": "+    b = None\n"})
    block = report.render([o], command="make mutation", commit="abc1234", date="2026-11-27", load=(1.0, 2.0),
                          benign={"m.x_f__mutmut_1": "equivalent: a is never read"})
    assert "| t | what | `x.py` | `test_x.py` | 10 | 8 | 2 | 80.0% |" in block
    assert "- `m.x_f__mutmut_1`: `a = 2` - equivalent: a is never read" in block
    assert "- `m.x_f__mutmut_2`: `b = None` - **not explained**" in block
    assert "at commit `abc1234`, 2026-11-27" in block
