"""A least-recently-used cache bounded by the bytes its values hold, which never parses under its lock.

``load`` runs the loader with no cache lock held (only a per-key lock, so that two requests for
the same file parse it once while requests for other files go ahead) and inserts the result
under the lock, evicting the least recently used entries until the total fits the cap.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

# 128 MB: with the server's ~110 MB of code and what parsing leaves behind, it keeps the process
# under its 300 MB budget (245 MB after reading 20 runs of 300k rows; docs/benchmarks-run-store.md,
# Memory); reads convert only the columns asked for, so a 1M-row run's usual
# columns (~9 x 9 MB) still fit, and memoised answers outlive the parsed files they came from.
DEFAULT_CACHE_MB = 128
CACHE_MB_ENV = "GSOLVE_CACHE_MB"


def default_max_bytes() -> int:
    """$GSOLVE_CACHE_MB megabytes if set to a positive number, else 128 MB."""
    raw = os.environ.get(CACHE_MB_ENV, "")
    try:
        mb = float(raw) if raw else DEFAULT_CACHE_MB
    except ValueError:
        raise ValueError(f"${CACHE_MB_ENV} must be a number of megabytes, got {raw!r}") from None
    if not 0 <= mb <= 1 << 20:
        raise ValueError(f"${CACHE_MB_ENV} must be between 0 and {1 << 20} (MB), got {raw!r}")
    return int(mb * (1 << 20))


class ByteLRU:
    """Values with a size in bytes; the total never exceeds ``max_bytes``. Thread-safe."""

    def __init__(self, max_bytes: int | None = None):
        self.max_bytes = default_max_bytes() if max_bytes is None else max_bytes
        if self.max_bytes < 0:
            raise ValueError(f"the cache size must be >= 0 bytes, got {self.max_bytes}")
        self._lock = threading.Lock()
        self._items: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()
        self._total = 0
        self._loading: dict[Hashable, list[Any]] = {}  # key -> [lock, number of users]

    @property
    def total_bytes(self) -> int:
        with self._lock:
            return self._total

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)

    def get(self, key: Hashable) -> Any | None:
        """The cached value (now the most recently used), or None."""
        with self._lock:
            hit = self._items.get(key)
            if hit is None:
                return None
            self._items.move_to_end(key)
            return hit[0]

    def put(self, key: Hashable, value: Any, nbytes: int) -> None:
        """Insert or replace; a value larger than the whole cache is not kept."""
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._total -= old[1]
            if nbytes > self.max_bytes:
                return
            self._items[key] = (value, nbytes)
            self._total += nbytes
            while self._total > self.max_bytes:
                _, (_, size) = self._items.popitem(last=False)
                self._total -= size

    def discard(self, key: Hashable) -> None:
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._total -= old[1]

    def load(self, key: Hashable, loader: Callable[[Any | None], tuple[Any, int]]) -> Any:
        """``loader(cached value or None) -> (value, nbytes)``, run outside the cache lock; the
        value is cached and returned. Loaders of one key run one at a time."""
        with self._lock:
            slot = self._loading.setdefault(key, [threading.Lock(), 0])
            slot[1] += 1
        try:
            with slot[0]:
                previous = self.get(key)
                value, nbytes = loader(previous)
                if value is not previous:
                    self.put(key, value, nbytes)
                return value
        finally:
            with self._lock:
                slot[1] -= 1
                if not slot[1]:
                    del self._loading[key]
