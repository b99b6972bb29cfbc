"""Score the diagnosis on the blind held-out set (tests/fixtures/heldout, scripts/make_heldout.py).

The set was made by someone who did not read the diagnosis or the corpus, with fault types the
team had not named; it is never used to tune the diagnosis. Each case is diagnosed as on a fresh
machine (no solved runs in a runs folder: the references shipped for the preset), and scored on:
the top finding's first suggested change moves ``expected_key`` the ``expected_direction`` way
(strict), or moves one of ``acceptable_keys`` (lenient); healthy runs must get no warning.

    .venv/bin/python scripts/score_heldout.py [HELDOUT_DIR] [--no-preset]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import yaml

from gymnasium_solver.contract.run_folder import parse_metrics_text, read_run_info
from gymnasium_solver.diagnostics import diagnose
from gymnasium_solver.diagnostics.models import Severity

ROOT = Path(__file__).resolve().parent.parent


def main(root: Path, no_preset: bool = False) -> int:
    """``no_preset``: each run diagnosed as one whose preset this machine lacks (an imported run, a
    user's own config): no deviations to revert and no shipped references, so a hit means the
    diagnosis named the mechanism from the run's own metrics and settings."""
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
        ok = change is not None and (change.key, change.direction) == (labels["expected_key"],
                                                                      labels["expected_direction"])
        ok2 = ok or (change is not None and change.key in labels.get("acceptable_keys", []))
        strict += ok
        lenient += ok2
        hits[labels["case"]] = (ok, ok2)
        got = f"{change.set_arg} ({change.direction})" if change else "-"
        rows.append(f"| {labels['case']} | {labels.get('fault_type')} | {top.id if top else '-'} | {got} | "
                    f"{'yes' if ok else 'NO'} | {'yes' if ok2 else 'NO'} |")
    print("| case | fault type | top finding | top change | key+direction | key (lenient) |")
    print("|---|---|---|---|---|---|")
    print("\n".join(rows))
    n = max(faults, 1)
    print(f"\n{screened_line(root, hits)}")
    print(f"held-out fault runs: {faults}; top change moves the planted key the right way: {strict}/{faults} "
          f"({strict / n:.0%}); an acceptable key: {lenient}/{faults} ({lenient / n:.0%}); "
          f"healthy runs with a warning: {healthy_warned}/{healthy}")
    return 0


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
    args = [a for a in sys.argv[1:] if a != "--no-preset"]
    sys.exit(main(Path(args[0]) if args else ROOT / "tests" / "fixtures" / "heldout", no_preset="--no-preset" in sys.argv))
