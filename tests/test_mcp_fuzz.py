"""Property-based fuzzing of every MCP tool's arguments through the in-process client (issue 8).

Strategies are derived from each tool's input JSON schema (``list_tools()``): values of the right
type (bounds crossed on purpose) and of every wrong type, huge, negative and non-finite numbers,
and odd strings ('../', '@last', NUL, YAML anchors, unicode, 10k characters). Whatever the
arguments, a call returns, within a generous hang detector, either a result or an error that is
a sentence without a traceback and without the "this is a bug" message of an unexpected exception.
"""

from __future__ import annotations

import json
import math
import shutil
import tempfile
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, NamedTuple

import anyio
import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from mcp import Client

from gymnasium_solver import config as config_mod
from gymnasium_solver import launcher
from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.sweeps import launch as sweep_launch
from mcp_server import experiment_tools, training_tools
from mcp_server.server import create_server

if TYPE_CHECKING:
    from conftest import RealRuns

CALL_TIMEOUT_S = 30.0  # a hang detector, not a performance assertion
EXAMPLES_PER_TOOL = 40  # 20 tools: about 30-40 s in all on the 2-core VM
EXAMPLES_PER_PLOT_TOOL = 12  # a plot renders a PNG: ~0.3-0.8 s per call
MAX_RESULT_CHARS = 60_000  # the structured result stays far below 25,000 tokens
# The server these tests talk to starts nothing: a live-run cap of 0 leaves no free slot, so every
# start_training (new or resume) / fix_run is refused by check_capacity after validation.
# (`gsolve mcp --max-live-runs` refuses 0; the cap check itself does not.)
REFUSE_EVERY_START = launcher.StartLimits(max_live_runs=0, max_env_steps=launcher.DEFAULT_MAX_ENV_STEPS,
                                          max_n_envs=launcher.DEFAULT_MAX_N_ENVS)

YAML_BOMB = "&a [" + ",".join(["*a"] * 2) + "]"
YAML_DEEP = "".join(f"- &a{i} [" + ",".join([f"*a{i - 1}"] * 9 if i else ["x"] * 9) + "]\n" for i in range(8))
ODD_STRINGS = [
    "", " ", "\n", "\t", ".", "..", "../", "../../../../etc/passwd", "/etc/passwd", "~", "$HOME", "%2e%2e%2f",
    "@last", "@", "@first", "@last/..", "\x00", "a\x00b", "&a [*a]", YAML_BOMB, YAML_DEEP, "*a", "!!python/object/apply:os.system ['true']",
    "{", "[]", "{}", "null", "true", "nan", "inf", "-1", "1e309", "CartPole-v1", "CartPole-v1:ppo",
    "CartPole-v1:reinforce", "CartPole-v1:", ":", "CartPole-v1:ppo:ppo", "cartpole-v1", "LunarLander-v3:ppo",
    "fix-../../x", "fix-", "é🚀\u202e\u200b", "运行", "a/b", "C:\\Windows", "x" * 10_000,
    rf.M.EVAL_RETURN_MEAN, rf.M.ENV_STEPS, "train/", "eval/return_mean,train/entropy",
]  # fmt: skip
ODD_NUMBERS = [0, -1, 1, 2**31, 2**63, -(2**63), 2**70, 10**30, 1e308, -1e308, 1e-320, -0.0, math.nan,
               math.inf, -math.inf]


def _input_schemas() -> dict[str, dict[str, Any]]:
    """Each tool's input schema, read through the client from a server over an empty folder."""

    async def read() -> dict[str, dict[str, Any]]:
        async with Client(create_server(tempfile.mkdtemp(prefix="gsolve-fuzz-schema-"))) as c:
            return {t.name: t.input_schema for t in (await c.list_tools()).tools}

    return anyio.run(read)


SCHEMAS = _input_schemas()


# ---------------------------------------------------------------------------------------------
# Strategies derived from the JSON schema
# ---------------------------------------------------------------------------------------------
def _strings(run_ids: list[str]) -> st.SearchStrategy[str]:
    refs = [*run_ids, *(r[:4] for r in run_ids), *(r[:15] for r in run_ids)]
    return st.one_of(st.sampled_from(ODD_STRINGS + refs), st.text(max_size=40))


def _junk(run_ids: list[str]) -> st.SearchStrategy[Any]:
    """A value of any JSON type (plus non-finite floats), mostly the wrong one for the parameter."""
    leaf = st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(),
                     st.sampled_from(ODD_NUMBERS), _strings(run_ids))
    return st.recursive(leaf, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                       st.dictionaries(_strings(run_ids), inner, max_size=3)),
                        max_leaves=8)


def _override_values(run_ids: list[str]) -> st.SearchStrategy[Any]:
    numbers = st.one_of(st.sampled_from(ODD_NUMBERS), st.integers(), st.floats())
    return st.one_of(numbers, _junk(run_ids), st.fixed_dictionaries({"start": numbers, "end": numbers}),
                     st.lists(numbers, max_size=3))


def _plausible_strings(name: str, run_ids: list[str]) -> list[str]:
    """Values a model would pass for a parameter of this name (so the tool gets past validation)."""
    if "run" in name:
        return ["@last", *run_ids, *(r[:15] for r in run_ids)]
    if name == "env_id":
        return ["CartPole-v1", "LunarLander-v3", "Pendulum-v1", "cartpole-v1"]
    if name == "config_id":
        return ["CartPole-v1:ppo", "CartPole-v1:reinforce", "LunarLander-v3:ppo", "CartPole-v1:a2c"]
    if name.startswith("metric"):
        return [*rf.PPO_COLUMNS, "eval/return_men"]
    if name == "experiment_id":
        return ["fix-20261125-221900-3fa9", *(f"fix-{r}" for r in run_ids)]
    return ["CartPole-v1", "@last", "error", "WARNING"]


def _typed(schema: dict[str, Any], defs: dict[str, Any], run_ids: list[str], name: str,
           wild: bool) -> st.SearchStrategy[Any]:
    """Values of the schema's type: plausible ones within its bounds, or (wild) odd ones across them."""
    if "$ref" in schema:
        return _typed(defs[schema["$ref"].split("/")[-1]], defs, run_ids, name, wild)
    if "anyOf" in schema:
        return st.one_of([_typed(s, defs, run_ids, name, wild) for s in schema["anyOf"]])
    if "enum" in schema:
        valid = st.sampled_from(schema["enum"])
        upper = [v.upper() for v in schema["enum"] if isinstance(v, str)]
        return st.one_of(st.sampled_from(upper), _strings(run_ids)) if wild else valid
    kind = schema.get("type")
    if isinstance(kind, list):  # the published schemas write `X | None` as "type": [X, "null"]
        return st.one_of([_typed({**schema, "type": k}, defs, run_ids, name, wild) for k in kind])
    if kind == "string":
        plausible = st.sampled_from(_plausible_strings(name, run_ids))
        return st.one_of(plausible, _strings(run_ids)) if wild else plausible
    if kind in ("integer", "number"):
        lo, hi = schema.get("minimum", -(2**63)), schema.get("maximum", 2**63)
        if kind == "integer":
            inside, across = st.integers(lo, hi), st.integers(lo - 2, hi + 2)
        else:
            inside, across = st.floats(lo, hi), st.floats(lo - 1, hi + 1)
        return st.one_of(across, st.sampled_from(ODD_NUMBERS)) if wild else inside
    if kind == "boolean":
        return st.booleans()
    if kind == "null":
        return st.none()
    if kind == "array":
        lo, hi = schema.get("minItems", 0), schema.get("maxItems", 12)
        items = _typed(schema.get("items", {}), defs, run_ids, name, wild)
        return st.lists(items, min_size=max(0, lo - 1), max_size=hi + 2) if wild else st.lists(items, min_size=lo,
                                                                                               max_size=min(hi, 4))
    if kind == "object":
        keys = st.one_of(st.sampled_from(config_mod.CONFIG_KEYS), _strings(run_ids))
        return st.dictionaries(keys, _override_values(run_ids), max_size=4)
    return _junk(run_ids)


def arguments(schema: dict[str, Any], run_ids: list[str]) -> st.SearchStrategy[dict[str, Any]]:
    """Argument dicts for a tool: half plausible (every parameter of its type, within its bounds, so
    the tool itself runs), half wild (each parameter odd, of its type or a wrong one, required ones
    sometimes missing, sometimes a parameter the tool does not have)."""
    defs = schema.get("$defs", {})
    fields = schema.get("properties", {})
    required = set(schema.get("required", []))

    def args(wild: bool) -> st.SearchStrategy[dict[str, Any]]:
        props = {k: (st.one_of(_typed(s, defs, run_ids, k, True), _junk(run_ids)) if wild
                     else _typed(s, defs, run_ids, k, False)) for k, s in fields.items()}
        return st.fixed_dictionaries({k: v for k, v in props.items() if k in required},
                                     optional={k: v for k, v in props.items() if k not in required})

    extra = st.dictionaries(st.sampled_from(["bogus", "run_id ", "RUN_ID", "__class__"]), _junk(run_ids), max_size=1)
    anything = st.fixed_dictionaries({}, optional={k: _junk(run_ids) for k in fields})
    return st.one_of(args(False), args(True), anything, st.builds(lambda a, b: {**b, **a}, args(False), extra))


# ---------------------------------------------------------------------------------------------
# One client for the whole module, on a private copy of the real runs
# ---------------------------------------------------------------------------------------------
class Fuzz(NamedTuple):
    portal: BlockingPortal
    client: Client
    run_ids: list[str]
    attempts: list[str]  # process starts or signals the server tried to make (must stay empty)


async def _call(client: Client, tool: str, args: dict[str, Any]) -> Any:
    with anyio.fail_after(CALL_TIMEOUT_S):
        return await client.call_tool(tool, args)


@pytest.fixture(scope="module")
def fuzz(real_runs: RealRuns, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fuzz]:
    runs = tmp_path_factory.mktemp("fuzz") / "runs"
    shutil.copytree(real_runs.runs_dir, runs, symlinks=True)
    attempts: list[str] = []

    def refuse(what: str) -> Any:
        def record(*args: Any, **kwargs: Any) -> Any:
            attempts.append(f"{what}{args}")
            raise AssertionError(f"fuzzing must never {what}")
        return record

    with pytest.MonkeyPatch.context() as mp, start_blocking_portal() as portal:
        # Belt and braces behind the live-run cap: whatever would start or signal a process records it.
        mp.setattr(launcher, "start_trainer", refuse("start a trainer"))
        mp.setattr(launcher, "_looks_like_trainer", refuse("signal a process"))
        mp.setattr(experiment_tools, "start_detached", refuse("start an experiment"))
        mp.setattr(training_tools, "start_resume", refuse("resume a run"))
        mp.setattr(sweep_launch, "start_detached", refuse("start a sweep"))
        with portal.wrap_async_context_manager(Client(create_server(runs, REFUSE_EVERY_START))) as client:
            yield Fuzz(portal, client, sorted(p.name for p in runs.iterdir() if p.is_dir()), attempts)


def check_call(fz: Fuzz, tool: str, args: dict[str, Any]) -> None:
    try:
        res = fz.portal.call(_call, fz.client, tool, args)
    except TimeoutError:
        pytest.fail(f"{tool}({args!r:.300}) did not answer within {CALL_TIMEOUT_S:g}s")
    assert not fz.attempts, f"{tool}({args!r:.300}) tried to {fz.attempts}"
    text = " ".join(getattr(c, "text", "") for c in res.content)
    if res.is_error:
        assert len(text.split()) >= 3, f"{tool}({args!r:.300}) error is not a sentence: {text!r}"
        assert "Traceback" not in text, f"{tool}({args!r:.300}): {text}"
        assert "internal error" not in text, f"{tool}({args!r:.300}) raised an unexpected exception: {text}"
    else:
        assert res.structured_content is not None, f"{tool}({args!r:.300}) returned no structured content"
        size = len(json.dumps(res.structured_content))
        assert size < MAX_RESULT_CHARS, f"{tool}({args!r:.300}) returned {size} characters"


# Inputs this fuzzing found that once failed, kept as explicit examples of the tool they broke.
REGRESSIONS: dict[str, list[dict[str, Any]]] = {
    # With the live-run cap reached and no run live (a cap of 0), check_capacity named live[0]:
    # IndexError, answered as "internal error (IndexError)".
    "start_training": [{"config_id": "CartPole-v1:ppo"}, {"resume": "@last"}],
    "fix_run": [{"run_id": "@last"}],
}


def test_the_fuzz_covers_every_tool() -> None:
    side_effecting = {"start_training", "stop_training", "fix_run", "start_sweep", "check_sweep", "promote_run"}
    assert len(SCHEMAS) >= 20 and side_effecting <= set(SCHEMAS)
    assert all(s.get("type") == "object" for s in SCHEMAS.values())


@pytest.mark.parametrize("tool", sorted(SCHEMAS))
def test_fuzz_tool_arguments(tool: str, fuzz: Fuzz) -> None:
    """Every tool, fuzzed through the in-process client: no exception escapes, no call hangs, every
    error is a sentence without a traceback, every result is bounded.

    start_training (a new run or a resume) and fix_run are fuzzed with all arguments, valid ones
    included, against a server whose live-run cap is 0 (StartLimits(max_live_runs=0)): each call is
    validated and then refused by the cap, so nothing is started. stop_training only signals a
    run whose status is 'running', and none in the copied fixture folder is. The functions that
    would start or signal a process are also replaced by ones that record the attempt, and the
    test fails if any was made.
    """

    examples = EXAMPLES_PER_PLOT_TOOL if tool.startswith("plot_") else EXAMPLES_PER_TOOL

    @settings(max_examples=examples, deadline=None, derandomize=True, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(args=arguments(SCHEMAS[tool], fuzz.run_ids))
    def check(args: dict[str, Any]) -> None:
        check_call(fuzz, tool, args)

    for args in REGRESSIONS.get(tool, []):
        check = example(args=args)(check)
    check()
