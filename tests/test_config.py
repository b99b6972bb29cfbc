"""Config errors name the file/key, a close match and what would be right."""

from pathlib import Path

import pytest
import yaml

from gymnasium_solver.cli import app as cli
from gymnasium_solver.config import ConfigError, config_from_yaml_text, config_to_yaml, resolve_config


def test_preset_resolves_with_spec_threshold():
    cfg = resolve_config("CartPole-v1:ppo")
    assert cfg.algo == "ppo" and cfg.env_id == "CartPole-v1"
    assert cfg.reward_threshold == 475.0  # from the Gymnasium spec


def test_unknown_key_names_close_match():
    with pytest.raises(ConfigError, match="unknown key 'learning_rat'.*did you mean 'learning_rate'"):
        resolve_config("CartPole-v1:ppo", ["learning_rat=0.1"])


def test_wrong_type_names_key():
    with pytest.raises(ConfigError, match="n_envs"):
        resolve_config("CartPole-v1:ppo", ["n_envs=many"])


def test_batch_larger_than_rollout_says_what_fits():
    with pytest.raises(ConfigError, match=r"batch_size \(4096\) is larger than the rollout.*use batch_size <= 512"):
        resolve_config("CartPole-v1:ppo", ["batch_size=4096", "n_envs=16", "n_steps=32"])


def test_negative_learning_rate():
    with pytest.raises(ConfigError, match="learning_rate must be >= 0"):
        resolve_config("CartPole-v1:ppo", ["learning_rate=-0.1"])


def test_bad_override_syntax():
    with pytest.raises(ConfigError, match="must look like key=value"):
        resolve_config("CartPole-v1:ppo", ["learning_rate"])


def test_a_flow_mapping_without_a_space_after_its_colon_is_refused_with_the_spelling_meant():
    """`env_kwargs={map_name:8x8}` is YAML for the key 'map_name:8x8' with no value: the environment's constructor
    would refuse an unknown keyword in words about its own arguments; the override says what to write."""
    with pytest.raises(ConfigError, match=r"'map_name:8x8' reads as one key with no value .*write \{map_name: 8x8\}"):
        resolve_config("FrozenLake-v1:ppo", ["env_kwargs={map_name:8x8}"])
    with pytest.raises(ConfigError, match=r"write \{b: 2\}"):
        resolve_config("FrozenLake-v1:ppo", ["env_kwargs={a: {b:2}}"])
    assert resolve_config("FrozenLake-v1:ppo", ["env_kwargs={map_name: 8x8}"]).env_kwargs == {"map_name": "8x8"}


def test_unknown_env_and_variant():
    with pytest.raises(ConfigError, match="did you mean 'CartPole-v1'"):
        resolve_config("CartPole-v2:ppo")
    with pytest.raises(ConfigError, match="no variant 'pp'.*did you mean 'ppo'"):
        resolve_config("CartPole-v1:pp")
    # A name that is neither a variant nor an algorithm (TRPO is sb3-contrib's, not ours): the algorithms are named.
    with pytest.raises(ConfigError, match="trains without the preset: ppo, reinforce, dqn, qrdqn, a2c, sac, td3, tqc"):
        resolve_config("Pendulum-v1:trpo")


def test_schedule_override_keeps_other_end():
    cfg = resolve_config("CartPole-v1:ppo", ["learning_rate.end=0.0001"])
    preset_start = resolve_config("CartPole-v1:ppo").learning_rate.start  # type: ignore[union-attr]
    assert cfg.learning_rate.start == preset_start and cfg.learning_rate.end == 0.0001  # type: ignore[union-attr]


def test_a_schedule_given_one_end_says_where_the_other_came_from():
    """A new user's `--set 'learning_rate={start: 0.1}'` on the DQN preset's constant trained a schedule ending at the
    preset's value, silently; the note says so (both spellings, the whole dict and the dotted key)."""
    from gymnasium_solver.config import resolve_with_origin

    for pair in ("learning_rate={start: 0.1}", "learning_rate.start=0.1"):
        r = resolve_with_origin("CartPole-v1:dqn", [pair])
        assert (r.config.learning_rate.start, r.config.learning_rate.end) == (0.1, 0.00431567)  # type: ignore[union-attr]
        assert any("end 0.00431567 kept from the settings" in n and "give both start and end" in n
                   for n in r.origin.notes), r.origin.notes
    whole = resolve_with_origin("CartPole-v1:dqn", ["learning_rate={start: 0.1, end: 0.0}"])
    assert not any("kept from the settings" in n for n in whole.origin.notes)


def test_config_command_prints_round_trippable_yaml(capsys):
    assert cli.main(["config", "CartPole-v1:reinforce", "--set", "seed=3"]) == 0
    out = capsys.readouterr().out
    cfg = config_from_yaml_text(out)
    assert cfg == resolve_config("CartPole-v1:reinforce", ["seed=3"])
    # One line per key, each with where its value came from (the chain: preset, default, override, spec).
    values = [line for line in out.splitlines() if not line.startswith("#")]
    assert [line.split(":")[0] for line in values] == list(yaml.safe_load(config_to_yaml(cfg)))
    sources = dict(line.rsplit("  # ", 1) for line in values)
    assert sources["seed: 3"] == "override" and sources["algo: reinforce"] == "preset"
    assert sources["reward_threshold: 475.0"] == "spec" and sources["use_baseline: true"] == "default"
    assert out.startswith("# settings: preset: ") and "CartPole-v1.yaml (variant 'reinforce')" in out.splitlines()[0]


def test_cli_reports_config_error_without_traceback(capsys):
    assert cli.main(["config", "CartPole-v1:ppo", "--set", "gama=0.9"]) == 2
    err = capsys.readouterr().err
    assert "did you mean 'gamma'" in err and "Traceback" not in err


def test_list_envs_shows_variants_and_thresholds(capsys):
    assert cli.main(["list-envs"]) == 0
    out = capsys.readouterr().out
    assert "CartPole-v1:ppo" in out and "CartPole-v1:reinforce" in out and "475" in out


def test_which_keys_apply_to_which_algorithm_is_declared_on_the_fields() -> None:
    from gymnasium_solver.config import CONFIG_KEYS, applies_to

    ppo_only = {k for k in CONFIG_KEYS if not applies_to(k, "reinforce")}
    reinforce_only = {k for k in CONFIG_KEYS if not applies_to(k, "ppo") and applies_to(k, "reinforce")}
    assert {"n_steps", "clip_range", "target_kl"} <= ppo_only and "vf_coef" not in ppo_only
    assert reinforce_only == {"episodes_per_update", "use_baseline"}
    assert not applies_to("log_std_init", "ppo", "discrete") and applies_to("log_std_init", "ppo", "box")
    assert applies_to("reward_scale", "reinforce", "discrete") and applies_to("n_steps", None)
    # SB3 algorithms: their own keys, and not the shared keys they ignore (which must keep their default).
    assert applies_to("buffer_size", "dqn") and applies_to("buffer_size", "sac") and not applies_to("buffer_size", "a2c")
    assert not applies_to("vf_coef", "dqn") and applies_to("vf_coef", "a2c") and not applies_to("reward_scale", "sac")


@pytest.mark.parametrize("algo", ["ppo", "reinforce"])
def test_every_key_an_algorithm_reads_is_declared_as_applying_to_it(algo: str) -> None:
    """The declaration cannot drift from the code: a key gymnasium_solver/agents/<algo>.py reads applies to <algo>."""
    import re

    from gymnasium_solver.config import CONFIG_KEYS, applies_to

    source = (Path(__file__).resolve().parent.parent / "gymnasium_solver" / "agents" / f"{algo}.py").read_text(encoding="utf-8")
    used = set(re.findall(r"cfg\.(\w+)", source)) & set(CONFIG_KEYS)
    assert used and [k for k in sorted(used) if not applies_to(k, algo)] == []


# --- limits: every field bounded, the reason on the field (issue 8, defect 2) ------------------


@pytest.mark.parametrize(
    ("overrides", "key", "right"),
    [
        ({"max_env_steps": 10**30}, "max_env_steps", "must be <= 1000000000"),
        ({"max_env_steps": 1e30}, "max_env_steps", "must be <= 1000000000"),
        ({"eval_episodes": 10**9}, "eval_episodes", "must be <= 1000"),
        ({"n_steps": 10**9}, "n_steps", "must be <= 65536"),
        ({"n_steps": 65536, "n_envs": 32}, "n_envs\\*n_steps", "use n_steps <= 32768 for 32 envs"),
        ({"n_epochs": 10**9}, "n_epochs", "must be <= 100"),
        ({"hidden_sizes": [1000000, 1000000]}, "hidden_sizes", "every layer needs 1..4096 units"),
        ({"hidden_sizes": [4096, 4096, 4096]}, "hidden_sizes", "at most 16,777,216 fit"),
        ({"torch_threads": 1000000}, "torch_threads", "must be <= 256"),
        ({"n_envs": 1024, "vectorization": "async"}, "n_envs=1024", "use n_envs <= 64 or vectorization: sync"),
        ({"eval_episodes": 100, "vectorization": "async"}, "eval_episodes=100", "eval_episodes <= 64"),
        ({"seed": 2**70}, "seed", "must be <= 4294967295"),
        ({"max_grad_norm": float("nan")}, "max_grad_norm", "must be a finite number"),
        ({"max_grad_norm": float("inf")}, "max_grad_norm", "or null for no clipping"),
        ({"learning_rate": float("nan")}, "learning_rate", "must be a finite number"),
        ({"learning_rate": {"end": float("inf")}}, "learning_rate.end", "must be a finite number"),
        ({"learning_rate": 0.0}, "learning_rate", "must start above 0"),
        ({"clip_range": {"start": 0.2, "end": -1.0}}, "clip_range", "must be >= 0"),
        ({"clip_range": float("inf")}, "clip_range", "must be a finite number"),
        ({"ent_coef": float("nan")}, "ent_coef", "must be a finite number"),
        ({"target_kl": float("nan")}, "target_kl", "must be a finite number"),
        ({"reward_threshold": float("nan")}, "reward_threshold", "finite number, or .inf"),
        ({"reward_threshold": float("-inf")}, "reward_threshold", "finite number, or .inf"),
        ({"checkpoint_freq": 10}, "checkpoint_freq=10", "use checkpoint_freq >= 200 or 0"),
        ({"log_std_init": 1000.0}, "log_std_init", "must be <= 5"),
        ({"env_kwargs": {f"k{i}": i for i in range(40)}}, "env_kwargs", "at most 32"),
        ({"hidden_sizes": 64}, "hidden_sizes", r"valid list \(got 64\); write a list, e.g. hidden_sizes=\[64, 64\]"),
    ],
)
def test_out_of_range_values_are_refused_with_key_and_what_fits(overrides, key, right) -> None:
    """Each of these validated and started a run (or failed inside the trainer) before limits."""
    with pytest.raises(ConfigError, match=f"{key}.*{right}"):
        resolve_config("CartPole-v1:ppo", overrides)


def test_a_range_error_says_why_the_limit_is_there() -> None:
    with pytest.raises(ConfigError) as err:
        resolve_config("CartPole-v1:ppo", ["n_epochs=1000000000"])
    assert "n_epochs: must be <= 100 (published settings use 1..30" in str(err.value)


def test_limits_a_demanding_user_needs_are_accepted() -> None:
    cfg = resolve_config("CartPole-v1:ppo", {
        "max_env_steps": 10**9, "seed": 2**32 - 1, "n_envs": 1024, "n_steps": 1024, "batch_size": 4096,
        "n_epochs": 100, "hidden_sizes": [4096, 4096], "eval_episodes": 1000, "checkpoint_freq": 10**6})
    assert cfg.n_envs * cfg.n_steps == 2**20
    assert resolve_config("CartPole-v1:ppo", ["vectorization=async", "n_envs=64", "eval_episodes=64"]).n_envs == 64


def test_torch_threads_above_this_machines_cpus_is_refused_when_starting(monkeypatch) -> None:
    import os

    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    assert resolve_config("CartPole-v1:ppo", ["torch_threads=2"]).torch_threads == 2
    with pytest.raises(ConfigError, match="torch_threads=3 is more than this machine's 2 CPUs; use torch_threads between 1 and 2"):
        resolve_config("CartPole-v1:ppo", ["torch_threads=3"])
    # a run folder written on a larger machine still loads
    big = config_to_yaml(resolve_config("CartPole-v1:ppo")).replace("torch_threads: 1", "torch_threads: 16")
    assert config_from_yaml_text(big).torch_threads == 16


def test_infinite_reward_threshold_means_never_solved_and_round_trips() -> None:
    cfg = resolve_config("CartPole-v1:ppo", ["reward_threshold=.inf"])
    assert cfg.reward_threshold == float("inf")
    text = config_to_yaml(cfg)
    assert "reward_threshold: .inf" in text and config_from_yaml_text(text) == cfg


def test_every_bounded_field_says_why_and_the_docs_list_every_limit() -> None:
    from gymnasium_solver.config import CONFIG_FIELDS, CROSS_FIELD_LIMITS, limit_reason

    unbounded_by_nature = {"vectorization", "activation", "normalize_observations", "normalize_rewards",
                           "normalize_advantages",
                           "shared_network", "ortho_init", "use_baseline", "algo", "tensorboard", "mlflow",
                           "ent_coef_auto"}  # booleans and closed choices
    assert [k for k in CONFIG_FIELDS if k not in unbounded_by_nature and not limit_reason(k)] == []
    docs = (Path(__file__).resolve().parent.parent / "docs" / "configs.md").read_text(encoding="utf-8")
    limits = docs.split("## Limits", 1)[1].split("\n## ", 1)[0]
    missing = [k for k in [*CONFIG_FIELDS, *CROSS_FIELD_LIMITS] if f"| `{k}` |" not in limits]
    assert missing == []


# --- the config is a tagged union on algo ------------------------------------------------------


def test_each_algorithm_has_its_own_config_model() -> None:
    from gymnasium_solver.config import CONFIG_MODELS, Algo, PPOConfig, ReinforceConfig

    assert set(CONFIG_MODELS) == set(Algo)
    ppo, reinforce = resolve_config("CartPole-v1:ppo"), resolve_config("CartPole-v1:reinforce")
    assert isinstance(ppo, PPOConfig) and isinstance(reinforce, ReinforceConfig)
    assert not hasattr(reinforce, "n_steps") and not hasattr(ppo, "use_baseline")
    assert ppo.vf_coef == reinforce.vf_coef == 0.5  # shared: REINFORCE's baseline uses it too
    assert "n_steps:" not in config_to_yaml(reinforce) and "use_baseline:" not in config_to_yaml(ppo)


@pytest.mark.parametrize(
    ("config_id", "override", "message"),
    [
        ("CartPole-v1:reinforce", "gae_lambda=0.9", "'gae_lambda' is a ppo or a2c key; a reinforce config has no 'gae_lambda'"),
        ("CartPole-v1:reinforce", "clip_range_vf=0.2", "'clip_range_vf' is a ppo key"),
        ("CartPole-v1:ppo", "episodes_per_update=4", "'episodes_per_update' is a reinforce key"),
        ("CartPole-v1:ppo", "use_baseline=false", "'use_baseline' is a reinforce key; a ppo config"),
    ],
)
def test_set_naming_another_algorithms_key_says_which_algorithm_it_belongs_to(config_id, override, message) -> None:
    with pytest.raises(ConfigError, match=message):
        resolve_config(config_id, [override])


def test_preset_naming_another_algorithms_key_is_an_error(tmp_path, monkeypatch) -> None:
    (tmp_path / "CartPole-v1.yaml").write_text(
        "base: {gae_lambda: 0.9}\nvariants:\n  ppo: {algo: ppo}\n  reinforce: {algo: reinforce}\n", encoding="utf-8")
    (tmp_path / "Acrobot-v1.yaml").write_text("variants:\n  x: {gamma: 0.9}\n  y: {algo: ppx}\n", encoding="utf-8")
    monkeypatch.setenv("GSOLVE_CONFIG_DIR", str(tmp_path))
    assert resolve_config("CartPole-v1:ppo").gae_lambda == 0.9  # type: ignore[union-attr]
    with pytest.raises(ConfigError, match=r"CartPole-v1.yaml \(variant 'reinforce'\): 'gae_lambda' is a ppo or a2c key"):
        resolve_config("CartPole-v1:reinforce")
    with pytest.raises(ConfigError, match="missing key 'algo'; set it to one of ppo, reinforce"):
        resolve_config("Acrobot-v1:x")
    with pytest.raises(ConfigError, match="unknown algorithm 'ppx'; did you mean 'ppo'"):
        resolve_config("Acrobot-v1:y")


@pytest.mark.parametrize("algo", ["ppo", "reinforce"])
def test_old_config_yaml_with_every_key_of_every_algorithm_still_loads(algo: str) -> None:
    """Run folders written before the union hold every field; the read side drops the other
    algorithm's keys (a preset or --set may not name them)."""
    import yaml

    fixtures = sorted((Path(__file__).resolve().parent / "fixtures" / "corpus").glob("*/config.yaml"))
    old = next(p for p in fixtures if yaml.safe_load(p.read_text(encoding="utf-8"))["algo"] == algo)
    raw = yaml.safe_load(old.read_text(encoding="utf-8"))
    assert {"n_steps", "use_baseline"} <= set(raw)  # written when every key was in every config
    cfg = config_from_yaml_text(old.read_text(encoding="utf-8"), str(old))
    assert cfg.algo == algo and cfg.learning_rate is not None


# --- lists declared once: argparse choices and MCP schemas derive from the enums ------------------


def _choices(parser, *path: str, option: str) -> list[str]:
    import argparse

    for name in path:
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = sub.choices[name]
    action = next(a for a in parser._actions if option in a.option_strings)
    return [str(c) for c in action.choices]


def test_cli_choices_are_the_enums() -> None:
    from gymnasium_solver.config import Algo
    from gymnasium_solver.contract import run_folder as rf

    parser = cli.build_parser()
    assert _choices(parser, "runs", option="--algo") == [a.value for a in Algo]
    assert _choices(parser, "runs", option="--status") == [s.value for s in rf.RunStatus]


def _enum_values(schema: dict, prop: str) -> list[str]:
    """The enum a tool parameter allows, through $ref/anyOf (None allowed is left out)."""
    defs = schema.get("$defs", {})

    def walk(node: dict) -> list[str]:
        if "$ref" in node:
            return walk(defs[node["$ref"].rsplit("/", 1)[-1]])
        if "enum" in node:
            return [v for v in node["enum"] if v is not None]
        return [v for sub in node.get("anyOf", []) for v in walk(sub)]

    return walk(schema["properties"][prop])


@pytest.mark.anyio
async def test_mcp_parameter_schemas_are_the_enums(tmp_path) -> None:
    from mcp import Client

    from gymnasium_solver.config import Algo
    from gymnasium_solver.contract import run_folder as rf
    from gymnasium_solver.diagnostics.models import Severity
    from mcp_server.server import create_server

    async with Client(create_server(tmp_path)) as client:
        tools = {t.name: t.input_schema for t in (await client.list_tools()).tools}
    assert _enum_values(tools["list_runs"], "algo") == [a.value for a in Algo]
    assert _enum_values(tools["list_runs"], "status") == [s.value for s in rf.RunStatus]
    assert _enum_values(tools["compare_runs"], "algo") == [a.value for a in Algo]
    assert _enum_values(tools["get_run_logs"], "level") == [lv.value for lv in rf.LogLevel]
    assert _enum_values(tools["diagnose_run"], "min_severity") == [s.value for s in Severity]


def test_no_hand_typed_copy_of_an_enum_in_the_adapters() -> None:
    import re

    root = Path(__file__).resolve().parent.parent
    copies = re.compile(r'\["ppo", "reinforce"|"running", "completed", "failed"|"DEBUG", "INFO", "WARNING"'
                        r'|"info", "warning", "critical"')
    found = [f"{p.relative_to(root)}:{i}" for folder in ("gymnasium_solver", "mcp_server")
             for p in sorted((root / folder).rglob("*.py"))
             for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if copies.search(line)]
    assert found == []


def test_old_reinforce_config_shows_vf_coef_and_hides_ppo_keys_in_summaries() -> None:
    """vf_coef weights REINFORCE's baseline loss; a hand-kept list had hidden it (issue 8, defect 6).
    Old config.yaml files hold PPO keys too: the union, not the file, decides what is shown."""
    import yaml

    from gymnasium_solver.run_store.details import key_hyperparameters

    fixtures = sorted((Path(__file__).resolve().parent / "fixtures" / "corpus").glob("*/config.yaml"))
    raw = next(c for c in (yaml.safe_load(p.read_text(encoding="utf-8")) for p in fixtures) if c["algo"] == "reinforce")
    shown = key_hyperparameters(raw, "discrete")
    assert {"vf_coef", "use_baseline", "episodes_per_update"} <= set(shown)
    assert not {"n_steps", "clip_range", "target_kl", "gae_lambda", "log_std_init"} & set(shown)


def test_every_config_in_the_fault_corpus_loads() -> None:
    """Limits bound resources, not judgement: the deliberately bad settings the diagnosis corpus
    trains with (ent_coef=10, learning_rate=1000, ...) stay valid configs."""
    fixtures = sorted((Path(__file__).resolve().parent / "fixtures").rglob("config.yaml"))
    assert len(fixtures) > 50
    for path in fixtures:
        config_from_yaml_text(path.read_text(encoding="utf-8"), str(path))


def test_lifting_the_time_limit_needs_a_threshold_of_its_own() -> None:
    """env_kwargs max_episode_steps above the spec's limit would still be judged against the spec's
    threshold, set for the spec's episode length (issue 26): refused unless reward_threshold is stated."""
    with pytest.raises(ConfigError) as info:
        resolve_config("CartPole-v1:ppo", ["env_kwargs={max_episode_steps: 5000}"])
    text = str(info.value)
    assert "max_episode_steps=5000 lifts CartPole-v1's time limit of 500 steps" in text
    assert "set reward_threshold explicitly if you mean it" in text and "\n" not in text
    stated = resolve_config("CartPole-v1:ppo", ["env_kwargs={max_episode_steps: 5000}", "reward_threshold=4000"])
    assert stated.reward_threshold == 4000 and stated.env_kwargs == {"max_episode_steps": 5000}
    shorter = resolve_config("CartPole-v1:ppo", ["env_kwargs={max_episode_steps: 200}"])
    assert shorter.reward_threshold == 475  # a shorter limit claims nothing it has not earned


def test_env_kwargs_dotted_adds_a_whole_value_replaces() -> None:
    """`env_kwargs.k=v` adds to the preset's keyword arguments; `env_kwargs={...}` replaces them, so a fix can
    remove one a user's preset sets (merging made `env_kwargs={}` a silent no-op)."""
    cid = "LunarLander-v3:ppo_continuous"  # the one shipped preset with env_kwargs: {continuous: true}
    assert resolve_config(cid).env_kwargs == {"continuous": True}
    assert resolve_config(cid, ["env_kwargs.gravity=-5.0"]).env_kwargs == {"continuous": True, "gravity": -5.0}
    assert resolve_config(cid, ["env_kwargs={gravity: -5.0}"]).env_kwargs == {"gravity": -5.0}
    assert resolve_config(cid, ["env_kwargs={}"]).env_kwargs == {}
    assert resolve_config(cid, {"env_kwargs": {}}).env_kwargs == {}  # a mapping (MCP, a recorded run) too


def test_a_dotted_env_kwargs_override_is_recorded_whole() -> None:
    """run.json's overrides hold the env_kwargs the run used, so replaying them (a whole value replaces) rebuilds
    the same environment instead of dropping the preset's `continuous: true`."""
    from gymnasium_solver.cli.resolving import resolve_for_training

    resolved, recorded = resolve_for_training("LunarLander-v3:ppo_continuous", ["env_kwargs.gravity=-5.0"])
    assert recorded == {"env_kwargs": {"continuous": True, "gravity": -5.0}}
    assert resolve_config("LunarLander-v3:ppo_continuous", recorded).env_kwargs == resolved.config.env_kwargs


def test_dotted_overrides_still_write_as_yaml_and_json() -> None:
    """A dotted override's dict (config.presets.Additions) is written as a plain mapping: sweeps dump their
    fixed overrides to YAML (a RepresenterError before)."""
    import json

    from gymnasium_solver.config import parse_overrides

    parsed = parse_overrides(["learning_rate.start=0.003", "env_kwargs.gravity=-5.0"])
    assert yaml.safe_load(yaml.safe_dump(parsed)) == {"learning_rate": {"start": 0.003}, "env_kwargs": {"gravity": -5.0}}
    assert json.loads(json.dumps(parsed)) == parsed


def test_a_short_budget_gets_ten_evaluations_when_nothing_sets_eval_freq() -> None:
    """A solve is only seen at an evaluation: gsolve's default eval_freq (10,000) never leaves a budget fewer than
    ten (the Zoo's MountainCarContinuous entry, 20,000 env steps, solved between its two and was missed)."""
    from gymnasium_solver.config.chain import resolve_with_origin

    r = resolve_with_origin("MountainCar-v0:ppo", ["max_env_steps=20000"], use_zoo=False)
    assert r.config.eval_freq == 2000
    assert any("eval_freq: 2,000 env steps" in n for n in r.origin.notes)
    assert r.origin.sources["eval_freq"] == "default"
    assert resolve_config("MountainCar-v0:ppo", ["max_env_steps=200000"], use_zoo=False).eval_freq == 10_000
    assert resolve_config("MountainCar-v0:ppo", ["max_env_steps=5"], use_zoo=False).eval_freq == 1
    # A value someone chose stays: the user's --set, a preset's.
    assert resolve_config("MountainCar-v0:ppo", ["max_env_steps=20000", "eval_freq=10000"],
                          use_zoo=False).eval_freq == 10_000
    assert resolve_config("CartPole-v1:ppo", ["max_env_steps=4096"]).eval_freq == 2048


def test_a_budget_below_one_rollout_is_said_before_the_run_trains_the_whole_rollout() -> None:
    """PPO and A2C collect and train a rollout whole (as SB3 does): a budget under one trains more env steps than
    asked (the Zoo's BipedalWalker-v3 rollout is 65,536 env steps), and the run's notes say so with the numbers."""
    from gymnasium_solver.config.chain import resolve_with_origin

    notes = resolve_with_origin("CartPole-v1:ppo", ["max_env_steps=1000"]).origin.notes
    said = [n for n in notes if n.startswith("max_env_steps:")]
    assert said == ["max_env_steps: the 1,000-step budget is less than one rollout (32 envs x 64 steps = 2,048 env "
                    "steps), which is collected and trained whole: the run trains 2,048 env steps; raise "
                    "max_env_steps, or shorten the rollout (n_steps, n_envs)"]
    assert "8 envs x 5 steps = 40" in " ".join(resolve_with_origin(
        "MountainCar-v0:a2c", ["max_env_steps=39", "n_envs=8"], use_zoo=False).origin.notes)
    # The eval_freq note does not promise ten evaluations a rollout-sized run cannot make: they come between rollouts.
    eval_note = next(n for n in resolve_with_origin("MountainCar-v0:a2c", ["max_env_steps=39", "n_envs=8"],
                                                    use_zoo=False).origin.notes if n.startswith("eval_freq:"))
    assert eval_note.endswith("evaluations happen between rollouts, so with rollouts of 40 env steps this run "
                              "evaluates once"), eval_note
    eval_note = next(n for n in resolve_with_origin("MountainCar-v0:ppo", ["max_env_steps=20000", "n_steps=1024",
                                                                            "n_envs=4"], use_zoo=False).origin.notes
                     if n.startswith("eval_freq:"))
    assert eval_note.endswith("with rollouts of 4,096 env steps this run evaluates 5 times"), eval_note
    assert "between rollouts" not in " ".join(resolve_with_origin("MountainCar-v0:ppo", ["max_env_steps=20000"],
                                                                  use_zoo=False).origin.notes)
    for config_id, sets in (("CartPole-v1:ppo", ["max_env_steps=2048"]), ("CartPole-v1:dqn", ["max_env_steps=10"]),
                            ("CartPole-v1:reinforce", ["max_env_steps=10"])):
        assert not any(n.startswith("max_env_steps:") for n in resolve_with_origin(config_id, sets).origin.notes)


def test_a_name_typed_in_another_case_is_suggested_first():
    """A new user's `gsolve train CartPole-v1:PPO` listed the variants without 'did you mean': difflib compares
    characters as they are, so 'PPO' matched nothing."""
    from gymnasium_solver.config.build import close_matches

    assert close_matches("PPO", ["ppo", "reinforce", "dqn", "a2c"])[0] == "ppo"
    assert close_matches("Learning_Rate", ["learning_rate", "n_steps"])[0] == "learning_rate"
    with pytest.raises(ConfigError, match="no variant 'PPO'; did you mean 'ppo'"):
        resolve_config("CartPole-v1:PPO")
