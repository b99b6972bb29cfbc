"""`gsolve mcp`: start the MCP server (stdio, or streamable HTTP with a bearer token and limits).

The one place where the CLI reaches the MCP adapter, through a lazy import: the library never
imports mcp_server, and `gsolve train` never pays for the MCP SDK import.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from gymnasium_solver.cli.env import add_env_module_flags

TOKEN_ENV = "GSOLVE_MCP_TOKEN"


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "mcp", help="run the MCP server", description="Run the gymnasium-solver MCP server (stdio by default)."
    )
    p.add_argument("--transport", choices=["stdio", "http"], default="stdio",
                   help="stdio (for Claude Code etc.) or streamable HTTP")
    p.add_argument("--host", default="127.0.0.1",
                   help="HTTP address to bind (default 127.0.0.1); any other address requires a token")
    p.add_argument("--port", type=int, default=8765, help="HTTP port (with --transport http)")
    p.add_argument("--token", default=None,
                   help=f"HTTP: refuse requests without 'Authorization: Bearer TOKEN' (default: ${TOKEN_ENV}); "
                   "prefer the environment variable, a command line is visible to other local users")
    p.add_argument("--max-live-runs", type=int, default=None,
                   help="refuse to start runs while this many are live in the runs folder (default: CPU cores)")
    p.add_argument("--max-env-steps", type=int, default=None,
                   help="largest max_env_steps a run started over MCP may have (default 10,000,000)")
    p.add_argument("--max-n-envs", type=int, default=None,
                   help="largest n_envs a run started over MCP may have (default 64)")
    p.add_argument("--allow-tracking-uri", action="append", default=None, metavar="URI",
                   help="let runs started over MCP log to this MLflow tracking URI or anything below it (a folder, "
                   "file: URI or http(s)://host:port/path; repeatable; '*' allows any). Without it they may name "
                   "only the default store or a folder inside the runs folder; `gsolve train` from a shell is "
                   "not confined")
    p.add_argument("--session-idle-timeout", type=float, default=None, metavar="SECONDS",
                   help="HTTP: close a session idle this long (default 900); its client then opens a new one")
    p.add_argument("--max-sessions", type=int, default=None,
                   help="HTTP: at most this many open sessions (default 100); more are answered 503")
    p.add_argument("--runs-dir", help="runs folder (default: $GSOLVE_RUNS_DIR or ./runs)")
    add_env_module_flags(p, served=True)
    p.set_defaults(func=cmd_mcp)


def cmd_mcp(args: argparse.Namespace) -> int:
    from gymnasium_solver.contract.locations import LocationPolicy
    from gymnasium_solver.launcher import StartLimits

    # The CLI's only import of the MCP adapter (tests/test_architecture.py allows exactly this one).
    from mcp_server.server import main

    if not 1 <= args.port <= 65535:
        raise ValueError(f"--port must be between 1 and 65535, got {args.port}")
    token = args.token if args.token is not None else os.environ.get(TOKEN_ENV) or None
    limits = StartLimits.from_options(args.max_live_runs, args.max_env_steps, args.max_n_envs)
    locations = LocationPolicy.from_options(args.allow_tracking_uri)
    main(transport=args.transport, port=args.port, runs_dir=Path(args.runs_dir) if args.runs_dir else None,
         host=args.host, token=token, limits=limits, locations=locations, session_idle_timeout=args.session_idle_timeout,
         max_sessions=args.max_sessions)
    return 0
