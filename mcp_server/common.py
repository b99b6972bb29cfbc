"""What every MCP tool module shares, declared once: the run-reference parameter type, the tool
annotations, and the registration that turns every exception into a sentence the model can act on.

Tool modules register with :func:`tool` (never ``server.tool`` directly), so no failure reaches the
client as the SDK's bare "Error executing tool X" or as a stack trace.
"""

from __future__ import annotations

import asyncio
import errno
import functools
import inspect
import json
import logging
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import yaml
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp.types import ToolAnnotations
from pydantic import BaseModel, Field, ValidationError

from gymnasium_solver.config.model import ConfigError
from gymnasium_solver.config.presets import neutral_preset_paths
from gymnasium_solver.launcher import ProgressCallback

log = logging.getLogger("gymnasium_solver.mcp")
_F = TypeVar("_F", bound=Callable[..., Any])

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
STARTS_PROCESS = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
)
STOPS_PROCESS = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False)

RunRef = Annotated[
    str,
    Field(description="run id (e.g. 20261125-221900-3fa9), a unique prefix of one, or '@last' for the newest run "
                      "(fix and sweep trials aside)"),
]

# What to do about an OS error, by errno: the model should learn the cause and the next step.
_OS_ADVICE: dict[int, str] = {
    errno.ENOSPC: "the disk is full: free space on the runs folder's disk, then retry",
    errno.EDQUOT: "the disk quota is exhausted: free space, then retry",
    errno.EROFS: "the runs folder is on a read-only file system: point the server at a writable one (--runs-dir)",
    errno.EACCES: "permission denied: check the owner and permissions of the runs folder and this file",
    errno.EPERM: "operation not permitted: check the owner and permissions of the runs folder and this file",
    errno.ENOENT: "it does not exist (the run may have been deleted, or is still starting): list_runs shows what is there",
    errno.EISDIR: "it is a directory where a file was expected: the run folder is damaged",
    errno.ENOTDIR: "a path component is not a directory: the run folder is damaged",
    errno.ELOOP: "it is a symbolic link, which is never followed inside a run folder",
    errno.EMFILE: "the server has too many open files: retry in a moment",
    errno.ENAMETOOLONG: "the name is too long: pass a run id, a unique prefix or '@last'",
}


def _shown_path(filename: Any, runs_dir: Path | None) -> str | None:
    """The file as the model may see it: relative to the runs folder, else only its name."""
    if filename is None:
        return None
    path = Path(str(filename))
    if runs_dir is not None:
        try:
            return str(path.resolve(strict=False).relative_to(runs_dir.resolve()))
        except (ValueError, OSError):
            pass
    return path.name


# The library speaks the command line's `--set KEY=VALUE` (and run.json keeps its notes so); a tool's settings
# are its `overrides` argument. The value: a flow list or mapping, '...', or a word without closing punctuation.
_VALUE = r"(?:\[[^\]]*\]|\{[^}]*\}|\.\.\.|[^\s,;)]*[^\s,;).])"
_PAIR = rf"'?[A-Za-z_][\w.]*={_VALUE}'?"  # shell-quoted where needed: --set 'lr={start: 1, end: 0}'
_CLI_SETS = re.compile(rf"--set {_PAIR}(?: {_PAIR})*(?: --set {_PAIR}(?: {_PAIR})*)*")
_CLI_OVERRIDES = re.compile(r"--set( override)?")  # "--set override: unknown key", "CartPole-v1:ppo with --set: ..."
_M = TypeVar("_M", bound=BaseModel)


def _as_overrides(match: re.Match[str]) -> str:
    """`--set a=1 --set b=[64, 64]` -> `overrides={"a": 1, "b": [64, 64]}`; a placeholder (R, N, ...) stays as is."""
    parts = []
    for key, value in re.findall(rf"'?([A-Za-z_][\w.]*)=({_VALUE})'?", match.group(0)):
        try:
            parsed = yaml.safe_load(value)
            shown = value if value == "..." or value.isupper() else json.dumps(parsed)
        except (yaml.YAMLError, TypeError, ValueError):
            shown = value
        parts.append(f"{json.dumps(key)}: {shown}")
    return "overrides={" + ", ".join(parts) + "}"


def in_tool_terms(text: str) -> str:
    """``text`` as a tool says it: the command line's ``--set KEY=VALUE`` as the ``overrides`` argument, and no
    preset folder by where it lies on the server's disk (a client's model cannot open it)."""
    return neutral_preset_paths(_CLI_OVERRIDES.sub("overrides", _CLI_SETS.sub(_as_overrides, text)))


def _in_tool_terms(value: Any) -> Any:
    if isinstance(value, str):
        return in_tool_terms(value)
    if isinstance(value, list):
        return [_in_tool_terms(v) for v in value]
    if isinstance(value, dict):
        return {k: _in_tool_terms(v) for k, v in value.items()}
    return value


def result_in_tool_terms(result: _M) -> _M:
    """A result whose sentences came from the library (a diagnosis, a config's notes) in the tool's terms."""
    return type(result).model_validate(_in_tool_terms(result.model_dump()))


def describe_error(exc: BaseException, runs_dir: Path | None = None) -> str:
    """One sentence for any exception a tool can raise: the library's own messages verbatim,
    OS errors with the file (relative to the runs folder) and what to do, anything else as a bug."""
    if isinstance(exc, KeyError):
        return f"unknown key {exc}"
    if isinstance(exc, OSError):
        where = _shown_path(exc.filename, runs_dir)
        advice = _OS_ADVICE.get(exc.errno or -1, exc.strerror or type(exc).__name__)
        if isinstance(exc, TimeoutError) and exc.errno is None:
            advice = "an operation timed out: retry in a moment"
        return f"cannot access {where}: {advice}" if where else f"{advice} ({type(exc).__name__})"
    if isinstance(exc, ConfigError):  # said for the command line: a tool's config changes are its `overrides`
        return in_tool_terms(str(exc))
    if isinstance(exc, ValueError | ToolError | ResourceError):
        # RunNotFoundError, ... are ValueErrors whose message already says what to do.
        return str(exc) or type(exc).__name__
    if isinstance(exc, MemoryError):
        return "the server ran out of memory answering this call: ask for less (fewer metrics, a narrower range)"
    return (f"internal error ({type(exc).__name__}); this is a bug in gymnasium-solver, the server log has the "
            "traceback: report it with the call that caused it")


def describe_argument_errors(name: str, exc: ValidationError) -> str:
    """One sentence for arguments that fail a tool's input schema (the SDK would send pydantic's multi-line
    report, with its class name and a link): each argument, what it must be and what it got."""
    parts = []
    for err in exc.errors(include_url=False):
        where = ".".join(str(x) for x in err.get("loc", ())) or "arguments"
        if err.get("type") == "missing":
            parts.append(f"argument {where!r} is required")
            continue
        got = repr(err.get("input"))
        got = got if len(got) <= 80 else got[:77] + "..."
        hint = ""
        if err.get("type") == "list_type" and isinstance(err.get("input"), str):
            hint = f"; pass a list, e.g. {json.dumps([err['input']])}"
        parts.append(f"argument {where!r}: {err.get('msg', 'invalid')} (got {got}){hint}")
    return f"{name}: {'; '.join(parts) or 'invalid arguments'}"


def _to_tool_error(exc: Exception, runs_dir: Path | None, name: str) -> ToolError:
    if not isinstance(exc, ValueError | KeyError | OSError | ToolError):
        log.exception("tool %s raised an unexpected exception", name)
    return ToolError(describe_error(exc, runs_dir))


def tool(server: MCPServer, annotations: ToolAnnotations, runs_dir: Path | None = None) -> Callable[[_F], _F]:
    """Register ``fn`` as a tool: docstring dedented (the description the model reads), and every
    exception it raises turned into a ToolError whose message is one actionable sentence."""

    def decorator(fn: _F) -> _F:
        fn.__doc__ = inspect.cleandoc(fn.__doc__ or "")
        name = fn.__name__
        wrapped: Callable[..., Any]
        if inspect.iscoroutinefunction(fn):

            @functools.wraps(fn)
            async def wrapped(*args: Any, **kwargs: Any) -> Any:
                try:
                    return await fn(*args, **kwargs)
                except Exception as exc:
                    raise _to_tool_error(exc, runs_dir, name) from None
        else:

            @functools.wraps(fn)
            def wrapped(*args: Any, **kwargs: Any) -> Any:
                try:
                    return fn(*args, **kwargs)
                except Exception as exc:
                    raise _to_tool_error(exc, runs_dir, name) from None

        server.tool(annotations=annotations)(wrapped)
        return fn

    return decorator


def resource_errors(runs_dir: Path | None = None) -> Callable[[_F], _F]:
    """The same mapping for resources: every exception becomes a ResourceError with a sentence."""

    def decorator(fn: _F) -> _F:
        @functools.wraps(fn)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            try:
                return fn(*args, **kwargs)
            except Exception as exc:
                if not isinstance(exc, ValueError | KeyError | OSError):
                    log.exception("resource %s raised an unexpected exception", fn.__name__)
                raise ResourceError(describe_error(exc, runs_dir)) from None

        return wrapped  # type: ignore[return-value]

    return decorator


_PROGRESS_EVERY = 5.0  # seconds between progress notifications while a child process runs


async def run_gsolve_json(args: list[str], *, timeout: float, on_timeout: str,
                          progress: ProgressCallback | None = None, progress_message: str = "") -> bytes:
    """Run `gsolve ARGS` (its --json form) in a child process, without blocking the server, and return its
    stdout: how the server does torch work (re-evaluations, frames) while never importing torch itself.
    Killed after ``timeout`` seconds (ValueError ``on_timeout``) or when the call is cancelled; a progress
    notification every few seconds. A failure that printed no JSON raises its last stderr line."""
    cmd = [sys.executable, "-m", "gymnasium_solver.cli.app", *args]
    proc = await asyncio.create_subprocess_exec(*cmd, stdin=asyncio.subprocess.DEVNULL,
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    start = time.monotonic()
    communicate = asyncio.ensure_future(proc.communicate())
    try:
        while True:
            remaining = timeout - (time.monotonic() - start)
            if remaining <= 0:
                proc.kill()
                await communicate
                raise ValueError(on_timeout)
            done, _ = await asyncio.wait({communicate}, timeout=min(_PROGRESS_EVERY, remaining))
            if done:
                break
            if progress is not None:
                await progress(time.monotonic() - start, timeout, progress_message)
    except asyncio.CancelledError:
        proc.kill()
        raise
    out, err = communicate.result()
    if proc.returncode != 0 and not out.strip():
        # The CLI's own one-line error ("gsolve eval: error: ...") rather than a renderer's noise after it.
        text = err.decode("utf-8", "replace").strip().splitlines()
        own = [m.group(1) for line in text if (m := re.match(r"gsolve [\w -]+: error: (.+)", line))]
        if not own and any(line.startswith("Traceback") for line in text):  # a crash: its last line alone says little
            log.error("gsolve %s failed:\n%s", args[0], "\n".join(text))
            raise ValueError(f"gsolve {args[0]} failed with an internal error ({text[-1]}); this is a bug in "
                             "gymnasium-solver, the server log has the traceback: report it with the call that caused it")
        raise ValueError(own[-1] if own else text[-1] if text else f"gsolve {args[0]} exited with code {proc.returncode}")
    return out
