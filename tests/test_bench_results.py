"""Performance figures in README.md and docs/ are rendered from bench/results/*.json (bench/render_tables.py),
and the drift gate (bench/bench_check.py, `make bench-check`) names each figure that moved.

No long training here: the gate is tested against a doctored record, and once end to end on one
CartPole seed of a copied preset folder (marked slow)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from types import ModuleType

import pytest
import yaml
from shared_util import load_bench

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def gate() -> ModuleType:
    return load_bench("bench_check")


@pytest.fixture(scope="module")
def results(gate: ModuleType) -> ModuleType:
    """The bench_results module the gate and the renderer import (one copy, so its models compare equal)."""
    return gate.bench_results


@pytest.fixture(scope="module")
def render(gate: ModuleType) -> ModuleType:
    return load_bench("render_tables")


def _results(results: ModuleType, rows: list[tuple[int, bool, int]], name: str = "gate"):  # noqa: ANN202
    measured = results.start_measuring(["bench/bench_check.py", "--record"])
    preset_rows = results.PresetRows(arms={"ours": [results.Row(seed=s, solved=ok, env_steps=n, wall_s=1.0)
                                                    for s, ok, n in rows]}, budget=200_000, config_sha="abc")
    return results.Results(name=name, description="test", measured=measured, presets={"CartPole-v1:ppo": preset_rows})


def test_a_results_file_reads_back_what_was_written(results: ModuleType, tmp_path: Path) -> None:
    written = _results(results, [(0, True, 2048), (1, False, 200_000)], name="roundtrip")
    path = results.write_results(written, tmp_path)
    assert path == tmp_path / "roundtrip.json"
    read = results.read_results("roundtrip", tmp_path)
    assert read == written
    assert read.measured.machine.cores >= 1 and "torch" in read.measured.versions and read.measured.commit
    path.write_text("{}", encoding="utf-8")
    with pytest.raises(SystemExit, match="is not a results file"):
        results.read_results("roundtrip", tmp_path)


def test_the_zoo_bench_writes_each_arms_rows_with_the_preset_and_its_budget(results: ModuleType,
                                                                            tmp_path: Path) -> None:
    bench = load_bench("bench_presets_vs_zoo")
    measured = results.start_measuring(["bench/bench_presets_vs_zoo.py", "--write", "t"])
    rows = {"CartPole-v1:ppo": {arm: [{"arm": arm, "seed": 3, "solved": True, "env_steps": 2048, "wall_s": 1.23456,
                                       "best_eval": 500.0}] for arm in ("ours", "zoo")}}
    bench.write("t", measured, rows, tmp_path)
    r = results.read_results("t", tmp_path)
    assert r.measured.command == ".venv/bin/python bench/bench_presets_vs_zoo.py --write t"
    assert "RL Zoo" in r.description and r.presets["CartPole-v1:ppo"].budget == 200_000
    assert r.presets["CartPole-v1:ppo"].arms["zoo"] == [results.Row(seed=3, solved=True, env_steps=2048, wall_s=1.235)]


def test_the_spread_names_the_slowest_seed_and_counts_an_unsolved_one_last(results: ModuleType) -> None:
    rows = [results.Row(seed=s, solved=ok, env_steps=n, wall_s=w)
            for s, ok, n, w in [(10, True, 8192, 3.0), (11, True, 4096, 2.0), (12, False, 6144, 9.0)]]
    s = results.spread(rows)
    assert (s.median_env_steps, s.slowest_seed, s.slowest_env_steps, s.solved, s.lower_bound) == (6144, 12, 6144, 2, True)


def test_every_generated_block_is_what_the_results_files_render(render: ModuleType) -> None:
    assert render.stale_blocks() == [], "run `make docs-tables` (a figure was edited by hand, or a results file changed)"


def test_every_renderer_is_used_once_in_the_docs_and_no_block_is_unknown(render: ModuleType) -> None:
    names = [m["name"] for path in render.doc_files() for m in render.BLOCK.finditer(path.read_text(encoding="utf-8"))]
    assert sorted(names) == sorted(render.RENDERERS)


def test_a_hand_edit_inside_a_generated_block_is_named(render: ModuleType, tmp_path: Path) -> None:
    shutil.copytree(ROOT / "bench" / "results", tmp_path / "bench" / "results")
    (tmp_path / "docs").mkdir()
    for path in render.doc_files():
        shutil.copy(path, tmp_path / path.relative_to(ROOT))
    readme = tmp_path / "README.md"
    text = readme.read_text(encoding="utf-8")
    block = next(m for m in render.BLOCK.finditer(text) if m["name"] == "readme-speed")
    edited = block[0].replace("env steps", "env steps (4,096 on a good day)", 1)
    readme.write_text(text.replace(block[0], edited), encoding="utf-8")
    assert render.stale_blocks(tmp_path) == ["README.md: readme-speed"]


def _undated_prose(text: str, render: ModuleType) -> str:
    """README without its generated blocks, code blocks (example output) and dated history notes (a
    paragraph that says when it was measured: "Measured once, on 2026-11-26 ...")."""
    text = re.sub(r"^```.*?^```", "", render.BLOCK.sub("", text), flags=re.MULTILINE | re.DOTALL)
    dated = re.compile(r"measured (?:once, )?on \d{4}-\d{2}-\d{2}", re.IGNORECASE)
    return "\n\n".join(p for p in re.split(r"\n\s*\n|\n(?=- )", text) if not dated.search(p.replace("\n", " ")))


def test_readmes_speed_figures_all_come_from_results_files(render: ModuleType) -> None:
    """Outside generated blocks, example output and dated history notes README states no figure of env
    steps or speed-up: each one comes from bench/results/."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "<!-- generated: readme-speed -->" in text
    prose = _undated_prose(text, render)
    figures = re.findall(r"\d[\d,.]*\s*(?:k\s+)?env steps|\d+(?:\.\d+)?x (?:less|faster|slower)|\bvs \d[\d,]*", prose)
    assert figures == [], f"README states figures no results file backs: {figures}"
    # and no typed duration, install size or test count (bench/bench_install.py writes those)
    typed = re.findall(r"\d[\d,.]*\s*(?:s|min|seconds|minutes|GB|MB)\b|\d[\d,]* tests", prose)
    assert typed == [], f"README states durations, sizes or test counts no record backs: {typed}"


def test_the_gate_names_a_figure_that_moved_and_says_the_preset_changed(results: ModuleType, gate: ModuleType) -> None:
    recorded = _results(results, [(0, True, 2048), (1, True, 6144)])
    now = {"CartPole-v1:ppo": [results.Row(seed=0, solved=True, env_steps=2048, wall_s=1.0),
                               results.Row(seed=1, solved=True, env_steps=8192, wall_s=1.0)]}
    drifts = gate.compare(recorded, now)
    assert drifts == [gate.Drift("CartPole-v1:ppo seed 1", "solved at 6,144 env steps", "solved at 8,192 env steps")]
    text = gate.report(recorded, drifts, {"CartPole-v1:ppo": "changed"}, [])
    assert "CartPole-v1:ppo seed 1: recorded solved at 6,144 env steps, now solved at 8,192 env steps" in text
    assert "resolved config changed since the record" in text and "make bench-record" in text
    assert gate.compare(recorded, {"CartPole-v1:ppo": now["CartPole-v1:ppo"][:1]}) == []


def test_the_gate_says_when_the_machine_or_the_libraries_differ_from_the_records(results: ModuleType,
                                                                                  gate: ModuleType) -> None:
    recorded = _results(results, [(0, True, 2048)]).measured
    here = results.machine()
    assert gate.environment_notes(recorded, here, results.versions()) == []
    other = here.model_copy(update={"cpu": "AMD EPYC 7B13"})
    notes = gate.environment_notes(recorded, other, {**results.versions(), "torch": "9.9"})
    assert "another machine" in notes[0] and "AMD EPYC 7B13" in notes[0]
    assert f"torch {results.versions()['torch']} -> 9.9" in notes[1] and "not promised" in notes[2]


def _fake_training(gate: ModuleType, results: ModuleType, monkeypatch: pytest.MonkeyPatch, steps: int) -> None:
    """The gate's training replaced by one figure: CartPole-v1:ppo seed 0 solved at ``steps`` env steps."""
    monkeypatch.setattr(gate, "GATE", {"CartPole-v1:ppo": (0,)})
    monkeypatch.setattr(gate, "measure", lambda plan, jobs: {
        "CartPole-v1:ppo": [results.Row(seed=0, solved=True, env_steps=steps, wall_s=1.0)]})


def _elsewhere(results: ModuleType, rows: list[tuple[int, bool, int]], cpu: str, name: str = "gate"):  # noqa: ANN202
    """A record measured on another CPU."""
    r = _results(results, rows, name)
    return r.model_copy(update={"measured": r.measured.model_copy(
        update={"machine": r.measured.machine.model_copy(update={"cpu": cpu})})})


def test_the_gate_checks_against_its_own_machines_record_and_names_it(results: ModuleType, gate: ModuleType,
                                                                      tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """Env steps differ across CPUs: gate.json of another CPU and this machine's gate-<cpu>.json; the check
    takes this machine's, and without one it says the figures cannot be judged here."""
    epyc = results.machine().model_copy(update={"cpu": "AMD EPYC 7B13", "kernels": "amd-avx2"})
    assert gate.machine_record_name(epyc) == "gate-amd-epyc-7b13-amd-avx2"
    assert gate.machine_record_name(epyc.model_copy(update={"kernels": None})) == "gate-amd-epyc-7b13"
    assert gate.machine_record_name(results.machine().model_copy(update={"cpu": "Intel(R) Xeon(R) Processor",
                                                                         "kernels": None})) == \
        "gate-intel-r-xeon-r-processor"
    results.write_results(_elsewhere(results, [(0, True, 14_336)], "Some Other CPU"), tmp_path)
    _fake_training(gate, results, monkeypatch, 22_528)
    args = ["--results-dir", str(tmp_path)]
    assert gate.main(args) == 1
    out = capsys.readouterr().out
    assert "recorded solved at 14,336 env steps, now solved at 22,528 env steps" in out
    assert "holds no record of this machine" in out and "Some Other CPU" in out and "make bench-record-machine" in out

    assert gate.main(["--add-machine", *args]) == 0  # this machine's record beside gate.json
    mine = gate.machine_record_name(results.machine())
    assert (tmp_path / "gate.json").exists() and (tmp_path / f"{mine}.json").exists()
    assert [r.name for r in gate.records(tmp_path)] == ["gate", mine]
    capsys.readouterr()
    assert gate.main(args) == 0
    assert f"match bench/results/{mine}.json" in capsys.readouterr().out
    _fake_training(gate, results, monkeypatch, 2_048)  # a regression on this machine
    assert gate.main(args) == 1
    assert f"differ from bench/results/{mine}.json" in capsys.readouterr().out

    assert gate.main(["--record", *args]) == 0  # a deliberate change: gate.json here, the other records go
    assert "removed" in capsys.readouterr().out
    assert [r.name for r in gate.records(tmp_path)] == ["gate"]
    assert gate.records(tmp_path)[0].measured.machine == results.machine()
    with pytest.raises(SystemExit, match="gate.json is this machine's record already"):
        gate.main(["--add-machine", *args])


def test_the_same_cpu_model_with_other_kernels_is_another_machine(results: ModuleType, gate: ModuleType, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """Two AMD EPYCs, one with AVX512 and one without, train some seeds to other env steps: a record of this CPU model
    that ran other kernels (or does not say which) is not this machine's, and the check says why a figure may differ."""
    here = results.machine()
    assert here.kernels  # what torch dispatches to on this machine, recorded with every figure
    r = _results(results, [(0, True, 14_336)], "gate")
    for kernels in ("other-avx512", None):
        other = r.model_copy(update={"measured": r.measured.model_copy(
            update={"machine": here.model_copy(update={"kernels": kernels})})})
        results.write_results(other, tmp_path)
        _fake_training(gate, results, monkeypatch, 22_528)
        assert gate.main(["--results-dir", str(tmp_path)]) == 1
        out = " ".join(capsys.readouterr().out.split())
        assert "holds no record of this machine" in out and f"this one: {here.label}" in out
        assert ("does not say which kernels its CPU ran" in out) == (kernels is None)


def test_the_gate_table_says_which_figures_another_machine_records_differently(results: ModuleType,
                                                                              render: ModuleType) -> None:
    here = _elsewhere(results, [(0, True, 12_288), (1, True, 14_336)], "Intel(R) Xeon(R) Processor")
    there = _elsewhere(results, [(0, True, 12_288), (1, True, 22_528)], "AMD EPYC", name="gate-amd-epyc")
    text = render.render_gate_table({"gate": here, "gate-amd-epyc": there})
    assert "| `CartPole-v1:ppo` | 1 | yes | 14,336 |" in text
    flat = " ".join(text.split())
    assert "`bench/results/gate-amd-epyc.json`, AMD EPYC" in flat
    assert "1 of its 2 figures differ from the table's (`CartPole-v1:ppo` seed 1 22,528)" in flat
    assert "record per machine" not in render.render_gate_table({"gate": here})


def test_the_records_in_the_repo_name_their_command_commit_machine_and_libraries(results: ModuleType,
                                                                                 gate: ModuleType) -> None:
    files = results.all_results()
    assert "gate" in files
    for r in files.values():
        assert r.measured.command.startswith(".venv/bin/python bench/") and re.fullmatch(r"[0-9a-f]{7}", r.measured.commit)
        assert r.measured.machine.cpu and r.measured.versions["torch"] and r.measured.versions["gymnasium"]
    assert {k: tuple(r.seed for r in p.arms["ours"]) for k, p in files["gate"].presets.items()} == gate.GATE


@pytest.mark.slow
def test_changing_a_presets_value_fails_the_gate_naming_the_figure(gate: ModuleType, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """Record one CartPole seed from a copy of our presets, change the preset's learning rate by hand, check."""
    from gymnasium_solver.config.presets import PACKAGE_CONFIG_DIR

    presets = tmp_path / "presets"
    shutil.copytree(PACKAGE_CONFIG_DIR, presets)
    path = presets / "CartPole-v1.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    # A short budget (the learning rate decays to 0 over it): seed 0 solves within it (the figure is this machine's).
    data["variants"]["ppo"]["max_env_steps"] = 24576
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    monkeypatch.setenv("GSOLVE_CONFIG_DIR", str(presets))
    monkeypatch.setattr(gate, "GATE", {"CartPole-v1:ppo": (0,)})
    record_dir = tmp_path / "results"
    assert gate.main(["--record", "--results-dir", str(record_dir)]) == 0
    assert gate.main(["--results-dir", str(record_dir)]) == 0  # the same preset: the same figure
    (recorded,) = gate.bench_results.read_results("gate", record_dir).presets["CartPole-v1:ppo"].arms["ours"]
    assert recorded.solved and recorded.env_steps < 24576
    data["variants"]["ppo"]["learning_rate"] = 1e-6
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    capsys.readouterr()
    assert gate.main(["--results-dir", str(record_dir)]) == 1
    out = capsys.readouterr().out
    assert (f"CartPole-v1:ppo seed 0: recorded solved at {recorded.env_steps:,} env steps, now not solved in 24,576 "
            "env steps") in out
    assert "its preset's resolved config changed since the record" in out


@pytest.mark.parametrize(("unchanged", "winner", "verdict", "expected"), [
    ([(0, False), (1, True), (2, True), (3, False)], True, "unlucky_seed", "fixed"),  # fails a fresh seed too
    ([(0, False), (1, True), (2, True), (3, False)], False, "unlucky_seed", "unlucky_seed"),  # nothing beat it
    ([(0, False), (1, True), (2, True), (3, True)], True, "unlucky_seed", "unlucky_seed"),  # every fresh seed
    ([(0, False), (1, False), (2, True), (3, False)], False, "not_fixed", "not_fixed"),
])
def test_recorded_fix_verdicts_are_reapplied_under_todays_rule(unchanged: list[tuple[int, bool]], winner: bool,
                                                               verdict: str, expected: str) -> None:
    rd = load_bench("render_diagnosis")
    row = {"set": "s", "case": "c01_s1", "fault": True, "verdict": verdict, "unchanged": unchanged,
           "winner": {"set_args": ["n_steps=128"]} if winner else None,
           "held_out": [{"seed": 9, "solved": True}] * 3}
    assert rd.reapplied(row) == expected
    text = " ".join(rd.render_reapplied({"f.json": [row]}).split())
    if expected == verdict:
        assert "gives each of the 1 rows above the verdict it was recorded with" in text
    else:
        assert "1 of the 1 rows above change (unlucky_seed -> fixed): 1 confirmed faults" in text
        assert "`f.json`: s c01" in text


def test_a_figure_records_the_cpu_model_cpuinfo_names(results: ModuleType, monkeypatch: pytest.MonkeyPatch,
                                                      tmp_path: Path) -> None:
    import cpu_identity  # the module bench_results reads /proc/cpuinfo with (scripts/ is on sys.path)

    monkeypatch.setattr(cpu_identity, "CPUINFO", tmp_path / "cpuinfo")
    (tmp_path / "cpuinfo").write_text("processor\t: 0\nmodel name\t: AMD EPYC 9B14\n", encoding="utf-8")
    assert results.machine().cpu == "AMD EPYC 9B14"
    (tmp_path / "cpuinfo").write_text("processor\t: 0\n", encoding="utf-8")  # a CPU that names no model
    assert results.machine().cpu == (results.platform.processor() or results.platform.machine())


def test_a_rendered_percentage_is_rounded_down_never_up_across_a_target() -> None:
    """162/191 is 84.8%: rendered as 85% it would read as issue 22's 85% met."""
    rd = load_bench("render_diagnosis")
    assert rd._pct(162, 191) == "162/191 (84.8%)"
    assert rd._pct(7, 7) == "7/7 (100.0%)" and rd._pct(2, 3) == "2/3 (66.6%)" and rd._pct(0, 0) == "0/0"


def test_the_pooled_spread_counts_how_often_a_table_of_20_misses_the_target(render: ModuleType) -> None:
    import numpy as np

    spread_mod = render.render_spread
    rng = np.random.default_rng(0)
    assert spread_mod.chance_past(np.full(60, 8192.0), 3.0, rng) == 0.0  # every seed alike: never past
    # One seed in 60 at 10x the rest: a table of 20 draws it with probability 1 - (59/60)^20 (about 29%).
    pool = np.array([4096.0] * 59 + [40960.0])
    assert abs(spread_mod.chance_past(pool, 3.0, rng) - (1 - (59 / 60) ** 20)) < 0.02
    low, high = spread_mod.interval(np.arange(1.0, 61.0), 50, rng)
    assert low < 30.5 < high


def test_the_pooled_spread_refuses_files_of_other_configs_or_a_repeated_seed(render: ModuleType,
                                                                            results: ModuleType) -> None:
    a = _results(results, [(1, True, 4096), (2, True, 8192)], name="a")
    b = _results(results, [(3, True, 4096)], name="b")
    assert len(render.render_spread.pooled_rows({"a": a, "b": b}, "CartPole-v1:ppo", ("a", "b"))) == 3
    with pytest.raises(ValueError, match="repeat a seed"):
        render.render_spread.pooled_rows({"a": a, "b": a}, "CartPole-v1:ppo", ("a", "b"))
    other = b.model_copy(deep=True)
    other.presets["CartPole-v1:ppo"].config_sha = "def"
    with pytest.raises(ValueError, match="different configs"):
        render.render_spread.pooled_rows({"a": a, "b": other}, "CartPole-v1:ppo", ("a", "b"))


def test_a_setting_added_at_its_default_keeps_a_recorded_preset_as_today(results: ModuleType) -> None:
    """With the resolved config kept, a key the config model gained since (at its default) does not make an old table
    "not as today"; a changed value does. Without it, only the hash can tell, and a stale hash says no."""
    now = results.resolved_config("CartPole-v1:dqn")
    rows = results.PresetRows(arms={"ours": []}, config_sha="stale", config=now)
    assert results.same_as_today(rows, "CartPole-v1:dqn")
    older = {key: value for key, value in now.items() if key != "otel"}  # recorded before the model had otel
    assert results.same_as_today(rows.model_copy(update={"config": older}), "CartPole-v1:dqn")
    # a key missing from the record whose value today is not its default: the preset set it since
    unset = {key: value for key, value in now.items() if key != "learning_rate"}
    assert not results.same_as_today(rows.model_copy(update={"config": unset}), "CartPole-v1:dqn")
    changed = {**now, "learning_rate": 0.5}
    assert not results.same_as_today(rows.model_copy(update={"config": changed}), "CartPole-v1:dqn")
    assert not results.same_as_today(rows.model_copy(update={"config": None}), "CartPole-v1:dqn")
    assert results.same_as_today(rows.model_copy(update={"config": None, "config_sha": results.config_sha(
        "CartPole-v1:dqn")}), "CartPole-v1:dqn")


def test_the_targets_table_names_each_target_a_side_by_side_misses(render: ModuleType, results: ModuleType) -> None:
    """bench/render_targets.py: a preset's newest side by side with the Zoo, target by target (issue 23)."""
    targets = render.render_targets
    files = results.all_results()
    text = targets.render_targets(files, today=lambda rows, config_id: False)
    assert text.count("| no |") == len(targets.NEWEST)  # no file measured the preset as today
    assert "of 300 (ab_cartpole_a2c_clip, before arm)" in text  # the 300-seed arm beside the pooled 60 seeds
    # Slow our CartPole-v1:ppo arm down: 10x the wall (past 0.5 s and under 5x the Zoo's) and one seed 4x the median.
    doctored = files[targets.NEWEST["CartPole-v1:ppo"]].model_copy(deep=True)
    ours = doctored.presets["CartPole-v1:ppo"].arms["ours"]
    for row in ours:
        row.wall_s *= 10
    median = results.spread(ours).median_env_steps
    ours[0].env_steps = int(4 * median)
    text = targets.render_targets({**files, targets.NEWEST["CartPole-v1:ppo"]: doctored}, today=lambda rows, c: False)
    summary = text.split("Not met on these tables: ")[1]
    assert ("CartPole-v1:ppo: wall at least 5x less, slowest within 2.5x the median, median wall at most 0.5 s"
            in " ".join(summary.split()))
