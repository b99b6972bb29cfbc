"""Config errors name the file/key, a close match and what would be right."""

from pathlib import Path

import pytest

from gymnasium_solver import cli
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


def test_unknown_env_and_variant():
    with pytest.raises(ConfigError, match="did you mean 'CartPole-v1'"):
        resolve_config("CartPole-v2:ppo")
    with pytest.raises(ConfigError, match="no variant 'pp'.*did you mean 'ppo'"):
        resolve_config("CartPole-v1:pp")


def test_schedule_override_keeps_other_end():
    cfg = resolve_config("CartPole-v1:ppo", ["learning_rate.end=0.0001"])
    preset_start = resolve_config("CartPole-v1:ppo").learning_rate.start  # type: ignore[union-attr]
    assert cfg.learning_rate.start == preset_start and cfg.learning_rate.end == 0.0001  # type: ignore[union-attr]


def test_config_command_prints_round_trippable_yaml(capsys):
    assert cli.main(["config", "CartPole-v1:reinforce", "--set", "seed=3"]) == 0
    out = capsys.readouterr().out
    cfg = config_from_yaml_text(out)
    assert cfg == resolve_config("CartPole-v1:reinforce", ["seed=3"])
    assert config_to_yaml(cfg) == out


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
    reinforce_only = {k for k in CONFIG_KEYS if not applies_to(k, "ppo")}
    assert {"n_steps", "clip_range", "target_kl"} <= ppo_only and "vf_coef" not in ppo_only
    assert reinforce_only == {"episodes_per_update", "use_baseline"}
    assert not applies_to("log_std_init", "ppo", "discrete") and applies_to("log_std_init", "ppo", "box")
    assert applies_to("reward_scale", "reinforce", "discrete") and applies_to("n_steps", None)


@pytest.mark.parametrize("algo", ["ppo", "reinforce"])
def test_every_key_an_algorithm_reads_is_declared_as_applying_to_it(algo: str) -> None:
    """The declaration cannot drift from the code: a key agents/<algo>.py reads applies to <algo>."""
    import re

    from gymnasium_solver.config import CONFIG_KEYS, applies_to

    source = (Path(__file__).resolve().parent.parent / "agents" / f"{algo}.py").read_text(encoding="utf-8")
    used = set(re.findall(r"cfg\.(\w+)", source)) & set(CONFIG_KEYS)
    assert used and [k for k in sorted(used) if not applies_to(k, algo)] == []
