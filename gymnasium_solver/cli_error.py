"""CliError: the one exception every `gsolve` subcommand raises for bad input. Its own module so that
the subcommand modules and cli.py (which prints it) import it without importing each other."""


class CliError(Exception):
    """An error to print as one actionable line (exit code 2), never as a traceback."""
