"""CliError and ExitCode: how every `gsolve` subcommand fails and ends. Their own module so that the
subcommand modules and cli/app.py (which prints the error) import them without importing each other."""

from __future__ import annotations

from enum import IntEnum


class CliError(Exception):
    """An error to print as one actionable line (exit code 2), never as a traceback."""


class ExitCode(IntEnum):
    """The exit codes of every `gsolve` command, in one table (docs/cli.md prints it from here).

    A script reads them the same way whatever the command: 0 the goal was met, 3 the work ran to its
    end but the goal was not met (a run unsolved, no fix, no sweep trial solved, a regression, a
    promotion refused), 2 the input was wrong, 1 something broke."""

    OK = 0  # success: solved, fixed, a sweep trial solved, not worse, approved; a read command answered
    INTERNAL_ERROR = 1  # a bug or a failed run (non-finite loss, trainer error, a disk that filled)
    BAD_INPUT = 2  # bad arguments, an unknown run or key, a refused request: the message says what to do
    UNSOLVED = 3  # finished, goal not met: unsolved (train --no-fail: 0), not_fixed, worse, rejected
    INTERRUPTED = 130  # Ctrl-C, or a run stopped by the user (SIGINT/SIGTERM)


# What each code means for each command that decides between them: docs/cli.md renders this table and
# a test runs every row. Commands not listed answer OK, BAD_INPUT or INTERNAL_ERROR only.
EXIT_MEANINGS: dict[str, dict[ExitCode, str]] = {
    "train": {ExitCode.OK: "solved (or, with no reward threshold, trained its budget); with --no-fail: any run "
              "that finished; with --seeds: every seed solved", ExitCode.UNSOLVED: "budget exhausted without reaching "
              "the threshold; with --seeds: some seed did not solve",
              ExitCode.INTERNAL_ERROR: "the run failed (non-finite loss, error, a write failure); with --seeds: a "
              "seed's run failed or could not start",
              ExitCode.INTERRUPTED: "stopped by the user"},
    "retry": {ExitCode.OK: "the new run solved (with --no-fail: any run that finished); --dry-run",
              ExitCode.UNSOLVED: "the new run finished without reaching the threshold",
              ExitCode.INTERNAL_ERROR: "the new run failed", ExitCode.INTERRUPTED: "the new run was stopped by the user"},
    "fix": {ExitCode.OK: "verdict fixed or unlucky_seed", ExitCode.UNSOLVED: "verdict not_fixed"},
    "sweep": {ExitCode.OK: "a trial solved", ExitCode.UNSOLVED: "no trial solved"},
    "sweep-check": {ExitCode.OK: "an arm solved every held-out seed", ExitCode.UNSOLVED: "no arm solved every seed"},
    "check": {ExitCode.OK: "not significantly worse", ExitCode.UNSOLVED: "significantly worse",
              ExitCode.BAD_INPUT: "cannot compare (the message says why)"},
    "promote": {ExitCode.OK: "approved (registered)", ExitCode.UNSOLVED: "rejected by the promotion policy"},
}
