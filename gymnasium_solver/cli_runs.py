"""Placeholder: subcommands are being written (see gymnasium_solver/cli.py)."""

import argparse


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    return None
