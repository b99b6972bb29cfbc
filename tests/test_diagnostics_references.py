"""The diagnosis holds a run against solved runs of the same environment in the runs folder."""

from __future__ import annotations

from pathlib import Path

from corpus_util import copy_case

from gymnasium_solver.contract.run_folder import M
from gymnasium_solver.diagnostics import diagnose_run_dir
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


def test_a_memoised_diagnosis_follows_new_references_and_changed_files(tmp_path: Path) -> None:
    """Diagnoses of finished runs are memoised (issue 8: the server answers from memory); the memo
    must never hide a new solved sibling or a rewritten run.json."""
    copy_case("healthy_s0", tmp_path)
    rid = copy_case("lr_low_s0", tmp_path)
    store = RunStore(tmp_path)
    run_dir = store.resolve(rid)
    first = diagnose_run_dir(store, run_dir)
    assert diagnose_run_dir(store, run_dir) is first  # memoised: nothing changed
    assert "shipped with the project" in first.references.solved_source
    for case in ("healthy_s1", "healthy_s2"):
        copy_case(case, tmp_path)
    with_siblings = diagnose_run_dir(store, run_dir)
    assert "3 solved CartPole-v1 ppo run(s) in the runs folder" in with_siblings.references.solved_source
    with open(run_dir / "run.json", "a") as f:
        f.write("\n")  # same content, new size: a rewrite the memo must notice
    assert diagnose_run_dir(store, run_dir) is not with_siblings


def test_every_shipped_reference_file_matches_todays_preset() -> None:
    """A reference file whose preset fingerprint no longer matches is silently unused (the diagnosis loses its
    solved-run bands): a new config key, or a retune without `scripts/make_references.py --train`, shows here."""
    import json as _json

    from gymnasium_solver.diagnostics.references import SHIPPED_DIR, preset_fingerprint

    files = sorted(Path(SHIPPED_DIR).glob("*.json"))
    assert len(files) >= 10
    stale = [p.name for p in files
             if _json.loads(p.read_text(encoding="utf-8")).get("preset_fingerprint")
             != preset_fingerprint(p.stem.replace(".", ":", 1))]
    assert stale == []
