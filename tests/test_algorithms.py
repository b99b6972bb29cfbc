"""gymnasium_solver/contract/algorithms.py is the one place that says what an algorithm is: every algorithm the
config knows has a row and every row a config; the rows agree with the config models and the
packages; and no module re-declares a list of algorithm names (derive it from the table)."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import pytest

from gymnasium_solver.config import CONFIG_MODELS, OffPolicyConfigBase, SB3Config, native_models, sb3_models
from gymnasium_solver.contract import algorithms as A
from gymnasium_solver.contract.algorithms import ALGORITHMS, Algo

ROOT = Path(__file__).resolve().parent.parent
NAMES = {a.value for a in Algo}


def test_the_table_and_the_config_registry_name_the_same_algorithms() -> None:
    assert set(ALGORITHMS) == set(Algo) == set(CONFIG_MODELS)
    assert all(spec.algo is algo for algo, spec in ALGORITHMS.items())


def test_the_rows_agree_with_the_config_models() -> None:
    for algo, spec in ALGORITHMS.items():
        fields = CONFIG_MODELS[algo].model_fields
        assert spec.replay == issubclass(CONFIG_MODELS[algo], OffPolicyConfigBase) == ("buffer_size" in fields), algo
        assert spec.on_policy == (not spec.replay), algo
        assert spec.gae == ("gae_lambda" in fields), algo
        assert spec.epsilon_greedy == ("exploration_fraction" in fields), algo
        assert spec.max_entropy == ("ent_coef_auto" in fields), algo
        assert spec.soft_target == (spec.replay and fields["tau"].default < 1), algo


def test_ours_and_sb3s_configs_live_apart() -> None:
    """Our algorithms' configs are in native_models (DQN too: it is our agent), SB3's in sb3_models."""
    for algo, spec in ALGORITHMS.items():
        model = CONFIG_MODELS[algo]
        assert model.__module__ == (native_models if spec.native else sb3_models).__name__, algo
        assert isinstance(model.model_construct(), SB3Config) == (not spec.native), algo


def test_each_trainer_is_in_its_package() -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["sb3"]
    for spec in ALGORITHMS.values():
        module, _, name = spec.trainer.partition(":")
        if spec.native:
            assert module.startswith("gymnasium_solver.agents.") and (ROOT / module.replace(".", "/")).with_suffix(".py").is_file()
            text = (ROOT / module.replace(".", "/")).with_suffix(".py").read_text()
            assert f"class {name}" in text, spec.trainer
        else:
            assert any(dep.startswith(spec.package) for dep in extras), spec.package
            assert module.replace("_", "-") == spec.package.replace("_", "-"), spec.trainer


def test_the_derived_lists() -> None:
    assert A.NATIVE == {Algo.PPO, Algo.REINFORCE, Algo.A2C, Algo.DQN}
    assert A.OFF_POLICY == A.REPLAY == {Algo.DQN, Algo.QRDQN, Algo.SAC, Algo.TD3, Algo.TQC}
    assert A.SOFT_TARGET == {Algo.SAC, Algo.TD3, Algo.TQC} and A.HARD_TARGET == A.EPSILON_GREEDY
    assert A.MAX_ENTROPY == {Algo.SAC, Algo.TQC} and A.GAE == {Algo.PPO, Algo.A2C}
    assert "sac" in A.SOFT_TARGET and None not in A.REPLAY  # plain strings (a run's algo) work too
    assert A.takes("box_nd") == [] and "dqn" not in A.takes("box") and "sac" not in A.takes("discrete")
    assert A.columns_for("not-ours") == A.columns_for("reinforce")


def _algo_name(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return node.value in NAMES
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "Algo"


def algo_lists(source: str) -> list[int]:
    """Lines of tuple/list/set literals that name two or more algorithms (``("sac", "tqc")``,
    ``frozenset({"dqn", "qrdqn"})``, ``(Algo.SAC, Algo.TD3)``, a dict keyed by them is a per-algorithm
    value table and allowed)."""
    return [node.lineno for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Tuple | ast.List | ast.Set)
            and sum(_algo_name(e) for e in node.elts) >= 2]


def test_no_module_re_declares_a_list_of_algorithms() -> None:
    found = []
    for pkg in ("gymnasium_solver", "mcp_server"):
        for path in sorted((ROOT / pkg).rglob("*.py")):
            if path.name == "algorithms.py" and path.parent.name == "contract":
                continue
            found += [f"{path.relative_to(ROOT)}:{line}" for line in algo_lists(path.read_text(encoding="utf-8"))]
    assert found == [], "derive these from gymnasium_solver/contract/algorithms.py: " + ", ".join(found)


def test_the_list_check_sees_the_usual_spellings() -> None:
    assert algo_lists('x in ("sac", "tqc")') == [1]
    assert algo_lists('S = frozenset({"dqn", "qrdqn"})') == [1]
    assert algo_lists("B = (Algo.SAC, Algo.TD3)") == [1]
    assert algo_lists('x == "ppo" or k == ("ppo", "box")') == []


def test_each_derived_list_is_the_algorithms_whose_flag_is_set() -> None:
    from gymnasium_solver.contract import algorithms as al

    for flag, derived in [("native", al.NATIVE), ("on_policy", al.ON_POLICY), ("replay", al.REPLAY),
                          ("soft_target", al.SOFT_TARGET), ("epsilon_greedy", al.EPSILON_GREEDY),
                          ("max_entropy", al.MAX_ENTROPY), ("gae", al.GAE), ("zoo", al.ZOO)]:
        expected = frozenset(a for a, s in al.ALGORITHMS.items() if getattr(s, flag) is True)
        assert al._where(flag) == derived == expected, flag


def test_each_agent_has_the_protocol_its_row_says() -> None:
    """training.py drives an algorithm by its row's on_policy (gymnasium_solver/agents/interface.py): our agent class, or
    SB3Agent for every SB3 row, has that protocol's methods and none of the other's."""
    pytest.importorskip("stable_baselines3")
    from gymnasium_solver.agents import agent_class
    from gymnasium_solver.agents.sb3 import SB3Agent

    on, off = {"collect", "targets", "update"}, {"learn", "stats"}
    for algo, spec in ALGORITHMS.items():
        cls = agent_class(algo) if spec.native else SB3Agent
        has = {name for name in on | off if callable(getattr(cls, name, None))}
        assert has == (on if spec.on_policy else off), (algo, sorted(has))
