"""A command line that names a command imports that command's module alone (cli.app.REGISTRARS), and the table says
what every module registers: a command missing from it would still work (every module is registered then) but pay
for all of them; a stale entry would send the command to a module that does not register it."""

from __future__ import annotations

import argparse
import importlib
import subprocess
import sys

from gymnasium_solver.cli import app


def test_registrars_table_is_what_each_module_registers():
    for module, commands in app.REGISTRARS.items():
        parser = argparse.ArgumentParser()
        sub = parser.add_subparsers(dest="command")
        importlib.import_module(f"gymnasium_solver.cli.{module}").register(sub)
        assert tuple(sub.choices) == commands, module


def _commands(parser: argparse.ArgumentParser) -> list[str]:
    return list(next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices)


def test_full_parser_lists_every_command_in_table_order():
    assert _commands(app.build_parser()) == [c for commands in app.REGISTRARS.values() for c in commands]
    assert _commands(app.build_parser("no-such-command")) == _commands(app.build_parser())


def test_named_command_registers_its_own_module_only():
    assert _commands(app.build_parser("compare")) == ["runs", "show", "compare", "plot"]


def test_gsolve_train_does_not_import_the_diagnosis_or_sweeps():
    # A fresh interpreter: what `gsolve train --help` imports (argparse exits 0 after printing the help).
    code = ("import sys\nfrom gymnasium_solver.cli import app\n"
            "try:\n    app.main(['train', '--help'])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.startswith(('gymnasium_solver.diagnostics', "
            "'gymnasium_solver.sweeps', 'gymnasium_solver.cli.fix', 'gymnasium_solver.cli.diagnose'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "[]"


def test_typo_command_still_gets_close_matches(capsys):
    try:
        app.main(["trian"])
    except SystemExit as exc:
        assert exc.code == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'trian'" in err and "train" in err
