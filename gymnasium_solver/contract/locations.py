"""Which locations and hosts a run may name when the machine's operator did not choose its settings.

A run started over MCP takes its settings from a client (and, for a resume or a fix, from a run
folder that may come from someone else), so the config keys that name a location or a host
(``config.LOCATION_KEYS``: the MLflow tracking URI) are confined: the default store (itself inside
the runs folder), a folder or SQLite database inside the runs folder, or what the operator allowed when starting the server
(``gsolve mcp --allow-tracking-uri``). A shell user running ``gsolve train`` is the operator of
their own machine and is not confined (issue 26; docs/security.md).

``gsolve mcp`` puts its policy in its environment (:meth:`LocationPolicy.as_env`), so every process
it starts (trainers, ``gsolve fix``, sweeps) inherits it and the MLflow sink checks it again right
before it connects: the tools refuse at once, the sink is the line nothing gets past.
"""

from __future__ import annotations

import json
import os
import posixpath
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import unquote, urlsplit
from urllib.request import url2pathname

from gymnasium_solver.config import LOCATION_KEYS, ConfigError

CONFINE_ENV = "GSOLVE_CONFINE_LOCATIONS"  # "1": this process and its children are confined
ALLOWED_TRACKING_URIS_ENV = "GSOLVE_ALLOWED_TRACKING_URIS"  # the operator's allowances, a JSON list
ANY_URI = "*"  # an allowance that lets a client name any tracking URI (a server only trusted clients reach)
# MLflow's default store (tracking/mlflow_sink.py): a SQLite database inside the runs folder, which MLflow
# reads without flags (its file store needs MLFLOW_ALLOW_FILE_STORE=true), artifacts beside it.
MLFLOW_DIR = ".mlflow"  # a dot folder: the run store never lists it as a run
MLFLOW_DB = "mlflow.db"
MLFLOW_ARTIFACTS_DIR = "artifacts"
MAX_ALLOWANCES = 64  # a handful in practice; a bound so the environment variable stays small


class LocationError(ConfigError):
    """A setting names a location or host this process may not use; the message says what to do."""


def default_mlflow_uri(runs_dir: Path) -> str:
    """The default MLflow store of a runs folder: ``sqlite:///<runs>/.mlflow/mlflow.db`` (absolute)."""
    return sqlite_uri(Path(runs_dir).expanduser().resolve() / MLFLOW_DIR / MLFLOW_DB)


def sqlite_uri(db: Path) -> str:
    """SQLAlchemy's URI of a SQLite file: ``sqlite:///`` then the path (so ``sqlite:////abs`` for an absolute one)."""
    return f"sqlite:///{db}"


def sqlite_path(uri: str) -> Path | None:
    """The database file a ``sqlite:///path`` URI names (relative to the cwd, as SQLAlchemy reads it), or None
    when it names none or cannot be read without SQLAlchemy's own parser: in-memory, a host, a query
    (``?uri=true`` would let the path be a ``file:`` URI of its own), or a percent-escape."""
    parts = urlsplit(uri)
    if parts.scheme.lower() != "sqlite" or parts.netloc or parts.query or parts.fragment or "%" in uri:
        return None
    path = parts.path[1:]  # 'sqlite:///rel.db' -> 'rel.db'; 'sqlite:////abs.db' -> '/abs.db'
    return Path(path) if path and path != ":memory:" else None


def _local_path(uri: str) -> Path | None:
    """The local path a ``file:`` URI, a ``sqlite:`` URI or a plain path names (as MLflow reads it), else None."""
    parts = urlsplit(uri)
    if parts.scheme.lower() == "sqlite":
        return sqlite_path(uri)
    if parts.scheme == "file":
        if parts.netloc not in ("", "localhost"):
            return None  # file://otherhost/...: not this machine's disk
        return Path(url2pathname(parts.path))
    if parts.scheme == "":
        return Path(uri)  # MLflow reads a URI without a scheme as a local path, relative to the cwd
    return None


def _inside(path: Path, folder: Path) -> bool:
    """True if ``path`` (links and '..' resolved, as the trainer would meet them) is ``folder`` or below it."""
    resolved = path.expanduser().resolve()
    return resolved == folder or folder in resolved.parents


def _remote_path(path: str) -> str:
    """A URL path with percent-escapes and '..' resolved, so '/ok/%2e%2e/x' is compared as '/x'."""
    return "/" + posixpath.normpath("/" + unquote(path)).lstrip("/")


def _allowed_by(uri: str, allowance: str) -> bool:
    """``uri`` is ``allowance`` or below it: inside its folder for a local one; for a remote one the same
    scheme and exactly the same host, port and user, a path at or below its path, no query or fragment."""
    if allowance == ANY_URI or uri == allowance:
        return True
    local, allowed_local = _local_path(uri), _local_path(allowance)
    if allowed_local is not None:
        return local is not None and _inside(local, allowed_local.expanduser().resolve())
    if local is not None:
        return False
    got, allowed = urlsplit(uri), urlsplit(allowance)
    if got.query or got.fragment or got.scheme.lower() != allowed.scheme.lower():
        return False
    if got.netloc.lower() != allowed.netloc.lower():
        return False  # never a prefix test: 'host:5000@evil.example' is another host
    base = _remote_path(allowed.path)
    path = _remote_path(got.path)
    return path == base or path.startswith(base.rstrip("/") + "/")


class LocationPolicy(NamedTuple):
    """``confined``: only the default store, the runs folder and ``tracking_uris`` (the operator's
    allowances, each a URI or path that allows itself and what is below it, or '*') may be named."""

    confined: bool = True
    tracking_uris: tuple[str, ...] = ()

    @classmethod
    def from_options(cls, allow_tracking_uris: Sequence[str] | None = None) -> LocationPolicy:
        """A confined policy with the operator's ``--allow-tracking-uri`` values; ValueError for a bad one."""
        allowed = tuple(allow_tracking_uris or ())
        if len(allowed) > MAX_ALLOWANCES:
            raise ValueError(f"--allow-tracking-uri was given {len(allowed)} times; at most {MAX_ALLOWANCES}")
        for value in allowed:
            parts = urlsplit(value)
            if value != ANY_URI and _local_path(value) is None and not (parts.scheme and parts.netloc):
                raise ValueError(f"--allow-tracking-uri {value!r} is neither a path, a file: URI, a URI with a "
                                 "host (http://mlflow.internal:5000) nor '*'")
        return cls(True, allowed)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> LocationPolicy:
        """The policy this process runs under: confined only if a server that confines set it for us."""
        env = os.environ if environ is None else environ
        if env.get(CONFINE_ENV) != "1":
            return cls(False)
        try:
            allowed = json.loads(env.get(ALLOWED_TRACKING_URIS_ENV) or "[]")
        except json.JSONDecodeError:
            allowed = []  # unreadable allowances allow nothing beyond the default
        return cls(True, tuple(str(a) for a in allowed if isinstance(a, str)) if isinstance(allowed, list) else ())

    def as_env(self) -> dict[str, str]:
        """The environment variables that make a child process run under this policy."""
        if not self.confined:
            return {}
        return {CONFINE_ENV: "1", ALLOWED_TRACKING_URIS_ENV: json.dumps(list(self.tracking_uris))}

    def check_uri(self, uri: str | None, runs_dir: Path, what: str = "the run", key: str = "mlflow_tracking_uri") -> None:
        """LocationError unless ``uri`` (the value of config ``key``) is allowed for a run in ``runs_dir``.
        None (the default store, inside the runs folder) is always allowed."""
        if not self.confined or uri is None:
            return
        runs = Path(runs_dir).expanduser().resolve()
        local = _local_path(uri)
        if local is not None and _inside(local, runs):
            return
        if any(_allowed_by(uri, allowance) for allowance in self.tracking_uris):
            return
        allowed = ", ".join(self.tracking_uris) if self.tracking_uris else "nothing else"
        raise LocationError(
            f"{what}: {key} {uri!r} is not allowed on this server, whose runs may log only to the "
            f"default store ({key} unset), a folder or sqlite:/// database inside the runs folder {runs} or what its "
            f"operator allowed ({allowed}); leave it unset, or ask the operator to start the server with "
            f"--allow-tracking-uri {uri}")

    def check_config(self, config: Mapping[str, Any], runs_dir: Path, what: str = "the run") -> None:
        """Check every location key a config uses (its output switch is on); ``config`` is a resolved
        config as a mapping (``model_dump()``, or config.yaml as read)."""
        for key, switch in LOCATION_KEYS.items():
            value = config.get(key)
            if config.get(switch) and value is not None:
                self.check_uri(str(value), runs_dir, what, key)
