"""A run from the user's own presets ($GSOLVE_CONFIG_DIR) is also held against our shipped preset and
the RL Zoo's entry for the same environment and algorithm (issue 21, item 3): the keys that differ are
deviations with their source, and `gsolve fix` candidates, exactly as changes to a preset are."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from corpus_util import CORPUS

from gymnasium_solver.config.chain import resolve_config
from gymnasium_solver.config.presets import PACKAGE_CONFIG_DIR
from gymnasium_solver.config.zoo import zoo_entry
from gymnasium_solver.diagnostics import diagnose_run_dir
from gymnasium_solver.diagnostics.models import Diagnosis
from gymnasium_solver.experiments.candidates import build_candidates
from gymnasium_solver.run_store import RunStore

# A failed Acrobot PPO run whose critic explains little of the returns: the symptom the issue saw.
METRICS_FROM = CORPUS / "acrobot_vf_starved_s0"


def _user_preset(folder: Path, env_id: str, variant: dict[str, Any]) -> None:
    folder.mkdir(exist_ok=True)
    (folder / f"{env_id}.yaml").write_text(yaml.safe_dump({"variants": {"ppo": variant}}), encoding="utf-8")


def _run_of(config_id: str, runs: Path, env_id: str) -> str:
    """A finished, unsolved run folder of ``config_id`` as resolved now (no --set overrides), with the
    corpus run's metrics."""
    cfg = resolve_config(config_id).model_dump(mode="json")
    info = json.loads((METRICS_FROM / "run.json").read_text(encoding="utf-8"))
    info.update(config_id=config_id, env_id=env_id, variant=config_id.split(":")[1], overrides={},
                max_env_steps=cfg["max_env_steps"], reward_threshold=cfg["reward_threshold"])
    run = runs / info["run_id"]
    run.mkdir(parents=True)
    (run / "run.json").write_text(json.dumps(info), encoding="utf-8")
    (run / "config.yaml").write_text(yaml.safe_dump(cfg), encoding="utf-8")
    shutil.copy2(METRICS_FROM / "metrics.csv", run / "metrics.csv")
    return str(info["run_id"])


def _diagnose(runs: Path, run_id: str) -> Diagnosis:
    store = RunStore(runs)
    return diagnose_run_dir(store, store.resolve(run_id))


def test_a_user_preset_is_held_against_our_shipped_preset(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The issue's case: the user's Acrobot-v1 PPO preset (ours, copied, with gamma 1.0 and gae_lambda 1.0)."""
    ours = yaml.safe_load((PACKAGE_CONFIG_DIR / "Acrobot-v1.yaml").read_text(encoding="utf-8"))
    variant = {**ours["base"], **ours["variants"]["ppo"], "gamma": 1.0, "gae_lambda": 1.0, "max_env_steps": 100_000}
    _user_preset(tmp_path / "presets", "Acrobot-v1", variant)
    monkeypatch.setenv("GSOLVE_CONFIG_DIR", str(tmp_path / "presets"))
    rid = _run_of("Acrobot-v1:ppo", tmp_path / "runs", "Acrobot-v1")
    d = _diagnose(tmp_path / "runs", rid)

    devs = {x.key: x for x in d.references.deviations}
    assert {"gamma", "gae_lambda"} <= set(devs), devs
    gamma, lam = devs["gamma"], devs["gae_lambda"]
    assert (gamma.source, gamma.preset, gamma.revert.suggested) == ("shipped_preset", 0.98, 0.98)
    assert (lam.source, lam.preset, lam.revert.direction) == ("shipped_preset", 0.97, "decrease")
    # Sized as a preset's deviation is: the discount as a horizon (infinite here), next to ours.
    assert "effective horizon 1/(1-gamma) = inf steps vs our shipped preset Acrobot-v1:ppo's 50" in gamma.size
    assert gamma.reference == "our shipped preset Acrobot-v1:ppo"
    # The RL Zoo's entry is named beside ours where it differs from the run too.
    assert "the RL Zoo's 0.99" in gamma.size
    assert d.references.preset == "Acrobot-v1:ppo" and d.references.compared_with[0].startswith("your preset")
    assert any(c.startswith("our shipped preset Acrobot-v1:ppo") for c in d.references.compared_with)
    # The max_env_steps the user lowered is only a deviation; the budget rules decide about it.
    assert devs["max_env_steps"].source == "shipped_preset"

    # The top finding (explained variance low) is explained by the discount: its first change is ours.
    top = d.findings[0]
    assert top.suggested_changes and top.suggested_changes[0].set_arg == "gamma=0.98", top
    names = {c.name: c for c in build_candidates(d, parent_overrides={})}
    assert "revert gamma" in names and "revert gae_lambda" in names, list(names)
    assert names["revert gae_lambda"].changes == {"gae_lambda": 0.97}


def test_without_a_user_preset_folder_nothing_new_is_compared(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run of our own preset is held against that preset only (our presets differ from the Zoo's on
    purpose: those differences are not the run's doing)."""
    monkeypatch.delenv("GSOLVE_CONFIG_DIR", raising=False)
    rid = _run_of("Acrobot-v1:ppo", tmp_path / "runs", "Acrobot-v1")
    d = _diagnose(tmp_path / "runs", rid)
    assert d.references.deviations == []
    assert len(d.references.compared_with) == 1 and d.references.compared_with[0].startswith("the preset")


def test_with_no_shipped_preset_the_rl_zoo_entry_is_the_reference(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    zoo = zoo_entry("MountainCar-v0", "ppo")
    if zoo is None:
        pytest.skip("rl_zoo3 is not installed (or has no MountainCar-v0 PPO entry)")
    assert not (PACKAGE_CONFIG_DIR / "MountainCar-v0.yaml").exists()
    # The user's preset follows the Zoo's entry except for a discount of 0.5.
    variant = {"algo": "ppo", **{k: v for k, v in zoo.values.items()}, "gamma": 0.5, "batch_size": 64}
    _user_preset(tmp_path / "presets", "MountainCar-v0", variant)
    monkeypatch.setenv("GSOLVE_CONFIG_DIR", str(tmp_path / "presets"))
    rid = _run_of("MountainCar-v0:ppo", tmp_path / "runs", "MountainCar-v0")
    d = _diagnose(tmp_path / "runs", rid)

    assert [(x.key, x.source, x.preset) for x in d.references.deviations] == [("gamma", "rl_zoo", 0.99)]
    gamma = d.references.deviations[0]
    assert gamma.revert.set_arg == "gamma=0.99" and "rl_zoo3 hyperparams/ppo.yml" in gamma.revert.why
    assert "effective horizon 1/(1-gamma) = 2 steps vs the RL Zoo's 100" in gamma.size
    zoo_line = d.references.compared_with[-1]
    assert zoo_line.startswith("the RL Zoo's MountainCar-v0 entry") and "not comparable: normalize" in zoo_line
    # The top finding (a horizon too short) reverts to the Zoo's discount; the same change alone is not repeated.
    assert d.findings[0].id == "horizon_too_short" and d.findings[0].suggested_changes[0].set_arg == "gamma=0.99"
    assert [c.changes for c in build_candidates(d, parent_overrides={})][0] == {"gamma": 0.99}


def test_the_zoo_mapping_takes_initial_values_and_skips_what_it_cannot_map() -> None:
    zoo = zoo_entry("CartPole-v1", "ppo")
    if zoo is None:
        pytest.skip("rl_zoo3 is not installed")
    # learning_rate: lin_0.001 -> its initial value; n_timesteps -> max_env_steps; policy is not ours.
    assert zoo.values["learning_rate"] == 0.001 and zoo.values["clip_range"] == 0.2
    assert zoo.values["max_env_steps"] == 100_000 and "n_timesteps" not in zoo.values
    assert "policy" in zoo.skipped
    assert zoo_entry("CartPole-v1", "reinforce") is None  # the Zoo has no REINFORCE: nothing guessed


def test_a_run_of_an_environment_we_have_no_preset_for_is_held_against_the_zoos_entry(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 22 item 4: `gsolve train MountainCar-v0 --set gamma=0.5` (settings from the Zoo, our presets in use)
    has nothing of ours to revert to; the Zoo's entry is the reference, and its revert a fix candidate."""
    if zoo_entry("MountainCar-v0", "ppo") is None:
        pytest.skip("rl_zoo3 is not installed (or has no MountainCar-v0 PPO entry)")
    monkeypatch.delenv("GSOLVE_CONFIG_DIR", raising=False)
    runs = tmp_path / "runs"
    rid = _run_of("MountainCar-v0:ppo", runs, "MountainCar-v0")
    run_json = runs / rid / "run.json"
    info = json.loads(run_json.read_text(encoding="utf-8"))
    info["overrides"] = {"gamma": 0.5}
    (runs / rid / "config.yaml").write_text(yaml.safe_dump(resolve_config("MountainCar-v0:ppo", ["gamma=0.5"])
                                                           .model_dump(mode="json")), encoding="utf-8")
    for settings, expected in (("zoo", [("gamma", "rl_zoo", 0.99)]), ("default", [("gamma", "rl_zoo", 0.99)]),
                               ("preset", [])):  # a preset this machine lacks: not made from the Zoo's
        info["config_origin"] = {"settings": settings, "where": "x", "sources": {}, "notes": []}
        run_json.write_text(json.dumps(info), encoding="utf-8")
        d = _diagnose(runs, rid)
        assert [(x.key, x.source, x.preset) for x in d.references.deviations] == expected, settings
    info["config_origin"]["settings"] = "zoo"
    run_json.write_text(json.dumps(info), encoding="utf-8")
    d = _diagnose(runs, rid)
    assert d.references.compared_with[0].startswith("the RL Zoo's MountainCar-v0 entry")
    assert {"gamma": 0.99} in [c.changes for c in build_candidates(d, parent_overrides={"gamma": 0.5})]


def test_the_zoo_entry_is_compared_as_gsolve_trains_it() -> None:
    """A run of a Zoo entry is held against the entry as the settings chain resolves it (heldout15 u04, in-sample):
    its policy_kwargs log_std_init is compared, a PPO batch larger than the rollout is the rollout (what SB3 and we
    train with, so never a "revert" the trainer refuses), and an env the Zoo tunes at another version gets that
    version's entry, as the chain found it."""
    mcc = zoo_entry("MountainCarContinuous-v0", "ppo")
    if mcc is None:
        pytest.skip("rl_zoo3 is not installed")
    values = mcc.trained_values
    trained = resolve_config("MountainCarContinuous-v0:ppo")
    assert values["log_std_init"] == trained.log_std_init == -3.29  # type: ignore[attr-defined]
    assert values["batch_size"] == trained.batch_size == 8 < mcc.values["batch_size"]  # type: ignore[attr-defined]
    assert "policy_kwargs" in mcc.skipped
    cartpole_v0 = zoo_entry("CartPole-v0", "ppo", by_name=True)
    assert cartpole_v0 is not None and cartpole_v0.env_id == "CartPole-v1"


def test_a_zoo_log_std_init_under_gsde_is_sized_as_the_std_it_gives() -> None:
    """heldout15 u04 (in-sample): the Zoo's MountainCarContinuous entry uses gSDE, whose std is exp(log_std_init) times
    the features' scale, so the Zoo's -3.29 is sized from the run's logged scale, not as exp(-3.29) = 0.037."""
    if zoo_entry("MountainCarContinuous-v0", "ppo") is None:
        pytest.skip("rl_zoo3 is not installed")
    d = _diagnose(Path(__file__).parent / "fixtures" / "heldout15", "u04")
    dev = next(x for x in d.references.deviations if x.key == "log_std_init")
    assert dev.preset == -3.29 and "with gSDE" in dev.size and "0.0373" not in dev.size, dev.size


def test_a_run_built_on_gsolves_defaults_is_held_against_them_for_the_keys_it_changed() -> None:
    """heldout15 u22 (in-sample): A2C on MiniGrid-Empty-6x6 with gsolve's defaults (no preset, no Zoo entry) and
    --set reward_scale=0.01. Its own overrides are compared with the defaults it would have trained with, except
    those that say where and how long it runs (budget, threshold): reward_scale is the one deviation, sourced
    'default', and reverting it is a fix candidate. Since reward_scale_shrinks_gradient (heldout88 c17) the finding
    names the mechanism (A2C's advantages are not normalised, so the scale shrinks every policy step) and its
    change is that revert."""
    d = _diagnose(Path(__file__).parent / "fixtures" / "heldout15", "u22")
    assert [(x.key, x.value, x.preset, x.source) for x in d.references.deviations] == [
        ("reward_scale", 0.01, 1.0, "default")]
    assert d.references.compared_with[-1].startswith("gsolve's defaults for a2c with discrete actions")
    assert d.references.compared_with[-1].endswith("the keys this run's --set changed: reward_scale")  # not its seed
    top = d.findings[0]
    assert top.id == "reward_scale_shrinks_gradient" and "100x smaller" in top.cause
    first = build_candidates(d, parent_overrides={"reward_scale": 0.01})[0]
    assert first.changes == {"reward_scale": 1.0} and first.name == "finding reward_scale_shrinks_gradient"
    d.findings = []  # the revert alone (the finding's change set would take its place in the list)
    revert = build_candidates(d, parent_overrides={"reward_scale": 0.01})[0]
    assert revert.name == "revert reward_scale" and revert.why == "reward_scale is 0.01 here, 1.0 in gsolve's defaults"


def test_keys_the_zoo_sets_are_not_compared_with_the_defaults(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run of the Zoo's MountainCar-v0 PPO entry with --set gamma=0.5 and reward_scale=0.1: gamma is the Zoo's
    to judge (0.99), reward_scale (which the entry does not set) the defaults' (1.0); the budget it also set is
    neither's here (the Zoo's n_timesteps judges it)."""
    if zoo_entry("MountainCar-v0", "ppo") is None:
        pytest.skip("rl_zoo3 is not installed (or has no MountainCar-v0 PPO entry)")
    monkeypatch.delenv("GSOLVE_CONFIG_DIR", raising=False)
    runs = tmp_path / "runs"
    rid = _run_of("MountainCar-v0:ppo", runs, "MountainCar-v0")
    sets = ["gamma=0.5", "reward_scale=0.1", "reward_threshold=-150"]
    info = json.loads((runs / rid / "run.json").read_text(encoding="utf-8"))
    info["overrides"] = {"gamma": 0.5, "reward_scale": 0.1, "reward_threshold": -150}
    info["config_origin"] = {"settings": "zoo", "where": "x", "sources": {}, "notes": []}
    (runs / rid / "run.json").write_text(json.dumps(info), encoding="utf-8")
    (runs / rid / "config.yaml").write_text(yaml.safe_dump(resolve_config("MountainCar-v0:ppo", sets)
                                                           .model_dump(mode="json")), encoding="utf-8")
    d = _diagnose(runs, rid)
    assert sorted((x.key, x.source, x.preset) for x in d.references.deviations) == [
        ("gamma", "rl_zoo", 0.99), ("reward_scale", "default", 1.0)]


def test_a_zoo_entrys_learning_rate_far_above_tuned_goes_back_to_the_zoos_value() -> None:
    """heldout14 z05 (in-sample): CartPole-v0 DQN with the RL Zoo's CartPole-v1 entry and its learning rate 10x. The
    deviation explains learning_rate_above_tuned, whose first change is the Zoo's own value (not the middle of the
    tuned range), and no fallback finding repeats it."""
    if zoo_entry("CartPole-v0", "dqn", by_name=True) is None:
        pytest.skip("rl_zoo3 is not installed")
    d = _diagnose(Path(__file__).parent / "fixtures" / "heldout14", "z05")
    top = d.findings[0]
    dev = next(x for x in d.references.deviations if x.key == "learning_rate")
    assert top.id == "learning_rate_above_tuned" and dev.source == "rl_zoo" and dev.explains == [top.id]
    first = top.suggested_changes[0]
    assert (first.key, first.suggested, first.direction) == ("learning_rate", dev.preset, "decrease")
    assert "preset_deviation" not in [f.id for f in d.findings]


def test_the_fallback_finding_names_what_the_run_is_held_against() -> None:
    """A preset that solves, the user's own preset, the RL Zoo's tuned entry, or gsolve's untuned defaults: the
    fallback finding never tells a run without a preset that "the preset solves", nor a run where other findings fired
    that "no other mechanism explains the failure"."""
    from gymnasium_solver.diagnostics.attribution import _deviation_words

    zoo = _deviation_words({"rl_zoo"}, True)
    assert zoo[0].startswith("Differs from the RL Zoo's tuned entry") and "preset" not in " ".join(zoo)
    assert "gsolve's defaults" in _deviation_words({"rl_zoo", "default"}, True)[1]
    assert _deviation_words({"default"}, True)[0].startswith("Differs from gsolve's defaults")
    assert "not tuned" in _deviation_words({"default"}, True)[1]
    own = _deviation_words({"user_preset"}, True)
    assert own[0].startswith("Differs from its own preset") and "solves this environment" not in own[1]
    assert _deviation_words({"preset"}, True)[1].startswith("The preset solves this environment")
    assert _deviation_words({"shipped_preset", "user_preset"}, True)[0].startswith("Differs from the preset that solves")
    # Beside other warnings (a coin flip's lucky evaluation with n_envs changed), not "no other mechanism": the title
    # says that what fired does not trace to the changes.
    beside = _deviation_words({"default"}, False)[0]
    assert beside.endswith(", which no mechanism found traces to") and "no other mechanism" not in beside


def test_the_zoos_switches_the_diagnosis_does_not_weigh_are_still_reverted_by_fix() -> None:
    """heldout24 w04 (in-sample to this test; its fix verdict errored before): MountainCarContinuous-v0 PPO from the
    Zoo's entry with its normalize dropped (normalize_observations and normalize_rewards false). The diagnosis
    compares only the entry's numbers, so nothing explained the failure and `gsolve fix` had nothing to try. The
    switches are listed as unranked differences (not evidence: the findings do not change), and fix reverts them."""
    if zoo_entry("MountainCarContinuous-v0", "ppo") is None:
        pytest.skip("rl_zoo3 is not installed")
    d = _diagnose(Path(__file__).parent / "fixtures" / "heldout24", "w04")
    assert [(x.key, x.value, x.preset, x.source) for x in d.references.unranked] == [
        ("normalize_observations", False, True, "rl_zoo"), ("normalize_rewards", False, True, "rl_zoo")]
    assert not {"normalize_observations", "normalize_rewards"} & {x.key for x in d.references.deviations}
    assert all(not f.suggested_changes for f in d.findings)  # nothing the findings would try
    cands = build_candidates(d, parent_overrides={"normalize_observations": False, "normalize_rewards": False})
    assert [(c.name, c.changes) for c in cands] == [
        ("revert normalize_observations", {"normalize_observations": True}),
        ("revert normalize_rewards", {"normalize_rewards": True}),
        ("revert all unranked", {"normalize_observations": True, "normalize_rewards": True})]
    assert cands[0].why == "normalize_observations is false here, true in the RL Zoo"


def test_a_key_the_diagnosis_sizes_is_never_also_unranked() -> None:
    """heldout14 z05 (CartPole-v0 DQN, learning rate 10x the Zoo's): learning_rate is a deviation, the Zoo's other
    settings are the run's own, so nothing is unranked."""
    if zoo_entry("CartPole-v0", "dqn", by_name=True) is None:
        pytest.skip("rl_zoo3 is not installed")
    d = _diagnose(Path(__file__).parent / "fixtures" / "heldout14", "z05")
    assert "learning_rate" in {x.key for x in d.references.deviations} and d.references.unranked == []


def test_the_zoos_off_policy_numbers_are_held_against_like_its_on_policy_ones() -> None:
    """heldout38 g02 (in-sample: read after its blind scoring, which it missed): CartPole-v1 QR-DQN from the Zoo's
    entry with buffer_size 256 for the entry's 100,000. While the Zoo's off-policy numbers were not compared, the
    buffer was no deviation, replay_buffer_too_small counted as 'at the reference's values' (score halved) and the
    budget ranked first. Now the buffer is a deviation the buffer finding explains, ranked first."""
    if zoo_entry("CartPole-v1", "qrdqn") is None:
        pytest.skip("rl_zoo3 is not installed")
    d = _diagnose(Path(__file__).parent / "fixtures" / "heldout38", "g02")
    dev = next(x for x in d.references.deviations if x.key == "buffer_size")
    assert (dev.value, dev.preset, dev.source) == (256, 100_000, "rl_zoo") and "buffer_size" not in {
        x.key for x in d.references.unranked}
    top = d.findings[0]
    assert top.id == "replay_buffer_too_small" and dev.explains[0] == top.id
    assert (top.suggested_changes[0].key, top.suggested_changes[0].direction) == ("buffer_size", "increase")
