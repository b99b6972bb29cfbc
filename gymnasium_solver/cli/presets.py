"""`gsolve presets save RUN NAME`: a thin adapter over ``config.presets.save_user_preset``."""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path

from gymnasium_solver.config.build import config_from_yaml_text
from gymnasium_solver.config.presets import (
    CONFIG_DIR_ENV,
    SavedPreset,
    save_user_preset,
    user_config_dir,
    user_presets_dir,
)
from gymnasium_solver.contract import run_folder as rf


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("presets", help="save a run's resolved config as your own preset",
                       description="Your own presets (docs/configs.md, 'Your own presets').")
    psub = p.add_subparsers(dest="presets_command", metavar="ACTION")
    psub.required = True
    s = psub.add_parser("save", help="write RUN's resolved config as variant NAME of <folder>/<ENV>.yaml",
                        description=f"Write a run's resolved config (every key) as preset variant NAME into "
                        f"${CONFIG_DIR_ENV} when set, else ~/.config/gsolve/presets (or --dir); train it with "
                        f"`gsolve train ENV:NAME` once ${CONFIG_DIR_ENV} points at that folder.")
    s.add_argument("run", metavar="RUN", help="run id, unique prefix or @last")
    s.add_argument("name", metavar="NAME", help="the variant name, e.g. my-ppo")
    s.add_argument("--dir", default=None, help=f"the presets folder (default ${CONFIG_DIR_ENV}, else "
                   "~/.config/gsolve/presets)")
    s.add_argument("--json", action="store_true", help="print where it was saved and how to train it as JSON "
                   "(schema: gsolve schema presets save)")
    s.add_argument("--runs-dir", default=None, help=f"runs folder (default ${rf.RUNS_DIR_ENV} or ./runs)")
    s.set_defaults(func=cmd_presets_save)


def cmd_presets_save(args: argparse.Namespace) -> int:
    from gymnasium_solver.run_store import RunStore
    from gymnasium_solver.run_store.files import read_run_text

    store = RunStore(args.runs_dir)
    run_dir = store.resolve(args.run)
    info = store.info(run_dir)
    rf.refuse_read_only(info, "save a preset (its config is another framework's)")
    config = config_from_yaml_text(read_run_text(run_dir, rf.CONFIG_YAML), f"{run_dir.name}/{rf.CONFIG_YAML}")
    folder = Path(args.dir).expanduser() if args.dir else user_presets_dir()
    path = save_user_preset(config, args.name, folder, f"saved from run {info.run_id} ({info.config_id})")
    read = user_config_dir()  # the folder training reads presets of yours from (the default one once it exists)
    active = read is not None and read.resolve() == folder.resolve()
    config_id = f"{config.env_id}:{args.name}"
    command = f"gsolve train {config_id}" if active else f"{CONFIG_DIR_ENV}={shlex.quote(str(folder))} gsolve train {config_id}"
    saved = SavedPreset(run_id=info.run_id, config_id=config_id, path=str(path), folder=str(folder), active=active,
                        train_command=command)
    if args.json:
        print(saved.model_dump_json(indent=2))
        return 0
    print(f"saved {info.run_id}'s config as {config_id} in {path}")
    if not active:
        print(f"train it with: {command} (that folder's variants add to the shipped presets)")
    return 0
