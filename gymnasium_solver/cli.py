"""`gsolve`: the command line. A thin adapter: each subcommand parses arguments and delegates.

Subcommands are registered by three modules so that heavy imports (torch) happen only in the
commands that need them:
- cli_train.py     train, eval, list-envs, config
- cli_runs.py      runs, show, mcp
- cli_diagnose.py  diagnose, retry
"""

from __future__ import annotations

import argparse
import sys

from gymnasium_solver import cli_diagnose, cli_runs, cli_train


class CliError(Exception):
    """An error to print as one actionable line (exit code 2), never as a traceback."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gsolve",
        description="Train RL agents on Gymnasium environments fast, and debug the runs.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    cli_train.register(sub)
    cli_runs.register(sub)
    cli_diagnose.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        return 130
    except (CliError, ValueError, FileNotFoundError) as exc:
        # ConfigError, RunNotFoundError etc. are ValueErrors whose message says what to do.
        print(f"gsolve {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
