"""Plots over seeds, runs of one config grouped, the progress display and videos of a policy (issue 25
items 2-4)."""

from __future__ import annotations

import io
import json
import os
import re
import socket
import time
from pathlib import Path

import numpy as np
import pytest
import yaml
from PIL import Image
from rich.console import Console

from gymnasium_solver import config
from gymnasium_solver import run_store as rs
from gymnasium_solver.api import Runs
from gymnasium_solver.cli import app as cli
from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.contract.metric_names import M
from gymnasium_solver.train.progress import ProgressBar

SEEDS = range(5)
CONFIGS = {"fast": 0.003, "slow": 0.0003}  # learning rate -> how fast the synthetic curve rises


def write_synthetic_run(runs: Path, run_id: str, seed: int, lr: float, *, sweep_id: str | None = None) -> None:
    """run.json, config.yaml and metrics.csv as the trainer leaves them, with a made-up learning curve."""
    cfg = config.resolve_config("CartPole-v1:ppo", {"seed": seed, "learning_rate": lr, "max_env_steps": 20480})
    steps = np.arange(1, 21) * 1024
    rng = np.random.default_rng(seed)
    curve = 500 * (1 - np.exp(-steps * lr / 8)) + rng.normal(0, 20, steps.shape[0])
    solved = np.flatnonzero(curve >= 475)
    now = rf.utc_now_iso()
    info = rf.RunInfo(run_id=run_id, config_id=cfg.config_id, env_id=cfg.env_id, variant="ppo", algo="ppo", seed=seed,
                      created_at=now, updated_at=now, max_env_steps=cfg.max_env_steps, host=socket.gethostname(),
                      status=rf.RunStatus.COMPLETED, reward_threshold=475.0, sweep_id=sweep_id,
                      progress=rf.Progress(env_steps=int(steps[-1]), wall_seconds=10.0),
                      stop_reason=rf.StopReason.SOLVED if solved.shape[0] else rf.StopReason.BUDGET_EXHAUSTED)
    info.best_eval = rf.EvalRecord(return_mean=float(curve.max()), return_std=0.0, episodes=5,
                                   env_steps=int(steps[curve.argmax()]), wall_seconds=1.0, iteration=1)
    if solved.shape[0]:
        info.solved = True
        info.solved_at = rf.SolvedAt(env_steps=int(steps[solved[0]]), wall_seconds=1.0, iteration=int(solved[0]) + 1,
                                     eval_return_mean=float(curve[solved[0]]))
    run_dir = runs / run_id
    run_dir.mkdir(parents=True)
    rf.write_run_info(run_dir, info)
    (run_dir / rf.CONFIG_YAML).write_text(yaml.safe_dump(cfg.model_dump(mode="json")), encoding="utf-8")
    rows = [f"{M.ITERATION},{M.ENV_STEPS},{M.EVAL_RETURN_MEAN}"]
    rows += [f"{i + 1},{s},{v!r}" for i, (s, v) in enumerate(zip(steps.tolist(), curve.tolist(), strict=True))]
    (run_dir / rf.METRICS_CSV).write_text("\n".join(rows) + "\n", encoding="utf-8")


@pytest.fixture(scope="module")
def seed_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """5 seeds of two configs, and one sweep trial that listings hide."""
    runs = tmp_path_factory.mktemp("seeds") / "runs"
    for i, (name, lr) in enumerate(CONFIGS.items()):
        for seed in SEEDS:
            write_synthetic_run(runs, f"20260101-00000{i}-{seed:02d}{name[:2]}", seed, lr)
    write_synthetic_run(runs, "20260101-000009-trial", 0, 0.001, sweep_id="sweep-20260101-000000-abcd")
    return runs


def test_compare_env_ranks_configs_over_their_seeds(seed_runs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rd = ["--runs-dir", str(seed_runs)]
    assert cli.main(["compare", "--env", "CartPole-v1", *rd]) == 0
    out = capsys.readouterr().out
    configs = out.split("configs over their seeds")[1].splitlines()[1:4]
    # 5 of 5 (share solved >= 0.57) before the sweep trial's 1 of 1 (>= 0.21), which solved, before 0 of 5.
    assert "learning_rate=0.003 " in configs[0] and "solved 5/5" in configs[0], out
    assert "learning_rate=0.001 " in configs[1] and "solved 1/1" in configs[1] and ">= 0.21" in configs[1], out
    assert "learning_rate=0.0003 " in configs[2] and "share solved >= 0.00" in configs[2], out
    assert cli.main(["compare", "--env", "CartPole-v1", "--algo", "ppo", *rd, "--json"]) == 0
    best = rs.BestRun.model_validate_json(capsys.readouterr().out)
    assert best == Runs(seed_runs).best("CartPole-v1", "ppo")  # the API answers the same
    assert [len(g.run_ids) for g in best.configs] == [5, 1, 5] and best.runs_considered == 11
    for args, says in (([], "not both and not neither"), (["@last", "--env", "CartPole-v1"], "not both"),
                       (["@last", "--algo", "ppo"], "--algo filters the runs of --env")):
        assert cli.main(["compare", *args, *rd]) == 2
        assert says in capsys.readouterr().err
    assert cli.main(["compare", "--env", "CartPole-v9", *rd]) == 2
    assert "did you mean CartPole-v1?" in capsys.readouterr().out


def test_plot_draws_a_mean_and_a_band_per_config(seed_runs: Path, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "curves.png"
    code = cli.main(["plot", "CartPole-v1:ppo", "--metric", M.EVAL_RETURN_MEAN, "--smooth", "3", "-o", str(out),
                     "--runs-dir", str(seed_runs), "--json"])
    result = json.loads(capsys.readouterr().out)
    assert code == 0
    assert [len(g["run_ids"]) for g in result["groups"]] == [5, 5]  # the sweep trial is left out
    assert {g["label"] for g in result["groups"]} == {"CartPole-v1:ppo learning_rate=0.003",
                                                      "CartPole-v1:ppo learning_rate=0.0003"}
    assert result["reward_threshold"] == 475.0 and "2 config(s), 10 run(s)" in result["title"]
    image = np.asarray(Image.open(out).convert("RGB"))
    assert image.shape == (500, 900, 3)
    non_white = np.any(image < 250, axis=2).mean()
    assert 0.05 < non_white < 0.6, non_white  # axes, two lines, two bands: drawn, not a blank or solid image
    fast = next(g for g in result["groups"] if "0.003" in g["label"] and "0.0003" not in g["label"])
    assert fast["first_at_threshold"] is not None and fast["final_low"] <= fast["final_mean"] <= fast["final_high"]


def test_plot_refuses_what_it_cannot_draw(seed_runs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rd = ["--runs-dir", str(seed_runs)]
    assert cli.main(["plot", "CartPole-v1:pp", "-o", str(tmp_path / "x.png"), *rd]) == 2
    assert "did you mean CartPole-v1:ppo" in capsys.readouterr().err
    assert cli.main(["plot", "CartPole-v1:ppo", "-o", str(tmp_path / "x.jpg"), *rd]) == 2
    assert cli.main(["plot", "CartPole-v1:ppo", "--smooth", "0", "-o", str(tmp_path / "x.png"), *rd]) == 2


def test_a_plot_range_without_measurements_says_so_not_never_measured(seed_runs: Path) -> None:
    """plot_runs(start_env_steps=) past a run's last row said 'eval/return_mean was never measured in its 1
    run(s)' of a run that measured it 20 times: only the range held none."""
    from gymnasium_solver.plotting import plot_groups
    from gymnasium_solver.run_store import RunStore

    run = seed_runs / "20260101-000000-00fa"
    _, result = plot_groups(RunStore(seed_runs), [run], M.EVAL_RETURN_MEAN, start_env_steps=90_000)
    assert result.groups[0].text == (f"CartPole-v1:ppo: {M.EVAL_RETURN_MEAN} was not measured between env steps 90000 "
                                     "and the end in its 1 run(s).")


def test_a_class_that_takes_render_mode_but_draws_nothing_is_refused_in_one_sentence() -> None:
    """A user's class with render_mode but Gymnasium's own render(): `gsolve eval --video` and
    get_run_info(view="frames") ended in a NotImplementedError traceback (the MCP answer: 'NotImplementedError')."""
    import gymnasium as gym

    from gymnasium_solver.train.policy_eval import _frame

    class DrawsNothing(gym.Env[int, int]):
        def __init__(self, render_mode: str | None = None) -> None:
            self.render_mode = render_mode
            self.observation_space, self.action_space = gym.spaces.Discrete(2), gym.spaces.Discrete(2)

    env = gym.vector.SyncVectorEnv([lambda: DrawsNothing("rgb_array")])
    with pytest.raises(ValueError) as err:
        _frame(env)
    assert str(err.value).endswith("renders no rgb_array frames, so it cannot be recorded")


def test_compare_groups_seeds_without_a_cap_and_runs_hides_trials(seed_runs: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    rd = ["--runs-dir", str(seed_runs)]
    assert cli.main(["compare", "CartPole-v1:ppo", *rd]) == 0  # 10 runs, and more would do
    out = capsys.readouterr().out
    groups = [ln for ln in out.splitlines() if ln.startswith("  CartPole-v1:ppo learning_rate=")]
    assert len(groups) == 2 and all("seeds 0,1,2,3,4" in g for g in groups), out
    assert re.search(r"learning_rate=0.003 +solved 5/5", out), out
    fast, slow = (next(g for g in groups if f"learning_rate={lr} " in g) for lr in ("0.003", "0.0003"))
    assert "interquartile mean 8.2k (95% interval" in fast and "interquartile mean" not in slow, out
    assert cli.main(["compare", "CartPole-v1:ppo", *rd, "--json"]) == 0
    for g in json.loads(capsys.readouterr().out)["groups"]:  # the spread over seeds, from each run's own record
        infos = [rf.read_run_info(seed_runs / r) for r in g["run_ids"]]
        trained = [i.solved_at.env_steps if i.solved_at else i.progress.env_steps for i in infos]
        sp = g["env_steps"]
        assert (sp["seeds"], sp["solved"]) == (5, sum(i.solved_at is not None for i in infos)) == (5, g["solved"])
        assert (sp["low"], sp["median"], sp["high"]) == (min(trained), float(np.median(trained)), max(trained))
        if min(trained) < max(trained):  # something to resample: an interval around the IQM
            assert sp["ci_low"] <= sp["iqm"] <= sp["ci_high"]
        else:
            assert sp["ci_low"] is None and sp["iqm"] == trained[0]
    assert cli.main(["runs", *rd]) == 0
    out = capsys.readouterr().out
    assert "20260101-000009-trial" not in out and "1 trial run(s) hidden; --kind all" in out
    assert cli.main(["runs", "--kind", "trial", *rd]) == 0
    out = capsys.readouterr().out
    assert "20260101-000009-trial" in out and "10 non-trial run(s) hidden" in out


def _frames(text: str) -> list[str]:
    plain = re.sub(r"\x1b\[[0-9;?]*[a-zA-Z]", "", text)
    return [line for line in plain.replace("\r", "\n").split("\n") if line.strip()]


def test_piped_progress_is_one_line_per_evaluation() -> None:
    buf = io.StringIO()
    bar = ProgressBar(200_000, console=Console(file=buf, force_terminal=False, width=80))
    for i in range(1, 4):
        bar.update(2048 * i, float(i), 1069.0, 30.0 + i, None)
        bar.evaluated(2048 * i, float(i), 100.0 * i, 1.5, solved=i == 3)
    bar.close()
    lines = _frames(buf.getvalue())
    assert [ln.startswith("eval at ") for ln in lines] == [True, True, True, False]
    assert lines[2] == "eval at 6144/200000 steps (3%): return 300.0 ± 1.5 (solved) | 1,069 fps | return 33.0 | 0:00:03"
    assert lines[3].strip().startswith("6144/200000 steps | 1,069 fps")


@pytest.mark.parametrize("width", [60, 80, 120])
def test_terminal_bar_shows_percent_rate_and_eta_within_the_width(width: int) -> None:
    buf = io.StringIO()
    bar = ProgressBar(10_000_000, console=Console(file=buf, force_terminal=True, width=width, color_system=None))
    bar.update(1_000_000, 100.0, 12_345.0, 30.0, 120.5)
    time.sleep(0.25)
    bar.update(2_000_000, 200.0, 12_345.0, 30.0, 120.5)
    bar.close()
    last = _frames(buf.getvalue())[-1]
    assert max(len(x) for x in _frames(buf.getvalue())) <= width
    assert "20%" in last and "ETA" in last and "eval 120.5" in last and "…" not in last, last
    if width >= 80:
        steps = "2M/10M steps" if width < 100 else "2000000/10000000 steps"
        assert steps in last and "12,345 fps" in last, last


@pytest.fixture(scope="module")
def solved_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from gymnasium_solver.train import training

    runs = tmp_path_factory.mktemp("video")
    cfg = config.resolve_config("CartPole-v1:ppo", ["n_envs=4", "eval_freq=1024", "eval_episodes=2",
                                                    "batch_size=64", "max_env_steps=8192", "reward_threshold=20"])
    result = training.train(cfg, runs)
    assert result.solved
    return result.run_dir


@pytest.mark.parametrize("suffix", [".gif", ".mp4"])
def test_eval_video_has_one_frame_per_step(solved_run: Path, tmp_path: Path, suffix: str,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    if suffix == ".mp4":
        pytest.importorskip("imageio_ffmpeg")
    out = tmp_path / f"episode{suffix}"
    assert cli.main(["eval", solved_run.name, "--episodes", "2", "--video", str(out), "--json",
                     "--runs-dir", str(solved_run.parent)]) == 0
    video = json.loads(capsys.readouterr().out)["video"]
    assert video["frames"] == video["episode_length"] > 5 and not video["truncated_at_max_frames"]
    if suffix == ".gif":
        # Pillow merges identical consecutive frames into one longer frame: the playing time is what counts.
        image = Image.open(out)
        durations = []
        for i in range(image.n_frames):
            image.seek(i)
            durations.append(image.info["duration"])
        assert sum(durations) == video["episode_length"] * (1000 // video["fps"]) and image.size == (600, 400)
    else:
        import imageio.v2 as imageio

        reader = imageio.get_reader(out)
        assert reader.count_frames() == video["episode_length"]
        reader.close()


def test_a_video_without_a_display_prints_no_sdl_noise(solved_run: Path, tmp_path: Path) -> None:
    """Frames are drawn off screen; SDL looking for a display printed 'XDG_RUNTIME_DIR is invalid or not set' to a
    user who had asked for a gif (a fresh process: pygame reads SDL_VIDEODRIVER when it starts)."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in ("SDL_VIDEODRIVER", "XDG_RUNTIME_DIR", "DISPLAY")}
    done = subprocess.run([sys.executable, "-m", "gymnasium_solver.cli", "eval", solved_run.name, "--episodes", "1",
                           "--video", str(tmp_path / "a.gif"), "--runs-dir", str(solved_run.parent)],
                          capture_output=True, text=True, env=env, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert "XDG_RUNTIME_DIR" not in done.stderr and (tmp_path / "a.gif").is_file()


def test_sampled_frames_are_small_pngs_of_one_episode(solved_run: Path) -> None:
    from gymnasium_solver.train.checkpoints import checkpoint_path
    from gymnasium_solver.train.policy_eval import sample_frames

    frames = sample_frames(checkpoint_path(solved_run, rf.BEST_CHECKPOINT), count=4, max_side=128)
    assert len(frames.pngs) == 4 and frames.steps[0] == 0 and frames.steps[-1] == frames.episode_length - 1
    assert all(max(Image.open(io.BytesIO(p)).size) <= 128 for p in frames.pngs)


def test_video_refuses_an_unknown_format_before_evaluating(solved_run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["eval", solved_run.name, "--video", "out.avi", "--runs-dir", str(solved_run.parent)]) == 2
    assert "--video must end in .mp4 or .gif" in capsys.readouterr().err


# ---------------------------------------------------------------------------------------------
# The same through MCP: plot_runs draws what `gsolve plot` draws; get_run_info(view='frames') shows the policy
# ---------------------------------------------------------------------------------------------
def _png(data: str) -> Image.Image:
    import base64

    raw = base64.b64decode(data)
    assert raw[:8] == b"\x89PNG\r\n\x1a\n"
    return Image.open(io.BytesIO(raw))


@pytest.mark.anyio
async def test_mcp_plot_runs_draws_a_mean_and_band_per_config(seed_runs: Path) -> None:
    from mcp import Client

    from mcp_server.server import create_server

    async with Client(create_server(seed_runs)) as client:
        res = await client.call_tool("plot_runs", {"run_ids": ["CartPole-v1:ppo"], "smooth": 3})
        assert not res.is_error and res.structured_content is not None
        result = res.structured_content
        assert [len(g["run_ids"]) for g in result["groups"]] == [5, 5] and result["group_by"] == "config"
        assert result["reward_threshold"] == 475.0 and "2 config(s), 10 run(s)" in result["title"]
        images = [c for c in res.content if c.type == "image"]
        assert len(images) == 1 and images[0].mime_type == "image/png"
        image = np.asarray(_png(images[0].data).convert("RGB"))
        assert image.shape == (500, 900, 3) and 0.05 < np.any(image < 250, axis=2).mean() < 0.6
        text = next(c.text for c in res.content if c.type == "text")
        assert text.startswith(result["title"]) and "learning_rate=0.003: 5 run(s)" in text
        per_run = (await client.call_tool("plot_runs", {"run_ids": ["20260101-000000-00fa", "20260101-000001-00sl"],
                                                         "group_by": "run", "start_env_steps": 5000})).structured_content
        assert per_run is not None and [g["run_ids"] for g in per_run["groups"]] == [["20260101-000000-00fa"],
                                                                                      ["20260101-000001-00sl"]]
        assert "env steps 5000.." in per_run["title"]
        bad = await client.call_tool("plot_runs", {"run_ids": ["CartPole-v1:pp"]})
        assert bad.is_error and "did you mean CartPole-v1:ppo" in bad.content[0].text  # type: ignore[union-attr]


@pytest.mark.anyio
async def test_mcp_frames_show_one_episode_of_the_policy(solved_run: Path) -> None:
    """A child process renders the frames (the server never imports torch): PNGs of the stated size, in
    episode order, and the text states the episode's return and length."""
    from mcp import Client

    from mcp_server.server import create_server

    async with Client(create_server(solved_run.parent)) as client:
        res = await client.call_tool("get_run_info", {"run_id": solved_run.name, "view": "frames", "frame_count": 4})
        assert not res.is_error, res.content
        assert res.structured_content is not None
        frames = res.structured_content["frames"]
        assert frames["checkpoint"] == "best" and res.structured_content["status"]["solved"]
        images = [_png(c.data) for c in res.content if c.type == "image"]
        assert len(images) == len(frames["steps"]) == 4
        assert all(im.size == (frames["width"], frames["height"]) for im in images)
        assert max(frames["width"], frames["height"]) <= 256 and frames["width"] > frames["height"] > 0  # 600x400 scaled
        assert frames["steps"][0] == 0 and frames["steps"][-1] == frames["episode_length"] - 1
        text = next(c.text for c in res.content if c.type == "text")
        assert f"return {frames['episode_return']:g}" in text and f"length {frames['episode_length']} steps" in text
        assert frames["episode_length"] > 5
        other = await client.call_tool("get_run_info", {"run_id": solved_run.name, "view": "frames",
                                                        "checkpoint": "step_1"})
        assert other.is_error and "best" in other.content[0].text and "Traceback" not in other.content[0].text  # type: ignore[union-attr]
        too_many = await client.call_tool("get_run_info", {"run_id": solved_run.name, "view": "frames",
                                                           "frame_count": 17})
        assert too_many.is_error
        details = await client.call_tool("get_run_info", {"run_id": solved_run.name})
        assert not details.is_error and details.structured_content is not None
        assert details.structured_content["frames"] is None and not [c for c in details.content if c.type == "image"]


@pytest.mark.anyio
async def test_a_child_process_past_its_timeout_is_stopped(tmp_path: Path) -> None:
    """The runner the frames and promote_run use: `serve-metrics` never ends on its own, so only the timeout
    ends it, with the sentence the caller gave, and the process is gone."""
    from mcp_server.common import run_gsolve_json

    def alive() -> list[str]:  # processes whose command line names this test's own folder
        out = []
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
                zombie = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
            except (OSError, IndexError):
                continue  # gone while we looked
            if str(tmp_path) in cmdline and not zombie:
                out.append(cmdline)
        return out

    if not Path("/proc/self/cmdline").exists():
        pytest.skip("needs /proc to see the child process")
    with pytest.raises(ValueError, match="took too long: try a shorter episode"):
        await run_gsolve_json(["serve-metrics", "--port", "0", "--runs-dir", str(tmp_path)], timeout=0.5,
                              on_timeout="took too long: try a shorter episode")
    assert alive() == []


@pytest.mark.anyio
async def test_a_child_process_that_crashes_is_said_to_be_a_bug_not_its_last_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A traceback in the child `gsolve eval --frames` reached the model as its last line alone
    ('NotImplementedError'), which says neither what failed nor what to do."""
    import sys

    from mcp_server.common import run_gsolve_json

    crash = tmp_path / "python"
    crash.write_text("#!/bin/sh\necho 'Traceback (most recent call last):' >&2\necho '  File \"x.py\"' >&2\n"
                     "echo NotImplementedError >&2\nexit 1\n")
    crash.chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(crash))
    with pytest.raises(ValueError) as err:
        await run_gsolve_json(["eval", "RUN", "--frames", "DIR"], timeout=30, on_timeout="")
    assert str(err.value) == ("gsolve eval failed with an internal error (NotImplementedError); this is a bug in "
                              "gymnasium-solver, the server log has the traceback: report it with the call that caused it")


def test_eval_frames_writes_small_pngs_and_says_what_they_show(solved_run: Path, tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    import jsonschema

    from gymnasium_solver.cli.json_out import json_schema

    rd = ["--runs-dir", str(solved_run.parent)]
    assert cli.main(["eval", solved_run.name, "--episodes", "1", "--frames", str(tmp_path), "--frame-count", "3",
                     "--json", *rd]) == 0
    report = json.loads(capsys.readouterr().out)
    jsonschema.validate(report, json_schema("eval"))
    frames = report["frames"]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(frames["files"]) and len(frames["files"]) == 3
    assert all(Image.open(tmp_path / f).size == (frames["width"], frames["height"]) for f in frames["files"])
    assert frames["steps"][-1] == frames["episode_length"] - 1 and max(frames["width"], frames["height"]) <= 256
    # a folder that is not there yet is made, as --video makes its file
    assert cli.main(["eval", solved_run.name, "--episodes", "1", "--frames", str(tmp_path / "new"), "--frame-count",
                     "2", *rd]) == 0
    assert len(list((tmp_path / "new").glob("frame_*.png"))) == 2
    capsys.readouterr()
    # refused before anything is evaluated: a count out of range, a file, a folder whose parent is not there
    assert cli.main(["eval", solved_run.name, "--frames", str(tmp_path), "--frame-count", "17", *rd]) == 2
    assert "--frame-count must be between 1 and 16" in capsys.readouterr().err
    (tmp_path / "a_file").write_text("")
    assert cli.main(["eval", solved_run.name, "--frames", str(tmp_path / "a_file"), *rd]) == 2
    assert "is a file" in capsys.readouterr().err
    assert cli.main(["eval", solved_run.name, "--frames", str(tmp_path / "nope" / "deeper"), *rd]) == 2
    assert f"the folder {tmp_path / 'nope'} does not exist" in capsys.readouterr().err
    assert not (tmp_path / "nope").exists()


@pytest.mark.parametrize("length, count", [(10_000, 6), (3, 6), (1, 1), (97, 16)])
def test_frame_sampler_holds_few_frames_and_picks_nearly_even_steps(length: int, count: int) -> None:
    """However long the episode, at most 4 * count + 1 thumbnails are held; the steps shown include the first
    and the last, each within length / (4 * count) of its evenly spaced target, and each PNG is its step's frame."""
    from gymnasium_solver.train.policy_eval import FrameSampler

    sampler = FrameSampler(count, max_side=16)
    for step in range(length):
        sampler.add(step, np.full((4, 4, 3), step % 251, dtype=np.uint8))
    steps, pngs = sampler.pick(length)
    assert sampler.peak <= 4 * count + 1 and len(sampler.kept) <= 4 * count + 1
    assert len(steps) == min(count, length) and steps[0] == 0 and steps[-1] == length - 1
    targets = [round(i * (length - 1) / max(count - 1, 1)) for i in range(count)]
    assert all(min(abs(s - t) for s in steps) <= length / (4 * count) for t in targets)
    for step, png in zip(steps, pngs, strict=True):
        assert Image.open(io.BytesIO(png)).getpixel((0, 0)) == (step % 251,) * 3
