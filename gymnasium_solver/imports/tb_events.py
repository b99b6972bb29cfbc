"""Scalars and text out of TensorBoard event files, fast enough for million-event logs.

An event file is a sequence of TFRecords (length, CRC, an ``Event`` protobuf, CRC). Decoding every
record with protobuf costs ~3 us each in Python, 10+ s for a 1M-step log with a few tags
(bench/bench_import.py measures it side by side). So the records a ``SummaryWriter.add_scalar`` writes
(``wall_time``, ``step``, one ``Summary.Value`` with ``tag`` and ``simple_value``, the layout every
writer produces for a scalar) are decoded with numpy in one vectorised pass, and every other record
(file version, text, tensor-style scalars from newer writers, hparams) goes through tensorboard's own
``Event`` protobuf. A test checks the fast path against protobuf on real SummaryWriter output.

Protobuf wire format: https://protobuf.dev/programming-guides/encoding/ ;
event.proto / summary.proto: tensorboard/compat/proto/.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import numpy as np

from gymnasium_solver.imports.files import read_source_file

EVENT_FILE_MARKER = "tfevents"
MAX_EVENT_FILE_BYTES = 4 * 1024**3  # a 1M-step log with a few tags is ~250 MB
_LEN = struct.Struct("<Q")
_TAG_WALL_TIME, _TAG_STEP, _TAG_SUMMARY, _TAG_VALUE, _TAG_SIMPLE = 0x09, 0x10, 0x2A, 0x0A, 0x15


class EventFileError(ValueError):
    """An event file that cannot be read; the message says which and what was expected."""


class ScalarSeries(NamedTuple):
    """One tag's scalars in write order (a tag logged twice at one step keeps both)."""

    steps: np.ndarray  # int64
    values: np.ndarray  # float64
    wall_times: np.ndarray  # float64, POSIX seconds


@dataclass
class EventData:
    """What an event folder holds: scalars by tag, text summaries by tag, and what was skipped."""

    scalars: dict[str, ScalarSeries] = field(default_factory=dict)
    texts: dict[str, list[str]] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)
    records: int = 0
    truncated: list[str] = field(default_factory=list)


def event_files(folder: Path) -> list[Path]:
    """The event files directly in ``folder``, oldest first (their names start with a timestamp)."""
    try:
        names = sorted(p for p in folder.iterdir() if EVENT_FILE_MARKER in p.name and p.is_file())
    except OSError:
        return []
    return names


def _frame(buf: bytes) -> tuple[np.ndarray, np.ndarray, bool]:
    """(data offsets, data lengths, truncated) of the TFRecords in ``buf``.

    Every record's length is read from the file. A writer repeats the same cycle of record lengths
    (the same tags each step), so once the last lengths repeat with a period, the next stretch of
    starts is predicted from that cycle and checked in one vectorised read: each prediction is kept
    only up to the first start whose length differs. CRCs are not checked (a damaged record fails
    the layout checks of the decoder instead)."""
    arr = np.frombuffer(buf, dtype=np.uint8)
    end = len(buf)
    window = np.lib.stride_tricks.sliding_window_view(arr, 8) if end >= 8 else None
    chunks: list[np.ndarray] = []
    starts: list[int] = []
    lens: list[int] = []
    pos, reach = 0, 256
    while pos + 12 <= end:
        period = _period(lens) if len(lens) >= 8 else 0
        if period and window is not None:
            pos, got = _predict(window, pos, lens[-period:], end, reach)
            reach = min(reach * 4, 1 << 22) if len(got) >= reach * period else 256
            if len(got):
                chunks.append(np.asarray(starts, dtype=np.int64))
                chunks.append(got)
                starts, lens = [], [int(x) for x in _lengths(window, got[-2 * period:])]
        for _ in range(64):  # step through the records the prediction could not take
            if pos + 12 > end:
                break
            n = _LEN.unpack_from(buf, pos)[0]
            if pos + 16 + n > end:
                break
            starts.append(pos)
            lens.append(n)
            pos += 16 + n
        else:
            continue
        break
    chunks.append(np.asarray(starts, dtype=np.int64))
    all_starts = np.concatenate(chunks)
    lengths = _lengths(window, all_starts) if window is not None and len(all_starts) else all_starts
    last = int(all_starts[-1] + 16 + lengths[-1]) if len(all_starts) else 0
    return all_starts + 12, lengths, last != end


def _lengths(window: np.ndarray, starts: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(window[starts]).view("<u8").ravel().astype(np.int64)


def _period(lens: list[int]) -> int:
    """The smallest p <= 32 such that the last 2p record lengths are one cycle repeated, else 0."""
    for p in range(1, min(32, len(lens) // 2) + 1):
        if lens[-p:] == lens[-2 * p:-p]:
            return p
    return 0


def _predict(window: np.ndarray, pos: int, cycle: list[int], end: int, reach: int) -> tuple[int, np.ndarray]:
    """Starts from ``pos`` on, predicted by repeating ``cycle`` up to ``reach`` times, kept up to the
    first mismatch (a long stretch grows the next reach, a mismatch shrinks it)."""
    sizes = np.asarray(cycle, dtype=np.int64) + 16
    reps = max(1, min((end - pos) // int(sizes.sum()) + 1, reach))
    step = np.tile(sizes, reps)
    ends = pos + np.cumsum(step)
    keep = ends <= end
    starts = np.concatenate([[pos], ends[:-1]])[keep]
    want = np.tile(np.asarray(cycle, dtype=np.int64), reps)[keep]
    got = _lengths(window, starts)
    bad = np.flatnonzero(got != want)
    n = int(bad[0]) if len(bad) else len(starts)
    if n == 0:
        return pos, starts[:0]
    return int(starts[n - 1] + 16 + want[n - 1]), starts[:n]


def _gather(arr: np.ndarray, at: np.ndarray, width: int) -> np.ndarray:
    """Bytes ``arr[at[i] : at[i] + width]`` as a (len(at), width) uint8 matrix (zero past the end)."""
    if len(arr) < width:
        arr = np.concatenate([arr, np.zeros(width, dtype=np.uint8)])
    win = np.lib.stride_tricks.sliding_window_view(arr, width)
    return win[np.clip(at, 0, len(win) - 1)]


def _varint(arr: np.ndarray, at: np.ndarray, max_bytes: int = 9) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(value, byte length, ok) of the varints starting at ``at`` (``arr`` zero-padded past its
    end); ok is False for varints longer than ``max_bytes``. One byte position per pass: most
    varints here are 1 to 3 bytes, so the loop ends early."""
    value = np.zeros(len(at), dtype=np.int64)
    length = np.zeros(len(at), dtype=np.int64)
    done = np.zeros(len(at), dtype=bool)
    for k in range(max_bytes):
        b = arr[at + k].astype(np.int64)
        active = ~done
        value |= np.where(active, (b & 0x7F) << (7 * k), 0)
        stop = active & (b < 0x80)
        length[stop] = k + 1
        done |= stop
        if done.all():
            break
    return value, length, done


class _Fast(NamedTuple):
    ok: np.ndarray  # records decoded by the fast path
    wall: np.ndarray
    step: np.ndarray
    value: np.ndarray
    tag_at: np.ndarray
    tag_len: np.ndarray


def _fast_scalars(buf: np.ndarray, data: np.ndarray, length: np.ndarray) -> _Fast:
    """Decode the records laid out as add_scalar writes them: wall_time, step (absent when 0), a
    summary with one value holding a tag and a simple_value, nothing else."""
    arr = np.concatenate([buf, np.zeros(32, dtype=np.uint8)])  # reads past the end see zeros
    end = data + length
    ok = (length >= 16) & (arr[data] == _TAG_WALL_TIME)
    wall = _gather(arr, data + 1, 8).copy().view("<f8").ravel()
    p = data + 9
    has_step = arr[p] == _TAG_STEP
    step, n, good = _varint(arr, p + 1)
    ok &= good | ~has_step
    step = np.where(has_step, step, 0)
    p = np.where(has_step, p + 1 + n, p)
    ok &= arr[p] == _TAG_SUMMARY
    slen, n, good = _varint(arr, p + 1, 3)
    p = p + 1 + n
    ok &= good & (p + slen == end) & (arr[p] == _TAG_VALUE)
    vlen, n, good = _varint(arr, p + 1, 3)
    p = p + 1 + n
    ok &= good & (p + vlen == end) & (arr[p] == _TAG_VALUE)
    tlen, n, good = _varint(arr, p + 1, 2)
    tag_at = p + 1 + n
    p = np.minimum(tag_at + tlen, len(buf))
    ok &= good & (p + 5 == end) & (arr[p] == _TAG_SIMPLE)
    value = _gather(arr, p + 1, 4).copy().view("<f4").ravel().astype(np.float64)
    return _Fast(ok, wall, step, value, tag_at, tlen)


def _group_tags(arr: np.ndarray, fast: _Fast) -> dict[bytes, np.ndarray]:
    """Indices of the fast records per tag, in record order. Exact: a few distinct tags are compared
    byte for byte against every record of the same tag length (vectorised)."""
    out: dict[bytes, np.ndarray] = {}
    idx = np.flatnonzero(fast.ok)
    for tlen in np.flatnonzero(np.bincount(fast.tag_len[idx])) if len(idx) else []:
        same = idx[fast.tag_len[idx] == tlen]
        if tlen == 0:
            out[b""] = same
            continue
        mat = _gather(arr, fast.tag_at[same], int(tlen))
        left = np.ones(len(same), dtype=bool)
        while left.any():
            first = int(np.argmax(left))
            tag = mat[first]
            hit = left & (mat == tag).all(axis=1)
            out[tag.tobytes()] = same[hit]
            left &= ~hit
    return out


def _slow_record(raw: bytes, out: EventData, extra: dict[str, list[tuple[int, float, float]]]) -> None:
    """One record through tensorboard's Event protobuf: tensor scalars and text summaries."""
    from tensorboard.compat.proto import event_pb2  # tensorboard, never torch
    from tensorboard.util import tensor_util

    try:
        ev = event_pb2.Event.FromString(raw)
    except Exception:  # protobuf's DecodeError: a damaged record is skipped, like TensorBoard does
        return
    for v in ev.summary.value:
        if v.HasField("simple_value"):
            extra.setdefault(v.tag, []).append((ev.step, float(v.simple_value), ev.wall_time))
        elif v.HasField("tensor"):
            plugin = v.metadata.plugin_data.plugin_name
            arr = tensor_util.make_ndarray(v.tensor)
            if plugin == "text" or arr.dtype.kind in "SOU":
                out.texts.setdefault(v.tag, []).extend(
                    x.decode("utf-8", "replace") if isinstance(x, bytes) else str(x) for x in np.ravel(arr))
            elif arr.size == 1 and arr.dtype.kind in "fiub":
                extra.setdefault(v.tag, []).append((ev.step, float(arr.ravel()[0]), ev.wall_time))


def _merge(a: ScalarSeries | None, b: ScalarSeries) -> ScalarSeries:
    if a is None:
        return b
    return ScalarSeries(np.concatenate([a.steps, b.steps]), np.concatenate([a.values, b.values]),
                        np.concatenate([a.wall_times, b.wall_times]))


def read_event_file(path: Path, out: EventData) -> None:
    """Add the scalars and texts of one event file to ``out``. EventFileError if it is not one."""
    try:
        size = os.lstat(path).st_size
        if size > MAX_EVENT_FILE_BYTES:
            raise EventFileError(f"{path} is {size / 1e9:.1f} GB, more than the {MAX_EVENT_FILE_BYTES / 1e9:.0f} GB "
                                 "an import reads; import a folder with fewer or smaller event files")
        buf = read_source_file(path, MAX_EVENT_FILE_BYTES)
    except OSError as exc:
        raise EventFileError(f"cannot read event file {path}: {exc.strerror or exc}") from None
    data, length, truncated = _frame(buf)
    if len(data) == 0:
        what = "is empty" if not buf else "holds no complete TFRecord"
        raise EventFileError(f"event file {path} {what}: expected TensorBoard events written by a SummaryWriter "
                             "(the training may have died before its first flush)")
    arr = np.frombuffer(buf, dtype=np.uint8)
    fast = _fast_scalars(arr, data, length)
    for tag, idx in _group_tags(arr, fast).items():
        name = tag.decode("utf-8", "replace")
        s = ScalarSeries(fast.step[idx], fast.value[idx], fast.wall[idx])
        out.scalars[name] = _merge(out.scalars.get(name), s)
    extra: dict[str, list[tuple[int, float, float]]] = {}
    for i in np.flatnonzero(~fast.ok):
        _slow_record(buf[int(data[i]): int(data[i] + length[i])], out, extra)
    for name, rows in extra.items():
        a = np.asarray(rows, dtype=np.float64)
        s = ScalarSeries(a[:, 0].astype(np.int64), a[:, 1], a[:, 2])
        out.scalars[name] = _merge(out.scalars.get(name), s)
    out.records += len(data)
    out.files.append(path.name)
    if truncated:
        out.truncated.append(path.name)


def read_event_folder(folder: Path) -> EventData:
    """Every event file directly in ``folder``, merged per tag (a resumed run writes several files).

    EventFileError when there is no event file, or none holds a scalar."""
    files = event_files(folder)
    if not files:
        raise EventFileError(f"{folder} has no TensorBoard event file (events.out.tfevents.*)")
    out = EventData()
    for f in files:
        read_event_file(f, out)
    if not out.scalars:
        raise EventFileError(f"the event files in {folder} ({', '.join(out.files)}) hold no scalar: expected "
                             "add_scalar events such as rollout/ep_rew_mean (SB3) or charts/episodic_return (CleanRL)")
    return out


def stable_by_step(s: ScalarSeries) -> ScalarSeries:
    """The series sorted by step, keeping write order among equal steps (a restarted run's rewrite of
    the same steps comes later in write order)."""
    order = np.argsort(s.steps, kind="stable")
    return ScalarSeries(s.steps[order], s.values[order], s.wall_times[order])
