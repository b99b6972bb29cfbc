"""Time `gsolve import` on a 1M-step TensorBoard log (target: <= 5 s, issue 9).

    .venv/bin/python bench/bench_import.py [--steps 1000000] [--tags 3] [--skip-protobuf]

Makes (once, cached under $TMPDIR) an SB3-style event folder with torch's real SummaryWriter: ``--tags``
scalar tags, each written at every step 0..steps-1 (3M events for the defaults). Then, in this one
process, side by side on the same file:
  1. import_runs end to end (read the events, map the names, write metrics.csv + run.json),
  2. our reader alone (tb_events.read_event_folder: numpy fast path + protobuf for the rest),
  3. tensorboard's Event protobuf record by record (what a plain protobuf reader costs).
Figures depend on the machine's load: compare them within one run.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from pathlib import Path

TAGS = ["rollout/ep_rew_mean", "train/value_loss", "time/fps", "train/entropy_loss", "train/approx_kl"]


def make_log(folder: Path, steps: int, tags: int) -> Path:
    run = folder / "CartPole-v1" / "PPO_1"
    done = run / ".complete"
    if done.exists():
        return run
    shutil.rmtree(run, ignore_errors=True)
    from torch.utils.tensorboard import SummaryWriter

    t = time.perf_counter()
    w = SummaryWriter(str(run), max_queue=10_000, flush_secs=120)
    for i in range(steps):
        for k in range(tags):
            w.add_scalar(TAGS[k], (i % 1000) * 0.5 + k, i)
    w.close()
    done.touch()
    print(f"wrote {steps * tags:,} events with SummaryWriter in {time.perf_counter() - t:.1f}s")
    return run


def protobuf_read(run: Path) -> int:
    from tensorboard.compat.proto import event_pb2

    from gymnasium_solver.imports import tb_events

    n = 0
    for f in tb_events.event_files(run):
        buf = f.read_bytes()
        data, length, _ = tb_events._frame(buf)
        parse = event_pb2.Event.FromString
        for d, ln in zip(data.tolist(), length.tolist(), strict=True):
            ev = parse(buf[d: d + ln])
            for v in ev.summary.value:
                if v.HasField("simple_value"):
                    n += 1
    return n


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=1_000_000)
    ap.add_argument("--tags", type=int, default=3, choices=range(1, len(TAGS) + 1))
    ap.add_argument("--skip-protobuf", action="store_true", help="skip the slow protobuf comparison")
    args = ap.parse_args()
    cache = Path(tempfile.gettempdir()) / f"gsolve-bench-import-{args.steps}x{args.tags}"
    run = make_log(cache, args.steps, args.tags)
    size = sum(f.stat().st_size for f in run.glob("events.out.tfevents.*"))
    print(f"log: {args.steps:,} steps x {args.tags} tags = {args.steps * args.tags:,} events, {size / 1e6:.0f} MB "
          f"({run}); load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")

    from gymnasium_solver.imports import import_runs, tb_events

    runs_dir = Path(tempfile.mkdtemp(prefix="gsolve-bench-runs-"))
    try:
        t, c = time.perf_counter(), time.process_time()
        result = import_runs([run], runs_dir)
        full, cpu = time.perf_counter() - t, time.process_time() - c
        r = result.runs[0]
        print(f"import_runs end to end:      {full:6.2f} s wall, {cpu:6.2f} s CPU ({r.rows:,} rows, {len(r.metrics)} "
              f"metrics; first call in the process, module imports included) target <= 5 s: "
              f"{'met' if full <= 5 else 'MISSED'} on wall time")
        t, c = time.perf_counter(), time.process_time()
        data = tb_events.read_event_folder(run)
        fast, cpu = time.perf_counter() - t, time.process_time() - c
        print(f"tb_events.read_event_folder: {fast:6.2f} s wall, {cpu:6.2f} s CPU "
              f"({sum(len(s.steps) for s in data.scalars.values()):,} scalars)")
        if not args.skip_protobuf:
            t, c = time.perf_counter(), time.process_time()
            n = protobuf_read(run)
            print(f"protobuf Event per record:   {time.perf_counter() - t:6.2f} s wall, {time.process_time() - c:6.2f} s "
                  f"CPU ({n:,} scalars, same framing)")
    finally:
        shutil.rmtree(runs_dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
