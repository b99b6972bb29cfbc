"""torch's CPU tanh against ours (gymnasium_solver/agents/networks.py ``tanh``: numpy's forward, torch's backward
kernel), per batch size of a 64-unit hidden layer, with and without autograd; and where ours takes over.

    .venv/bin/python bench/bench_tanh.py [--width 64] [--repeats 2000]

Each figure is the median of 5 blocks of ``--repeats`` calls in this process's CPU time (one torch thread, as
training sets it), so other work on the machine moves it less than the wall clock would. "fwd+bwd" is
``tanh(x).sum().backward()``: the sum and the backward pass's own cost are in both columns alike. The last
columns say which one ``tanh`` uses at that size (its thresholds) and the largest difference of the values, in
ulps of float32.
"""

from __future__ import annotations

import argparse
import functools
import statistics
import time
from collections.abc import Callable

import numpy as np
import torch

from gymnasium_solver.agents import networks

ROWS = (1, 8, 32, 64, 128, 256, 512, 1024, 2048)


def cpu_us(call: Callable[[], object], repeats: int) -> float:
    """Median over 5 blocks of the CPU microseconds one call takes."""
    for _ in range(min(repeats, 50)):
        call()
    blocks = []
    for _ in range(5):
        t = time.process_time()
        for _ in range(repeats):
            call()
        blocks.append((time.process_time() - t) / repeats * 1e6)
    return statistics.median(blocks)


def forward_backward(f: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor) -> None:
    f(x).sum().backward()


def max_ulps(a: torch.Tensor, b: torch.Tensor) -> int:
    """The largest distance between two float32 tensors in units in the last place."""
    ia, ib = (t.detach().numpy().view(np.int32).astype(np.int64) for t in (a, b))
    return int(np.abs(ia - ib).max())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--width", type=int, default=64, help="the hidden layer's units (default 64)")
    parser.add_argument("--repeats", type=int, default=2000, help="calls per timed block (default 2000)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    print(f"torch {torch.__version__} ({torch.backends.cpu.get_cpu_capability()}), numpy {np.__version__}; "
          f"us of CPU per call, {args.width} units")
    print(f"{'rows':>6} | {'fwd+bwd torch':>13} {'ours':>7} | {'no grad torch':>13} {'ours':>7} | uses (grad / no grad) | ulps")
    for rows in ROWS:
        x = torch.randn(rows, args.width, requires_grad=True)
        fns: tuple[Callable[[torch.Tensor], torch.Tensor], ...] = (torch.tanh, networks.tanh)
        grad = [cpu_us(functools.partial(forward_backward, f, x), args.repeats) for f in fns]
        with torch.no_grad():
            plain = [cpu_us(functools.partial(f, x), args.repeats) for f in fns]
            ulps = max_ulps(torch.tanh(x), torch.from_numpy(np.tanh(x.numpy())))
        n = x.numel()
        uses = (f"{'numpy' if n >= networks._NUMPY_TANH_GRAD else 'torch'} / "
                f"{'numpy' if n >= networks._NUMPY_TANH_NO_GRAD else 'torch'}")
        print(f"{rows:>6} | {grad[0]:>13.1f} {grad[1]:>7.1f} | {plain[0]:>13.1f} {plain[1]:>7.1f} | {uses:>21} | {ulps}")


if __name__ == "__main__":
    main()
