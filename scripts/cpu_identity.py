"""Which CPU this is, as /proc/cpuinfo says: its maker and model, and with torch's dispatch the kernel set
the golden runs are recorded per (scripts/record_golden.py), the one reader of the file for the scripts and
the benchmarks (bench/bench_results.py records the model with every figure). Reads only; imports torch only
in ``kernels``."""

from __future__ import annotations

import re
from pathlib import Path

CPUINFO = Path("/proc/cpuinfo")
_VENDOR_NAMES = {"GenuineIntel": "intel", "AuthenticAMD": "amd"}


def cpuinfo_field(name: str) -> str:
    """The first value of ``name`` in /proc/cpuinfo ('' where the file or the field is missing)."""
    try:
        text = CPUINFO.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    found = re.search(rf"^{re.escape(name)}\s*:\s*(.*?)\s*$", text, re.MULTILINE)
    return found.group(1) if found else ""


def cpu_vendor() -> str:
    """The CPU's maker as /proc/cpuinfo names it (``GenuineIntel``, ``AuthenticAMD``), '' where it does not say.
    The same kernels train to other floats on another maker's CPU (an AMD EPYC's AVX512 runs came out unlike an
    Intel's: the libraries torch and numpy call pick their code paths by vendor too)."""
    value = cpuinfo_field("vendor_id")
    return value.split()[0] if value else ""


def cpu_model() -> str:
    """The CPU's model name (``AMD EPYC``, ``Intel(R) Xeon(R) Processor``), '' where /proc/cpuinfo does not say."""
    return cpuinfo_field("model name")


def kernels() -> str:
    """The CPU's maker and the kernels torch dispatches to here, lower-case (``intel-avx512``, ``amd-avx2``,
    ``amd-avx512``; the kernels alone, ``avx2``, on a CPU that names no maker we know): the runs' recordings are
    kept per such set, each in run_folders/<kernels>/."""
    import torch

    capability = torch.backends.cpu.get_cpu_capability().lower()
    vendor = _VENDOR_NAMES.get(cpu_vendor(), "")
    return f"{vendor}-{capability}" if vendor else capability
