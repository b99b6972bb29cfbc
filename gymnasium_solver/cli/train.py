"""`gsolve train`, `gsolve eval`, `gsolve list-envs`, `gsolve config`: thin adapters over
``training.train``, ``evaluation.evaluate`` and ``config.resolve_config``.

torch is imported only inside ``train`` and ``eval`` (the MCP server imports cli/json_out.py, never this module's torch)."""

from __future__ import annotations

import argparse
import gc
import json
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gymnasium_solver.cli.env import add_env_module_flags, bind_env_class
from gymnasium_solver.cli.error import CliError, ExitCode
from gymnasium_solver.cli.resolving import resolve_for_training, say_origin
from gymnasium_solver.config import (
    MAX_EVAL_EPISODES,
    ConfigError,
    Resolved,
    check_trainable,
    env_modules,
)
from gymnasium_solver.config.catalog import MAX_CATALOG_ROWS, environment_catalog, page_note
from gymnasium_solver.config.chain import missing_extra, resolve_config
from gymnasium_solver.config.presets import CONFIG_DIR_ENV, list_env_files, list_variants
from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.train.policy_eval import EvalReport, evaluate_checkpoint  # noqa: F401 - evaluate_checkpoint: API
from gymnasium_solver.train.run_writer import WRITE_FAILURE_KINDS


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "train", help="train ENV_ID or ENV:VARIANT until solved or out of budget",
        description="Train any registered Gymnasium environment: ENV:VARIANT takes a preset's variant, ENV:ALGO "
        "an algorithm (settings from our preset, else the RL Zoo's entry, else gsolve's defaults; docs/configs.md), "
        "a bare ENV_ID an algorithm chosen from its spaces. Prints a live progress bar on stderr, one summary "
        "line, and the run folder's path on the last line of stdout.",
    )
    p.add_argument("config_id", metavar="ENV[:VARIANT]", nargs="?", help="e.g. CartPole-v1:ppo, MountainCar-v0:dqn, "
                   "Acrobot-v1")
    _add_set(p)
    _add_no_zoo(p)
    p.add_argument("--resume", metavar="RUN", default=None,
                   help="continue a crashed or stopped run (id, unique prefix or @last) from its latest checkpoint, "
                   "with its own config (docs/resume.md); give no ENV:VARIANT, --set or --seed with it")
    p.add_argument("--seed", type=int, default=None, help="seed (overrides the preset's)")
    p.add_argument("--seeds", nargs="+", metavar="SEED", default=None,
                   help="train one run per seed (integers or ranges, e.g. --seeds 0-9) and judge the config over them: "
                   "solved k/n and env steps to solve (median, interquartile mean with a 95%% bootstrap interval, "
                   "fastest and slowest seed). One seed's result is one draw")
    p.add_argument("--parallel", type=int, default=None, metavar="N",
                   help="with --seeds: runs at once (default: the machine's cores)")
    p.add_argument("--runs-dir", default=None, help=f"where runs go (default ${rf.RUNS_DIR_ENV} or ./runs)")
    p.add_argument("--run-id", default=None, help="use this run id (a launcher may have pre-created its folder)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--json", action="store_true", help="print the finished run's details as JSON instead of the "
                   "summary line and folder (schema: gsolve schema train)")
    p.add_argument("--no-fail", action="store_true", help="exit 0 when the run finished unsolved (default 3), for "
                   "scripts that only ask whether training ran; a failed run still exits 1 (docs/cli.md)")
    # Set by launchers (gsolve fix's trial runner): provenance recorded in run.json.
    p.add_argument("--parent-run-id", default=None, help=argparse.SUPPRESS)
    p.add_argument("--experiment-id", default=None, help=argparse.SUPPRESS)
    p.add_argument("--applied-changes", default=None, help=argparse.SUPPRESS)
    add_env_module_flags(p)
    p.set_defaults(func=cmd_train)

    p = sub.add_parser("eval", help="evaluate a saved policy deterministically",
                       description="Run a run's saved policy (argmax / Gaussian mean) for N episodes in "
                       "parallel and print the mean and std of the returns.")
    p.add_argument("run", metavar="RUN", help="run id, unique id prefix, @last, or a registered model: "
                   "model:ENV (its current version) or model:ENV@N")
    p.add_argument("--checkpoint", default=rf.BEST_CHECKPOINT,
                   help="checkpoint name: best (default), last, or a periodic one such as step_20480")
    p.add_argument("--episodes", type=int, default=10, help="number of episodes (default 10)")
    p.add_argument("--seed", type=int, default=0, help="seed of the evaluation episodes (default 0)")
    p.add_argument("--video", metavar="OUT", default=None,
                   help="also record one episode (seed --seed) to OUT: .gif (always) or .mp4 (the video extra: "
                   "pip install 'gymnasium-solver[video]'); one frame per step")
    p.add_argument("--frames", metavar="DIR", default=None,
                   help="also write a few evenly spaced frames of one episode (seed --seed) to DIR (made if missing) as small PNGs "
                   "(longest side 256 px)")
    p.add_argument("--frame-count", type=int, default=6, metavar="N", help="frames for --frames (1..16, default 6)")
    p.add_argument("--json", action="store_true", help="print the result as JSON (schema: gsolve schema eval)")
    p.add_argument("--runs-dir", default=None, help=f"runs folder (default ${rf.RUNS_DIR_ENV} or ./runs)")
    add_env_module_flags(p)
    p.set_defaults(func=cmd_eval)

    p = sub.add_parser("list-envs", help="list environment presets (and with --all every registered id)",
                       description="Our presets with their variants, thresholds and budgets; with --all or "
                       "--filter, every environment Gymnasium registers and where its settings would come from.")
    p.add_argument("--all", action="store_true", help="every registered environment id, not only the presets")
    p.add_argument("--filter", default=None, metavar="TEXT", help="only ids containing TEXT (implies --all)")
    p.add_argument("--limit", type=int, default=MAX_CATALOG_ROWS, help=f"at most this many (1..{MAX_CATALOG_ROWS})")
    p.add_argument("--offset", type=int, default=0, help="with --all/--filter: skip this many ids (the next page)")
    p.add_argument("--json", action="store_true", help="print the presets (and with --all/--filter the registered "
                   "ids) as JSON (schema: gsolve schema list-envs)")
    add_env_module_flags(p)
    p.set_defaults(func=cmd_list_envs)

    p = sub.add_parser("config", help="print the fully resolved config of ENV:VARIANT as YAML, with each value's source",
                       description="The resolved config as YAML; a comment after each value says where it came "
                       "from: preset, zoo (the RL Zoo's entry), default, user_config, override or spec.")
    p.add_argument("config_id", metavar="ENV[:VARIANT]", help="e.g. CartPole-v1:ppo, MountainCar-v0:ppo")
    _add_set(p)
    _add_no_zoo(p)
    p.add_argument("--json", action="store_true", help="print the config, each value's source and meaning as JSON "
                   "(schema: gsolve schema config)")
    add_env_module_flags(p)
    p.set_defaults(func=cmd_config)


def _add_set(p: argparse.ArgumentParser) -> None:
    p.add_argument("--set", dest="sets", action="extend", nargs="+", default=[], metavar="KEY=VALUE",
                   help="override config keys, e.g. --set learning_rate=0.001 clip_range.end=0.05 "
                   "(repeatable; put ENV:VARIANT before --set)")


def _add_no_zoo(p: argparse.ArgumentParser) -> None:
    p.add_argument("--no-zoo", action="store_true", help="without a preset, take gsolve's defaults even where the "
                   "RL Zoo has an entry for the environment and algorithm")


def cmd_train(args: argparse.Namespace) -> int:
    if args.seeds is not None:
        from gymnasium_solver.cli.seeds import cmd_train_seeds

        return cmd_train_seeds(args)
    if args.parallel is not None:
        raise CliError("--parallel is for --seeds (how many of the seeds' runs train at once)")
    if args.resume is not None:
        return _cmd_resume(args)
    if args.config_id is None:
        raise ConfigError("give ENV_ID or ENV:VARIANT to train (e.g. gsolve train CartPole-v1:ppo), or --resume RUN")
    bind_env_class(args.config_id, args.env_classes)
    resolved, overrides = resolve_for_training(args.config_id, args.sets, args.seed, args.no_zoo)
    cfg = resolved.config
    check_trainable(cfg)  # an environment this machine cannot create is refused before a run folder exists
    applied = _applied_changes(args.applied_changes)
    if not args.quiet or args.run_id is None:
        say_origin(resolved)
    from gymnasium_solver.train.training import train  # torch: only now

    gc.freeze()  # torch's objects live to the exit (one run a process): the collector skips them, exit -1 s
    result = train(cfg, Path(args.runs_dir) if args.runs_dir else None, run_id=args.run_id,
                   show_progress=not args.quiet, overrides=overrides, parent_run_id=args.parent_run_id,
                   experiment_id=args.experiment_id, applied_changes=applied, config_origin=resolved.origin)
    return _report(cfg.config_id, cfg.reward_threshold, result, args.no_fail, args.json)


def _cmd_resume(args: argparse.Namespace) -> int:
    given = [name for name, value in (("ENV:VARIANT", args.config_id), ("--set", args.sets), ("--seed", args.seed),
                                      ("--run-id", args.run_id), ("--parent-run-id", args.parent_run_id),
                                      ("--experiment-id", args.experiment_id),
                                      ("--applied-changes", args.applied_changes)) if value not in (None, [])]
    if given:
        raise ConfigError(f"--resume continues a run with its own config and id; drop {', '.join(given)}")
    from gymnasium_solver.run_store import resolve_run_dir

    run_dir = resolve_run_dir(args.resume, args.runs_dir)
    from gymnasium_solver.train.training import resume  # torch: only now

    gc.freeze()  # as in cmd_train
    result = resume(run_dir, show_progress=not args.quiet)
    info = rf.read_run_info(result.run_dir)
    return _report(info.config_id, info.reward_threshold, result, args.no_fail, args.json)


def _report(config_id: str, threshold: float | None, result: Any, no_fail: bool = False, as_json: bool = False) -> int:
    """Print the summary line and the run folder (and on stderr what went wrong without ending the
    run, e.g. a tracking sink that failed); the exit code of the run's ending."""
    try:
        for warning in rf.read_run_info(result.run_dir).warnings:
            print(f"gsolve train: warning: {warning.message}", file=sys.stderr)
    except (OSError, ValueError):
        pass  # the summary below still says how the run ended
    try:
        if as_json:  # what `gsolve show --json` and the MCP get_run_info say of the finished run
            from gymnasium_solver.run_store import RunStore, run_details

            print(run_details(RunStore(result.run_dir.parent), result.run_dir).model_dump_json(indent=2))
        else:
            print(summary_line(config_id, threshold, result))
            print(result.run_dir)
        sys.stdout.flush()
    except BrokenPipeError:
        # `gsolve train ... | head -1`: the run is complete and recorded; don't end in a traceback.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return train_exit_code(result.status, result.solved_at is not None, threshold, no_fail)


def train_exit_code(status: rf.RunStatus, solved: bool, threshold: float | None, no_fail: bool = False) -> ExitCode:
    """The exit code of a run's ending (cli_error.EXIT_MEANINGS['train']): solved 0, unsolved 3 (0 with
    --no-fail, or when there was no threshold to reach), failed 1, stopped by the user 130."""
    if status == rf.RunStatus.FAILED:
        return ExitCode.INTERNAL_ERROR
    if status == rf.RunStatus.STOPPED:
        return ExitCode.INTERRUPTED
    return ExitCode.OK if solved or threshold is None or no_fail else ExitCode.UNSOLVED


def _applied_changes(text: str | None) -> dict[str, Any] | None:
    """--applied-changes: a JSON object of the config changes a launcher applied (run.json provenance)."""
    if text is None:
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"--applied-changes must be a JSON object, e.g. '{{\"learning_rate\": 0.004}}': {exc}") from None
    if not isinstance(value, dict):
        raise ConfigError(f"--applied-changes must be a JSON object, got {text!r}")
    return value


def summary_line(config_id: str, threshold: float | None, result: Any) -> str:
    """One line: solved or not, at which step, wall time, run folder."""
    from gymnasium_solver.train.progress import format_return as fr
    best_s = f"best eval {fr(result.best_eval.return_mean, threshold)}" if result.best_eval else "no evaluation"
    if result.solved_at is not None:
        s = result.solved_at
        return (f"solved {config_id}: eval {fr(s.eval_return_mean, threshold)} >= {threshold:g} at {s.env_steps} env steps "
                f"after {s.wall_seconds:.2f} s; run folder {result.run_dir}")
    what = {
        rf.StopReason.BUDGET_EXHAUSTED: "budget exhausted",
        rf.StopReason.USER_STOPPED: "stopped by user",
        rf.StopReason.NON_FINITE_LOSS: "FAILED: non-finite loss",
        rf.StopReason.ERROR: "FAILED: error, traceback in run.log",
    }.get(result.stop_reason, result.stop_reason.value)
    if result.failure is not None and result.failure.kind in WRITE_FAILURE_KINDS:
        what = f"FAILED: {result.failure.kind}"  # the disk, not the trainer: no traceback to read
    if result.failure is not None and result.stop_reason != rf.StopReason.USER_STOPPED:
        what += f" ({result.failure.message})"
    if threshold is not None:
        goal = f" (threshold {threshold:g})"
    else:
        goal = " (no reward threshold to solve)"
    if threshold is not None and result.best_eval is not None and result.best_eval.return_mean >= threshold:
        goal = f" (threshold {threshold:g}; that evaluation was luck: more episodes fell short, see the warning)"
    head = f"not solved {config_id}: {what}"
    if threshold is None and result.stop_reason == rf.StopReason.BUDGET_EXHAUSTED:
        head = f"trained {config_id} for its budget"  # nothing to solve: "not solved" would read as a failure
    return (f"{head} after {result.env_steps} env steps, {result.wall_seconds:.2f} s; "
            f"{best_s}{goal}; run folder {result.run_dir}")


def cmd_eval(args: argparse.Namespace) -> int:
    if not 1 <= args.episodes <= MAX_EVAL_EPISODES:
        raise ValueError(f"--episodes must be between 1 and {MAX_EVAL_EPISODES}, got {args.episodes}")
    if args.seed < 0:
        raise ValueError(f"--seed must be >= 0, got {args.seed}")
    from gymnasium_solver.ops.model_registry import is_model_ref

    if is_model_ref(args.run):
        return _eval_model(args)
    # The run store, which only eval needs: imported here so that `gsolve train` does not pay for it.
    from gymnasium_solver.cli.checkpoints import checkpoint_file, other_checkpoints
    from gymnasium_solver.run_store import resolve_run_dir

    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", args.checkpoint):
        raise ValueError(f"--checkpoint must be a checkpoint name such as best, last or step_20480, got {args.checkpoint!r}")
    run_dir = resolve_run_dir(args.run, args.runs_dir)
    path = checkpoint_file(run_dir, args.checkpoint)
    video = _video_path(args.video)
    _frames_dir(args)
    try:
        from gymnasium_solver.train.checkpoints import checkpoint_config  # torch: only now

        _check_belongs(run_dir, args.checkpoint, checkpoint_config(path))
        result, loaded = evaluate_checkpoint(path, args.episodes, args.seed)
    except env_modules.EnvModuleError:
        raise  # another checkpoint needs the same flag
    except (ValueError, OSError) as exc:
        raise CliError(f"{exc}; {other_checkpoints(run_dir, args.checkpoint)}") from None
    report = _eval_report(result, loaded, args, run_id=run_dir.name, checkpoint=args.checkpoint)
    return _print_eval(report, path, video, args, f"{run_dir.name} checkpoint {args.checkpoint}")


def _frames_dir(args: argparse.Namespace) -> Path | None:
    """--frames DIR and --frame-count, checked before anything is evaluated."""
    from gymnasium_solver.train.policy_eval import MAX_SAMPLED_FRAMES

    if not 1 <= args.frame_count <= MAX_SAMPLED_FRAMES:
        raise CliError(f"--frame-count must be between 1 and {MAX_SAMPLED_FRAMES}, got {args.frame_count}")
    if args.frames is None:
        return None
    folder = Path(args.frames)
    if folder.exists() and not folder.is_dir():
        raise CliError(f"--frames {args.frames}: is a file; name a folder (made if missing, as --video's file is)")
    if not folder.exists() and not folder.parent.is_dir():
        raise CliError(f"--frames {args.frames}: the folder {folder.parent} does not exist")
    return folder


def _video_path(text: str | None) -> Path | None:
    """--video OUT, checked before anything is evaluated."""
    if text is None:
        return None
    from gymnasium_solver.train.policy_eval import VIDEO_SUFFIXES

    out = Path(text)
    if out.suffix.lower() not in VIDEO_SUFFIXES:
        raise CliError(f"--video must end in {' or '.join(VIDEO_SUFFIXES)}, got {text!r}")
    if not out.parent.is_dir():
        raise CliError(f"--video {text}: the folder {out.parent} does not exist")
    return out


def _eval_report(result: Any, loaded: Any, args: argparse.Namespace, **where: Any) -> EvalReport:
    return EvalReport(config_id=loaded.config.config_id, env_steps=loaded.env_steps, episodes=result.episodes,
                      seed=args.seed, return_mean=result.return_mean, return_std=result.return_std,
                      return_min=min(result.returns), return_max=max(result.returns), ep_len_mean=result.ep_len_mean,
                      returns=result.returns, **{"run_id": None, **where})


def _print_eval(report: EvalReport, path: Path, video: Path | None, args: argparse.Namespace, what: str) -> int:
    from gymnasium_solver.train.policy_eval import record_video, save_frames

    frames = _frames_dir(args)
    try:
        if video is not None:
            report.video = record_video(path, video, report.seed)
        if frames is not None:
            frames.mkdir(exist_ok=True)  # only now: a refused or failed evaluation leaves no empty folder
            report.frames = save_frames(path, frames, report.seed, args.frame_count)
    except ValueError as exc:
        raise CliError(str(exc)) from None
    if args.json:
        print(report.model_dump_json(indent=2))
        return 0
    print(f"{what} ({report.env_steps} env steps, {report.config_id}): return {report.return_mean:.2f} +- "
          f"{report.return_std:.2f} over {report.episodes} episodes (min {report.return_min:.2f}, max "
          f"{report.return_max:.2f}, mean length {report.ep_len_mean:.1f})")
    if report.video is not None:
        v = report.video
        print(f"video {v.path}: {v.frames} frames at {v.fps} fps, one episode (seed {report.seed}) of return "
              f"{v.episode_return:.2f}, length {v.episode_length}" + (" (cut at the frame limit)" if
                                                                     v.truncated_at_max_frames else ""))
    if report.frames is not None:
        f = report.frames
        print(f"frames in {f.folder}: {len(f.files)} of {f.width}x{f.height} at steps {', '.join(map(str, f.steps))} "
              f"of one episode (seed {f.seed}) of return {f.episode_return:.2f}, length {f.episode_length}")
    return 0


def _eval_model(args: argparse.Namespace) -> int:
    """`gsolve eval model:ENV[@N]`: evaluate a registered version's checkpoint (docs/ops.md)."""
    from gymnasium_solver.ops.model_registry import resolve_model

    if args.checkpoint != rf.BEST_CHECKPOINT:
        raise CliError("--checkpoint applies to runs; a registered model is one checkpoint (pick a version with @N)")
    video = _video_path(args.video)
    _frames_dir(args)
    model = resolve_model(args.runs_dir, args.run)
    try:
        result, loaded = evaluate_checkpoint(model.checkpoint, args.episodes, args.seed)
    except (ValueError, OSError) as exc:
        raise CliError(f"{model.version.model_ref} cannot be evaluated: {exc}") from None
    report = _eval_report(result, loaded, args, run_id=model.version.run_id, model_ref=model.version.model_ref,
                          checkpoint=rf.BEST_CHECKPOINT)
    return _print_eval(report, model.checkpoint, video, args,
                       f"{model.version.model_ref} (run {model.version.run_id})")


def _check_belongs(run_dir: Path, name: str, cfg: Any) -> None:
    """ValueError if the checkpoint was trained on another environment or algorithm than its run
    (a file copied in from another run)."""
    from gymnasium_solver.run_store import RunFileError, RunStore

    try:
        info = RunStore(run_dir.parent).info(run_dir)
    except RunFileError as exc:  # the run's own file, not the checkpoint: another checkpoint would not help
        raise CliError(str(exc)) from None
    if (info.env_id, info.algo) != (cfg.env_id, str(cfg.algo)):
        raise ValueError(f"run {run_dir.name}: {rf.CHECKPOINTS_DIR}/{name}{rf.CHECKPOINT_SUFFIX} was trained as "
                         f"{cfg.env_id} {cfg.algo}, not as this run's {info.env_id} {info.algo}: it was copied in "
                         "from another run")


def cmd_list_envs(args: argparse.Namespace) -> int:
    for path in args.env_classes:  # imported, but it has no id to list until a command names one
        served = env_modules.served_id(path)
        print(f"gsolve list-envs: note: --env-class {path} has no id until a command names one: `gsolve train "
              f"{served}:ppo --env-class {path}` trains it as {served} (as `gsolve mcp --env-class {path}` serves it)",
              file=sys.stderr)
    if args.json:
        from gymnasium_solver.environment_list import environment_list

        _check_limit(args.limit, args.offset)
        print(environment_list(filter=args.filter, registered=args.all, offset=args.offset,
                               limit=args.limit).model_dump_json(indent=2))
        return 0
    if args.all or args.filter is not None:
        return _list_registered(args)
    files = list_env_files()
    if not files:
        raise ValueError("no presets found; presets live in gymnasium_solver/presets/environments/<EnvId>.yaml "
                         f"(or ${CONFIG_DIR_ENV}); `gsolve list-envs --all` lists every registered environment")
    rows = [("CONFIG", "ALGO", "THRESHOLD", "BUDGET")]
    lacking: dict[str, list[str]] = {}  # the pip command -> the presets that need it (this install lacks it)
    for env_id in files:
        for variant, algo in list_variants(env_id).items():
            cfg = resolve_config(f"{env_id}:{variant}")
            threshold = "-" if cfg.reward_threshold is None else f"{cfg.reward_threshold:g}"
            rows.append((cfg.config_id, algo, threshold, str(cfg.max_env_steps)))
            if (missing := missing_extra(cfg)) is not None:
                lacking.setdefault(missing, []).append(cfg.config_id)
    _print_table(rows)
    for command, config_ids in lacking.items():
        print(f"\nThis install cannot train {', '.join(config_ids)} yet: {command}")
    print("\nTrain one with `gsolve train ENV:VARIANT`; see its settings with `gsolve config ENV:VARIANT`. "
          "Any other registered environment trains too: `gsolve list-envs --all`.")
    return 0


def _print_table(rows: Sequence[tuple[str, ...]]) -> None:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())


def _check_limit(limit: int, offset: int = 0) -> None:
    if not 1 <= limit <= MAX_CATALOG_ROWS:
        raise ValueError(f"--limit must be between 1 and {MAX_CATALOG_ROWS}, got {limit}")
    if offset < 0:
        raise ValueError(f"--offset must be 0 or more (ids to skip), got {offset}")


def _list_registered(args: argparse.Namespace) -> int:
    _check_limit(args.limit, args.offset)
    catalog = environment_catalog(args.filter, offset=args.offset, limit=args.limit)
    rows = [("ENV", "SETTINGS", "PRESET VARIANTS", "RL ZOO ENTRIES")]
    for e in catalog.environments:
        zoo = ", ".join(e.zoo_algos) + (f" ({e.zoo_entry} entry)" if e.zoo_entry and e.zoo_algos else "")
        rows.append((e.env_id, e.settings, ", ".join(e.preset_variants) or "-", zoo or "-"))
    _print_table(rows)
    shown = len(catalog.environments)
    more = page_note(shown, catalog.total, args.filter, args.offset)
    print(f"\n{catalog.total} environment(s){more}. SETTINGS is where `gsolve train ENV:ALGO` takes its settings "
          "from: our preset, the RL Zoo's entry (for the algorithms listed), else gsolve's defaults. An algorithm "
          "that cannot take an environment's spaces is refused with the ones that can.")
    return 0


def cmd_config(args: argparse.Namespace) -> int:
    bind_env_class(args.config_id, args.env_classes)
    resolved, _ = resolve_for_training(args.config_id, args.sets, no_zoo=args.no_zoo)
    if args.json:
        from gymnasium_solver.config.view import resolved_config_result

        print(resolved_config_result(resolved).model_dump_json(indent=2))
    else:
        sys.stdout.write(config_yaml_with_sources(resolved))
    return 0


def config_yaml_with_sources(resolved: Resolved) -> str:
    """The config as YAML (one line per key), each value followed by a comment naming its source, under
    a comment block saying where the settings came from and what was noted."""
    import yaml

    origin = resolved.origin
    lines = [f"# settings: {origin.settings}: {origin.where}"] + [f"# note: {n}" for n in origin.notes]
    for key, value in resolved.config.model_dump(mode="json").items():
        text = yaml.safe_dump(value, default_flow_style=True, width=1 << 20).removesuffix("\n...\n").strip()
        lines.append(f"{key}: {text}  # {origin.sources.get(key, 'default')}")
    return "\n".join(lines) + "\n"
