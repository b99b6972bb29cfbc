"""Score the diagnosis on the blind held-out set (tests/fixtures/heldout, scripts/make_heldout.py).

The set was made by someone who did not read the diagnosis or the corpus, with fault types the
team had not named; it is never used to tune the diagnosis. Each case is diagnosed as on a fresh
machine (no solved runs in a runs folder: the references shipped for the preset), and scored on:
the top finding's first suggested change moves ``expected_key`` the ``expected_direction`` way
(strict), or moves one of ``acceptable_keys`` (lenient); healthy runs must get no warning.

    .venv/bin/python scripts/score_heldout.py [HELDOUT_DIR] [--no-preset]
    .venv/bin/python scripts/score_heldout.py HELDOUT_DIR --record    # the set's one blind scoring, kept

``--record`` scores the set both ways (with its config id; with nothing to revert) and writes the figures,
with the commit of the diagnosis code that scored them, into bench/analysis/blind_heldout.json, which
bench/render_tables.py renders into README.md and docs/diagnostics.md. A set is scored blind once: a set
already recorded is refused. To record a past blind scoring, run this script with PYTHONPATH set to a
worktree of that commit: the commit recorded is the one the diagnosis was imported from.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from gymnasium_solver.contract.run_folder import parse_metrics_text, read_run_info
from gymnasium_solver.diagnostics import diagnose
from gymnasium_solver.diagnostics.models import Severity, same_direction

ROOT = Path(__file__).resolve().parent.parent


BLIND = ROOT / "bench" / "analysis" / "blind_heldout.json"


def main(root: Path, no_preset: bool = False) -> int:
    """``no_preset``: each run diagnosed as one whose preset this machine lacks (an imported run, a
    user's own config): no deviations to revert and no shipped references, so a hit means the
    diagnosis named the mechanism from the run's own metrics and settings."""
    print(score(root, no_preset)["report"])
    return 0


def score(root: Path, no_preset: bool = False) -> dict[str, Any]:
    """The set's scores (faults, strict, lenient, healthy, healthy_warned) and the printed ``report``."""
    rows, strict, lenient, faults, healthy_warned, healthy = [], 0, 0, 0, 0, 0
    hits: dict[str, tuple[bool, bool]] = {}
    for folder in sorted(p for p in root.iterdir() if (p / "labels.json").is_file()):
        labels = json.loads((folder / "labels.json").read_text(encoding="utf-8"))
        info = read_run_info(folder)
        config = yaml.safe_load((folder / "config.yaml").read_text(encoding="utf-8"))
        if no_preset:
            info = info.model_copy(update={"config_id": f"{info.env_id}:imported", "variant": "imported"})
            config = {**config, "variant": "imported"}
        d = diagnose(info, config, parse_metrics_text((folder / "metrics.csv").read_text(encoding="utf-8")))
        loud = [f for f in d.findings if f.severity != Severity.INFO]
        top = loud[0] if loud else None
        change = top.suggested_changes[0] if top and top.suggested_changes else None
        if labels.get("healthy"):
            healthy += 1
            healthy_warned += bool(loud)
            rows.append(f"| {labels['case']} | healthy | {top.id if top else '-'} | - | {'NO' if loud else 'yes'} | |")
            continue
        faults += 1
        ok = change is not None and change.key == labels["expected_key"] and same_direction(
            change.key, change.direction, labels["expected_direction"])
        ok2 = ok or (change is not None and change.key in labels.get("acceptable_keys", []))
        strict += ok
        lenient += ok2
        hits[labels["case"]] = (ok, ok2)
        got = f"{change.set_arg} ({change.direction})" if change else "-"
        rows.append(f"| {labels['case']} | {labels.get('fault_type')} | {top.id if top else '-'} | {got} | "
                    f"{'yes' if ok else 'NO'} | {'yes' if ok2 else 'NO'} |")
    n = max(faults, 1)
    report = "\n".join([
        "| case | fault type | top finding | top change | key+direction | key (lenient) |", "|---|---|---|---|---|---|",
        *rows, "", screened_line(root, hits),
        f"held-out fault runs: {faults}; top change moves the planted key the right way: {strict}/{faults} "
        f"({strict / n:.0%}); an acceptable key: {lenient}/{faults} ({lenient / n:.0%}); "
        f"healthy runs with a warning: {healthy_warned}/{healthy}"])
    return {"faults": faults, "strict": strict, "lenient": lenient, "healthy": healthy,
            "healthy_warned": healthy_warned, "report": report}


def diagnosis_commit() -> str:
    """The commit of the gymnasium_solver the diagnosis was imported from (a worktree of a past commit under
    PYTHONPATH records that commit), with '+edits' when its diagnosis code differs from it."""
    import gymnasium_solver

    src = Path(gymnasium_solver.__file__).resolve().parent.parent

    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(src), *args], capture_output=True, text=True, check=False).stdout.strip()

    commit = git("rev-parse", "--short=7", "HEAD") or "unknown"
    return commit + ("+edits" if git("diff", "--name-only", "HEAD", "--", "gymnasium_solver/diagnostics") else "")


def record(root: Path, path: Path = BLIND) -> dict[str, Any]:
    """Score ``root`` both ways and add it to the blind record; ValueError when the set is recorded already."""
    sys.path.insert(0, str(ROOT / "bench"))
    import bench_results

    data = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {"sets": {}}
    if root.name in data["sets"]:
        raise ValueError(f"{root.name} was scored blind at {data['sets'][root.name]['commit']} already: a set is "
                         f"scored blind once (its record is in {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path})")
    measured = bench_results.start_measuring()
    with_id, bare = score(root), score(root, no_preset=True)
    entry = {"commit": diagnosis_commit(), "date": measured.date, "machine": measured.machine.model_dump(),
             "faults": with_id["faults"], "healthy": with_id["healthy"],
             "with_config_id": {k: with_id[k] for k in ("strict", "lenient", "healthy_warned")},
             "nothing_to_revert": {k: bare[k] for k in ("strict", "lenient", "healthy_warned")}}
    data["sets"][root.name] = entry
    data["sets"] = dict(sorted(data["sets"].items(), key=lambda kv: kv[1]["date"]))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    return entry


def screened_line(root: Path, hits: dict[str, tuple[bool, bool]]) -> str:
    """The same scores over the planted faults bench/screen_faults.py confirmed (their config fails on at
    least 2 of 3 seeds): a fault label taken on one seed is itself a one-seed verdict."""
    path = root / "seed_screen.json"
    if not path.is_file():
        return "seed screen: not run for this set (bench/screen_faults.py)"
    cases = json.loads(path.read_text(encoding="utf-8"))["cases"]
    confirmed = [c for c in hits if c in cases and cases[c]["fault"]]
    lucky = sorted(c for c in hits if c in cases and not cases[c]["fault"])
    k1, k2, n = sum(hits[c][0] for c in confirmed), sum(hits[c][1] for c in confirmed), len(confirmed)
    return (f"confirmed faults (config fails >= 2 of 3 seeds): {n} of {len(hits)}; top change right: {k1}/{n}; "
            f"acceptable key: {k2}/{n}; not faults (config solves 2+ of 3 seeds): {', '.join(lucky) or 'none'}")


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a not in ("--no-preset", "--record")]
    folder = Path(args[0]) if args else ROOT / "tests" / "fixtures" / "heldout"
    if not folder.is_dir() or not any((p / "labels.json").is_file() for p in folder.iterdir()):
        sys.exit(f"score_heldout: {folder} is not a held-out set (a folder of run folders with labels.json, e.g. "
                 "tests/fixtures/heldout12; scripts/make_heldout.py makes one)")
    if "--record" in sys.argv:
        try:
            entry = record(folder.resolve())
        except ValueError as e:
            sys.exit(f"score_heldout: {e}")
        print(f"recorded {folder.name} at {entry['commit']}: with its config id {entry['with_config_id']}, "
              f"nothing to revert {entry['nothing_to_revert']} of {entry['faults']} faults")
        sys.exit(0)
    sys.exit(main(folder, no_preset="--no-preset" in sys.argv))
