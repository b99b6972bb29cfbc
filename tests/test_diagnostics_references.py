"""The diagnosis holds a run against solved runs of the same environment in the runs folder."""

from __future__ import annotations

from pathlib import Path

from corpus_util import copy_case

from gymnasium_solver.diagnostics import diagnose_run_dir
from gymnasium_solver.run_folder import M
from gymnasium_solver.run_store import RunStore


def test_solved_runs_in_the_store_are_the_references(tmp_path: Path) -> None:
    for case in ("healthy_s0", "healthy_s1", "healthy_s2"):
        copy_case(case, tmp_path)
    rid = copy_case("lr_low_s0", tmp_path)
    store = RunStore(tmp_path)
    d = diagnose_run_dir(store, store.resolve(rid))
    refs = d.references
    assert "3 solved CartPole-v1 ppo run(s) in the runs folder" in refs.solved_source
    assert len(refs.solved_runs) == 3 and refs.steps_to_solve is not None
    kl = next(b for b in refs.bands if b.metric == M.APPROX_KL)
    # lr 1e-5: the policy barely moves next to solved runs over the same env steps.
    assert kl.position == "below" and kl.observed < kl.band_low / 100 and 0 < kl.env_steps_from < kl.env_steps_to
    assert d.findings[0].evidence[0].metric in (M.APPROX_KL, "config:learning_rate")


def test_fewer_than_three_solved_runs_fall_back_to_the_shipped_references(tmp_path: Path) -> None:
    copy_case("healthy_s0", tmp_path)
    rid = copy_case("lr_low_s0", tmp_path)
    store = RunStore(tmp_path)
    d = diagnose_run_dir(store, store.resolve(rid))
    assert "shipped with the project" in d.references.solved_source
    assert any(b.metric == M.APPROX_KL and b.position == "below" for b in d.references.bands)
