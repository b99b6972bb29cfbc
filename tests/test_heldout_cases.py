"""The held-out case tables (tests/fixtures/heldout*/cases.yaml) against the fixtures they produced.

scripts/make_heldout.py trains each row of a table and writes what the row declares into the case's
labels.json. The fixtures are not re-trained when a table is edited, so this test reads every table through
make_heldout's own loader and checks that each row still declares exactly what its labels.json says (config,
seed, overrides, fault, expected fix): regenerating a set from its table gives the same cases.
Only the declared fields are compared; nothing here reads a measured outcome.
"""

from __future__ import annotations

import json
from pathlib import Path

import make_heldout  # scripts/ is on sys.path (conftest.py)
import pytest

FIXTURES = Path(__file__).resolve().parent / "fixtures"
TABLES = sorted(FIXTURES.glob("heldout*/cases.yaml"))


def test_every_heldout_set_has_a_table() -> None:
    sets = sorted(p.name for p in FIXTURES.glob("heldout*") if p.is_dir())
    assert len(sets) >= 9
    assert [t.parent.name for t in TABLES] == sets


@pytest.mark.parametrize("table", TABLES, ids=[t.parent.name for t in TABLES])
def test_table_declares_what_its_fixtures_hold(table: Path) -> None:
    rows = make_heldout.load_cases(table)
    folders = sorted(p.name for p in table.parent.iterdir() if (p / "labels.json").is_file())
    assert sorted(r["case"] for r in rows) == folders
    for row in rows:
        labels = json.loads((table.parent / row["case"] / "labels.json").read_text(encoding="utf-8"))
        declared = make_heldout.declared_labels(row)
        assert declared == {key: labels.get(key) for key in declared}, row["case"]
        assert declared["config_id"] == labels["config_id"] and declared["overrides"] == labels["overrides"]


def test_declared_labels_of_a_faulty_and_a_healthy_row() -> None:
    faulty = {"case": "x_s1", "config_id": "CartPole-v1:ppo", "seed": 1, "budget": 40960,
              "planted": ["n_envs=1"], "fault_type": "f", "cause": "c", "expected_key": "n_envs",
              "expected_direction": "increase"}
    assert make_heldout.declared_labels(faulty) == {
        "case": "x_s1", "fault_type": "f", "config_id": "CartPole-v1:ppo", "seed": 1,
        "overrides": ["max_env_steps=40960", "n_envs=1"], "cause": "c", "healthy": False,
        "expected_key": "n_envs", "expected_direction": "increase", "acceptable_keys": []}
    healthy = {"case": "y_s2", "config_id": "CartPole-v1:ppo", "seed": 2, "cause": "the unmodified preset"}
    assert make_heldout.declared_labels(healthy)["overrides"] == []
    assert make_heldout.declared_labels(healthy)["healthy"] is True


def test_base_overrides_are_kept_in_the_fault_and_its_fix_before_the_planted_ones() -> None:
    faulty = {"case": "z_s3", "config_id": "MiniGrid-Empty-5x5-v0:ppo", "seed": 3, "budget": 50000,
              "base": ["reward_threshold=0.9", "env_package=[minigrid]"], "planted": ["gamma=0.5"],
              "fault_type": "f", "cause": "c", "expected_key": "gamma", "expected_direction": "increase"}
    assert make_heldout.declared_labels(faulty)["overrides"] == [
        "max_env_steps=50000", "reward_threshold=0.9", "env_package=[minigrid]", "gamma=0.5"]
    assert make_heldout.kept_overrides(faulty) == ["max_env_steps=50000", "reward_threshold=0.9",
                                                   "env_package=[minigrid]"]
    healthy = {"case": "w_s4", "config_id": "FrozenLake-v1:ppo", "seed": 4, "cause": "c",
               "base": ["env_kwargs={is_slippery: false}"]}
    assert make_heldout.declared_labels(healthy)["overrides"] == ["env_kwargs={is_slippery: false}"]
    assert make_heldout.declared_labels(healthy)["healthy"] is True


def test_env_package_is_passed_as_the_flag_that_imports_it() -> None:
    # `gsolve train --set env_package=...` is refused: a package is imported only when the command line names it.
    flags, rest = make_heldout._package_args(["max_env_steps=10", "env_package=[minigrid, other]", "gamma=0.5"])
    assert flags == ["--env-package", "minigrid", "--env-package", "other"]
    assert rest == ["max_env_steps=10", "gamma=0.5"]
    assert make_heldout._package_args(["env_package=minigrid"]) == (["--env-package", "minigrid"], [])


def test_a_users_own_class_is_passed_as_the_flag_that_imports_it() -> None:
    # A set on a user's own environment class: its module is imported by --env-class, never by --set.
    flags, rest = make_heldout._package_args(["max_env_steps=10", "env_class=tests.envs.my_env:Corridor",
                                              "reward_threshold=0.9"])
    assert flags == ["--env-class", "tests.envs.my_env:Corridor"]
    assert rest == ["max_env_steps=10", "reward_threshold=0.9"]


@pytest.mark.parametrize(("text", "says"), [
    ("- case: a\n", "expected a mapping with a non-empty list under 'cases:'"),
    ("cases: []\n", "expected a mapping with a non-empty list under 'cases:'"),
    ("cases: [1\n", "not valid YAML at line 2"),
    ("CASES:\n- {case: a, config_id: b, seed: 1, cause: c}\n", "unknown top-level key(s) CASES"),
    ("cases:\n- {case: a, config_id: b, seed: 1, cause: c, planted_keys: [x=1]}\n",
     "case 'a' has unknown field(s) planted_keys"),
    ("cases:\n- {case: a, config_id: b, seed: 1, cause: c, planted: [x=1]}\n",
     "case 'a' lacks budget, fault_type, expected_key, expected_direction"),
    ("cases:\n- {case: a, config_id: b, seed: one, cause: c}\n", "case 'a' has seed='one'"),
    ("cases:\n- {case: a, config_id: b, seed: 1, cause: c, budget: 10, planted: x=1, fault_type: f,"
     " expected_key: x, expected_direction: decrease}\n", "case 'a' has planted='x=1'"),
    ("cases:\n- {case: a, config_id: b, seed: 1, cause: c}\n- {case: a, config_id: b, seed: 2, cause: c}\n",
     "case 'a' appears twice"),
    ("cases:\n- just a string\n", "case #1 is a str"),
    ("cases:\n- {case: a, config_id: b, seed: 1, cause: c, base: reward_threshold=1}\n",
     "case 'a' has base='reward_threshold=1'"),
    ("cases:\n- {case: a, config_id: b, seed: 1, cause: c, base: ['env_package=[]']}\n",
     "case 'a' has base entry 'env_package=[]'; env_package must be a package name or a list"),
    ("cases:\n- {case: a, config_id: b, seed: 1, cause: c, budget: 10, planted: ['env_package=[x]'], fault_type: f,"
     " expected_key: x, expected_direction: decrease}\n", "case 'a' names env_package in planted"),
    ("cases:\n- {case: a, config_id: b, seed: 1, cause: c, base: ['env_class=os.system']}\n",
     "case 'a' has base entry 'env_class=os.system'; env_class must be MODULE:CLASS"),
    ("cases:\n- {case: a, config_id: b, seed: 1, cause: c, base: ['env_class=os:system; x']}\n",
     "env_class must be MODULE:CLASS"),
    ("cases:\n- {case: a, config_id: b, seed: 1, cause: c, budget: 10, planted: ['env_class=m:C'], fault_type: f,"
     " expected_key: x, expected_direction: decrease}\n", "case 'a' names env_class in planted"),
])
def test_a_bad_table_is_refused_in_one_sentence(tmp_path: Path, text: str, says: str) -> None:
    path = tmp_path / "cases.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(make_heldout.CasesError) as info:
        make_heldout.load_cases(path)
    message = str(info.value)
    assert message.startswith(f"{path}: ") and says in message and "\n" not in message


def test_a_missing_table_is_refused(tmp_path: Path) -> None:
    with pytest.raises(make_heldout.CasesError, match="cannot read it"):
        make_heldout.load_cases(tmp_path / "nope.yaml")


def test_a_case_on_a_users_class_resolves_in_the_bench_process() -> None:
    """bench_fix_verdicts resolves a fix winner's config in its own process: a case on a user's class needs the class
    granted and registered under the run's id there, as `gsolve train ID --env-class M:C` does (heldout69's first
    fix bench stopped on "unknown environment 'Thermostat-v0'" after its first case)."""
    from shared_util import load_bench

    from gymnasium_solver.config import resolve_config

    case = FIXTURES / "heldout69" / "c01_s6901"
    assert load_bench("screen_faults").env_modules_of(case) == ["--env-class", "tests.envs.heldout69:Thermostat"]
    cfg = resolve_config("Thermostat-v0:dqn", [])
    assert (cfg.env_id, cfg.env_class) == ("Thermostat-v0", "tests.envs.heldout69:Thermostat")
