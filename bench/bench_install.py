"""The README's own figures: what `make demo`, a plain `pip install .` and `make test` take on a fresh clone.

Each part runs on a fresh ``git clone`` of HEAD in a temporary folder, as a newcomer (and CI) would:

- **demo**: ``make demo`` (creates .venv, the core install, trains CartPole-v1:ppo, shows the run), timed
  from launch to exit, with what it printed. pip's cache is whatever this machine has (warm after any
  earlier install), and the figure says so.
- **pip**: ``python3 -m venv V && V/bin/pip install --quiet CLONE`` outside the clone, timed; the venv's size
  on disk and its largest packages; then ``V/bin/gsolve train CartPole-v1:ppo`` from another folder (the
  presets are package data) and the env steps it solved at.
- **tests**: ``make install`` (every extra) and then ``make test`` (ruff, mypy, the whole suite), each timed,
  the suite's count of passed tests and what it printed last.

Writes bench/analysis/install.json; a part not re-measured (``--parts``) keeps its recorded figures, each
part with its own commit, date and load. ``bench/render_tables.py`` renders README.md's ``readme-demo``,
``readme-install`` and ``readme-test`` blocks from it, so no figure there is typed. The load matters:
the README prints it beside each figure.

    .venv/bin/python bench/bench_install.py                      # all three parts (~15-25 min on 2 cores)
    .venv/bin/python bench/bench_install.py --parts demo pip     # the two quick ones (~4 min)
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_results  # noqa: E402 - a sibling script, not a package

ROOT = bench_results.ROOT
OUT = ROOT / "bench" / "analysis" / "install.json"
PARTS = ("demo", "pip", "tests")
LARGEST = 3  # the venv's largest packages named beside its size
SOLVED = re.compile(r"^solved (?P<config>\S+): eval .* at (?P<steps>\d+) env steps after (?P<seconds>[\d.]+) s")
PASSED = re.compile(r"^(?P<passed>\d+) passed(?P<rest>.*) in (?P<seconds>[\d.]+)s")


def parse_solved(lines: list[str]) -> dict[str, Any] | None:
    """The trainer's closing 'solved CONFIG: eval ... at N env steps after S s' line, parsed."""
    for line in lines:
        if m := SOLVED.match(line):
            return {"config": m["config"], "env_steps": int(m["steps"]), "seconds": float(m["seconds"])}
    return None


def parse_passed(lines: list[str]) -> dict[str, Any] | None:
    """pytest's summary line ('2053 passed, 1 warning in 512.3s (0:08:32)'), parsed; None when any test
    failed or errored (the line then names them first)."""
    for line in reversed(lines):
        if (m := PASSED.match(line)) and "failed" not in m["rest"] and "error" not in m["rest"]:
            return {"passed": int(m["passed"]), "seconds": float(m["seconds"])}
    return None


def _run(cmd: list[str], cwd: Path) -> tuple[int, float, list[str]]:
    """Exit code, wall seconds and the output lines (stdout and stderr, interleaved as printed) of one command,
    run in a newcomer's environment (``_clean_env``)."""
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,  # noqa: S603
                          check=False, env=_clean_env())
    seconds = time.perf_counter() - start
    return proc.returncode, seconds, proc.stdout.splitlines()


def _fail(part: str, cmd: list[str], rc: int, lines: list[str]) -> SystemExit:
    tail = "\n".join(lines[-30:])
    return SystemExit(f"{part}: `{' '.join(cmd)}` exited {rc}; nothing was written. Its last lines:\n{tail}")


def _stamp() -> dict[str, Any]:
    return {"date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "load_start": round(os.getloadavg()[0], 2)}


def _clean_env() -> dict[str, str]:
    """This process's environment less what would make the clone's commands differ from a newcomer's: the
    virtualenv we run in, a PYTHONPATH pointing at another checkout, a bytecode setting."""
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONDONTWRITEBYTECODE")}
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep)
                                  if not p.startswith(str(Path(sys.prefix))))
    return env


def measure_demo(clone: Path) -> dict[str, Any]:
    part = _stamp()
    cmd = ["make", "demo"]
    rc, seconds, lines = _run(cmd, clone)
    if rc != 0:
        raise _fail("demo", cmd, rc, lines)
    return {**part, "load_end": round(os.getloadavg()[0], 2), "seconds": round(seconds, 1),
            "solved": parse_solved(lines), "output": lines}


def _size(path: Path) -> int:
    total = 0
    for dirpath, _dirs, files in os.walk(path):
        for f in files:
            p = Path(dirpath, f)
            if not p.is_symlink():
                total += p.stat().st_size
    return total


def measure_pip(clone: Path, scratch: Path) -> dict[str, Any]:
    part = _stamp()
    venv = scratch / "venv"
    rc, _, lines = _run(["python3", "-m", "venv", str(venv)], scratch)
    if rc != 0:
        raise _fail("pip", ["python3", "-m", "venv", str(venv)], rc, lines)
    cmd = [str(venv / "bin" / "pip"), "install", "--quiet", str(clone)]
    rc, seconds, lines = _run(cmd, scratch)
    if rc != 0:
        raise _fail("pip", cmd, rc, lines)
    site = next((venv / "lib").glob("python*/site-packages"))
    packages = sorted(((p.name, _size(p)) for p in site.iterdir() if p.is_dir() and not p.name.endswith("-info")),
                      key=lambda kv: -kv[1])
    elsewhere = scratch / "elsewhere"
    elsewhere.mkdir()
    train = [str(venv / "bin" / "gsolve"), "train", "CartPole-v1:ppo", "--runs-dir", str(elsewhere / "runs")]
    rc, train_s, lines = _run(train, elsewhere)
    if rc != 0:
        raise _fail("pip", train, rc, lines)
    return {**part, "load_end": round(os.getloadavg()[0], 2), "seconds": round(seconds, 1), "bytes": _size(venv),
            "largest": [{"package": n, "bytes": b} for n, b in packages[:LARGEST]],
            "train_seconds": round(train_s, 1), "solved": parse_solved(lines)}


def measure_tests(clone: Path) -> dict[str, Any]:
    part = _stamp()
    rc, install_s, lines = _run(["make", "install"], clone)
    if rc != 0:
        raise _fail("tests", ["make", "install"], rc, lines)
    rc, test_s, lines = _run(["make", "test"], clone)
    passed = parse_passed(lines)
    if rc != 0 or passed is None:
        raise _fail("tests", ["make", "test"], rc, lines)
    return {**part, "load_end": round(os.getloadavg()[0], 2), "install_seconds": round(install_s, 1),
            "test_seconds": round(test_s, 1), **passed, "output": [ln for ln in lines if not ln.startswith(".venv/")]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--parts", nargs="+", choices=PARTS, default=list(PARTS), help="what to measure (default: all)")
    args = parser.parse_args(argv)
    if shutil.which("make") is None or shutil.which("git") is None:
        raise SystemExit("bench_install needs `make` and `git` on PATH")
    dirty = bench_results._git("status", "--porcelain", "--untracked-files=no")
    if dirty:
        raise SystemExit("bench_install measures a fresh clone of HEAD, and the working tree has uncommitted changes "
                         "the clone would not have: commit them first (`git status` lists them)")
    measured = bench_results.start_measuring(None if argv is None else [sys.argv[0], *argv])
    record: dict[str, Any] = json.loads(OUT.read_text(encoding="utf-8")) if OUT.is_file() else {}
    with tempfile.TemporaryDirectory(prefix="gsolve-install-") as tmp:
        scratch = Path(tmp)
        for name in args.parts:
            clone = scratch / f"clone-{name}"
            subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)  # noqa: S607
            print(f"measuring {name} on a fresh clone of {measured.commit} ...", flush=True)
            if name == "demo":
                record["demo"] = measure_demo(clone)
            elif name == "pip":
                (scratch / name).mkdir()
                record["pip"] = measure_pip(clone, scratch / name)
            else:
                record["tests"] = measure_tests(clone)
            record[name]["commit"] = measured.commit
            shutil.rmtree(clone, ignore_errors=True)  # the tests' .venv alone is ~2 GB
            summary = {k: v for k, v in record[name].items() if k != "output"}
            print(f"{name}: {json.dumps(summary)}", flush=True)
    record["measured"] = bench_results.finish(measured).model_dump()
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {OUT.relative_to(ROOT)}; `make docs-tables` renders README.md from it")
    return 0


if __name__ == "__main__":
    sys.exit(main())
