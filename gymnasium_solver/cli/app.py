"""`gsolve`: the command line. A thin adapter: each subcommand parses arguments and delegates.

Subcommands are registered by these modules (REGISTRARS; a command line naming one imports its module alone) so
that heavy imports (torch) happen only in the commands that need them:
- train.py         train, eval, list-envs, config
- runs.py          runs, show, compare, plot
- checkpoints.py   checkpoints
- diagnose.py      diagnose, retry
- fix.py           fix
- sweep.py         sweep, sweep-status, sweep-check
- mcp.py           mcp (the CLI's only way into the MCP adapter)
- imports.py       import (runs from the RL Zoo, SB3, CleanRL)
- ops.py           serve-metrics, check, promote, models, rollback
- presets.py       presets save (a run's config as the user's own preset)
- json_out.py      schema (the model each command's --json prints)

Exit codes: one table, error.ExitCode (docs/cli.md). `--json` output: one pydantic model per
command, json_out.JSON_MODELS.
"""

from __future__ import annotations

import argparse
import errno
import importlib
import sys
from pathlib import Path

from gymnasium_solver.cli import env as cli_env
from gymnasium_solver.cli.error import CliError, ExitCode

# The modules that register the subcommands, in the order `gsolve --help` lists them, and the commands each one
# registers (tests/test_cli_startup.py holds this table to what they register). A command line naming a command
# imports that command's module alone: `gsolve train` does not pay for diagnose's, sweep's and compare's imports.
REGISTRARS: dict[str, tuple[str, ...]] = {
    "train": ("train", "eval", "list-envs", "config"),
    "runs": ("runs", "show", "compare", "plot"),
    "checkpoints": ("checkpoints",),
    "diagnose": ("diagnose", "retry"),
    "fix": ("fix",),
    "sweep": ("sweep", "sweep-status", "sweep-check"),
    "mcp": ("mcp",),
    "imports": ("import",),
    "ops": ("serve-metrics", "check", "promote", "models", "rollback"),
    "presets": ("presets",),
    "json_out": ("schema",),
}
_MODULE_OF = {command: module for module, commands in REGISTRARS.items() for command in commands}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """gsolve's parser: with ``command`` (a subcommand's name), only the module that registers it is imported and
    registered; otherwise (help, a typo, no command) every one, so argparse lists and matches them all."""
    parser = argparse.ArgumentParser(
        prog="gsolve",
        description="Train RL agents on Gymnasium environments fast, and debug the runs.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    modules = [_MODULE_OF[command]] if command in _MODULE_OF else list(REGISTRARS)
    for module in modules:
        importlib.import_module(f"gymnasium_solver.cli.{module}").register(sub)
    return parser


def _unrecognized(parser: argparse.ArgumentParser, command: str, extras: list[str]) -> None:
    """argparse's exit 2 for arguments no option takes, from the command's own parser (its usage, not gsolve's) and
    with the command's nearest options (`gsolve train CartPole-v1 --sed 3`: did you mean --seed?)."""
    from gymnasium_solver.config.build import close_matches

    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
    own = commands[command]
    options = [o for a in own._actions for o in a.option_strings if o.startswith("--")]
    hints = [f"{x}: did you mean {' or '.join(m)}?" for x in extras if x.startswith("-")
             and (m := close_matches(x.split("=", 1)[0], options, n=2))]
    own.error(f"unrecognized arguments: {' '.join(extras)}" + (f" ({'; '.join(hints)})" if hints else ""))


def main(argv: list[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else argv
    parser = build_parser(words[0] if words else None)
    args, extras = parser.parse_known_args(argv)
    if extras:
        _unrecognized(parser, args.command, extras)
    try:
        _refs_from_paths(args)
        cli_env.grant(args)  # --env-package/--env-class: imported now, because this command line names them
        code = int(args.func(args) or 0)
        sys.stdout.flush()  # inside the try: a closed pipe surfaces here, not at interpreter exit
        return code
    except KeyboardInterrupt:
        return ExitCode.INTERRUPTED
    except BrokenPipeError:
        # `gsolve ... | head` closed our stdout: not an error worth a traceback.
        _silence_stdout()
        return ExitCode.OK
    except (CliError, ValueError) as exc:
        # ConfigError, RunNotFoundError etc. are ValueErrors whose message says what to do.
        print(f"gsolve {args.command}: error: {exc}", file=sys.stderr)
        return ExitCode.BAD_INPUT
    except OSError as exc:
        # A full disk, a read-only runs folder, a directory where a file belongs: a sentence, not a traceback.
        print(f"gsolve {args.command}: error: {_os_error(exc)}", file=sys.stderr)
        return ExitCode.BAD_INPUT


def _refs_from_paths(args: argparse.Namespace) -> None:
    """Run folders given as paths (``gsolve train`` ends by printing ``runs/<id>``, and a shell completes it) name
    their runs when they lie directly inside the runs folder; a run folder elsewhere is refused with the
    --runs-dir that would reach it. Only the command line does this: references over MCP stay folder names.
    Anything else is left as typed (``ALE/Pong-v5:ppo`` is a config id)."""
    from gymnasium_solver.contract.run_folder import resolve_runs_dir

    root = resolve_runs_dir(getattr(args, "runs_dir", None))

    def name_of(value: str) -> str:
        path = Path(value)
        if not any(sep in value for sep in ("/", "\\")):
            return value
        if path.parent.resolve() == root.resolve():  # a typo in the id still gets the close matches
            return path.name
        if not path.is_dir():
            return value
        if path.resolve() == root.resolve():
            raise CliError(f"{value} is the runs folder itself: name one run in it (`gsolve runs` lists them)")
        if not (path / "run.json").is_file():
            raise CliError(f"{value} is not a run folder (it has no run.json); a run is named by its id inside the "
                           f"runs folder (`gsolve runs --runs-dir DIR` lists a folder's runs)")
        raise CliError(f"{value} is a folder outside the runs folder {root}: runs are read only from the runs "
                       f"folder; pass --runs-dir {path.resolve().parent} and the run id {path.resolve().name}")

    if isinstance(getattr(args, "run", None), str):
        args.run = name_of(args.run)
    if isinstance(getattr(args, "runs", None), list):
        args.runs = [name_of(r) if isinstance(r, str) else r for r in args.runs]
    if args.command == "train" and isinstance(getattr(args, "resume", None), str):
        args.resume = name_of(args.resume)
    if args.command == "check" and isinstance(getattr(args, "against", None), str):
        args.against = name_of(args.against)  # a baseline run (or the word preset)


def _os_error(exc: OSError) -> str:
    where = f"{exc.filename}: " if exc.filename else ""
    what = exc.strerror or type(exc).__name__
    advice = {errno.ENOSPC: "free space on that disk and retry", errno.EROFS: "use a writable --runs-dir",
              errno.EACCES: "check the file's owner and permissions", errno.EISDIR: "the run folder is damaged",
              errno.ENOENT: "check the path (gsolve runs lists the runs)"}.get(exc.errno or -1)
    if exc.errno == errno.ENOENT and exc.filename and not (folder := Path(exc.filename).parent).is_dir():
        advice = f"the folder {folder} does not exist: create it, or name a file in one that does"  # plot -o, ...
    return f"{where}{what}" + (f"; {advice}" if advice else "")


def _silence_stdout() -> None:
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


if __name__ == "__main__":
    sys.exit(main())
