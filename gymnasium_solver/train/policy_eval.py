"""A saved policy at work: its returns over N deterministic episodes, and the frames of one episode
(a video file for `gsolve eval --video`, a few small PNGs for an assistant).

Checkpoints load only through checkpoints.py (weights_only, docs/security.md). torch, gymnasium and
the renderer are imported inside the functions: the models here are read by the torch-free CLI paths.
"""

from __future__ import annotations

import io
import os
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import BaseModel, Field

VIDEO_SUFFIXES = (".mp4", ".gif")
MAX_VIDEO_FRAMES = 10_000  # an episode longer than this is cut (a 10k-frame GIF is already ~100 MB)
MAX_FRAME_SIDE = 256  # the sampled frames an assistant sees: bounded in size (PNG, longest side)
MAX_SAMPLED_FRAMES = 16
MP4_INSTALL = "pip install 'gymnasium-solver[video]'"


class VideoInfo(BaseModel):
    path: str
    frames: int = Field(description="frames recorded: one per step of the episode (the state each action saw); a GIF "
                        "stores identical consecutive frames as one longer frame, so its playing time is frames / fps")
    fps: int
    episode_return: float
    episode_length: int
    truncated_at_max_frames: bool = False


class EvalReport(BaseModel):
    """`gsolve eval`: a checkpoint's deterministic returns over episodes, and the video if one was asked."""

    run_id: str | None = Field(description="the run the checkpoint belongs to (None for a registered model)")
    model_ref: str | None = None
    checkpoint: str
    config_id: str
    env_steps: int = Field(description="env steps the policy was trained for")
    episodes: int
    seed: int
    return_mean: float
    return_std: float
    return_min: float
    return_max: float
    ep_len_mean: float
    returns: list[float]
    video: VideoInfo | None = None
    frames: FramesInfo | None = None


class CheckpointEvaluation(NamedTuple):
    result: Any  # evaluation.EvalResult (not imported at module level: it pulls in torch)
    loaded: Any  # checkpoints.LoadedPolicy


def evaluate_checkpoint(path: Path, episodes: int, seed: int) -> CheckpointEvaluation:
    """Load a checkpoint and evaluate it deterministically over ``episodes`` parallel episodes."""
    from gymnasium_solver.agents.networks import limit_threads
    from gymnasium_solver.envs import make_vec_env, space_spec
    from gymnasium_solver.train.checkpoints import checkpoint_config, load_checkpoint
    from gymnasium_solver.train.evaluation import evaluate

    cfg = checkpoint_config(path)
    limit_threads(cfg.torch_threads)
    env = make_vec_env(cfg, episodes)
    try:
        loaded = load_checkpoint(path, space_spec(env))
        return CheckpointEvaluation(evaluate(loaded.policy, loaded.normalizer, env, seed), loaded)
    finally:
        env.close()


class Episode(NamedTuple):
    frames: list[Any]  # HxWx3 uint8 arrays, one per step
    episode_return: float
    length: int
    fps: int
    cut: bool  # stopped at max_frames before the episode ended


def play_episode(path: Path, seed: int, max_frames: int = MAX_VIDEO_FRAMES) -> Episode:
    """One deterministic episode of the checkpoint's policy, rendered (render_mode='rgb_array'): the
    frame each action was chosen on, so ``len(frames) == length``."""
    frames: list[Any] = []
    total, length, fps, cut = _play(path, seed, max_frames, lambda step, frame: frames.append(frame))
    return Episode(frames, total, length, fps, cut)


def _play(path: Path, seed: int, max_frames: int, on_frame: Callable[[int, Any], None]) -> tuple[float, int, int, bool]:
    """Play one deterministic episode, handing each step's frame to ``on_frame`` (kept or not, as it
    chooses): the return, the length, the render fps and whether it was cut at ``max_frames``."""
    import numpy as np

    from gymnasium_solver.agents.networks import limit_threads
    from gymnasium_solver.envs import batch_obs, make_vec_env, space_spec
    from gymnasium_solver.train.checkpoints import checkpoint_config, load_checkpoint

    cfg = checkpoint_config(path)
    limit_threads(cfg.torch_threads)  # as evaluate_checkpoint: numpy's BLAS would take every core for one env
    # Frames are drawn off screen: without a display SDL (pygame) otherwise prints "XDG_RUNTIME_DIR is invalid or not
    # set" looking for one. A driver the user set is kept.
    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    try:
        with warnings.catch_warnings():  # a class without render_modes: Gymnasium warns, then the class says it
            warnings.filterwarnings("ignore", message=".*not in the possible render_modes")
            env = make_vec_env(cfg, 1, render_mode="rgb_array")
    except TypeError as exc:  # Gymnasium passes render_mode to the class: a user's class may take none
        raise ValueError(f"{cfg.env_id} cannot be recorded: its environment takes no render_mode "
                         "(an env with render_mode='rgb_array' frames can be)") from exc
    try:
        loaded = load_checkpoint(path, space_spec(env))
        fps = int(env.metadata.get("render_fps") or 30)
        raw, _ = env.reset(seed=seed)
        total = 0.0
        for step in range(max_frames):
            on_frame(step, _frame(env))
            obs = loaded.normalizer(batch_obs(raw, loaded.policy.spec, 1))
            out = loaded.policy.act(obs, None, deterministic=True)
            raw, reward, term, trunc, _ = env.step(out.env_actions)
            total += float(np.asarray(reward).reshape(-1)[0])
            if bool(np.asarray(term).reshape(-1)[0]) or bool(np.asarray(trunc).reshape(-1)[0]):
                return total, step + 1, fps, False
        return total, max_frames, fps, True
    finally:
        env.close()


def _frame(env: Any) -> Any:
    import numpy as np

    try:
        rendered = env.render()
    except NotImplementedError:  # gymnasium.Env.render's own: a class that takes render_mode but draws nothing
        rendered = None
    frame = rendered[0] if isinstance(rendered, list | tuple) else rendered
    if frame is None:
        raise ValueError(f"{env.spec.id if env.spec else 'this environment'} renders no rgb_array frames, so it "
                         "cannot be recorded")
    return np.asarray(frame, dtype=np.uint8)


def write_video(frames: list[Any], out: Path, fps: int) -> None:
    """Frames to ``out``: .gif through Pillow (a core dependency via matplotlib), .mp4 through imageio's
    ffmpeg (the `video` extra). ValueError with the install command when the writer is missing."""
    suffix = out.suffix.lower()
    if suffix not in VIDEO_SUFFIXES:
        raise ValueError(f"--video must end in {' or '.join(VIDEO_SUFFIXES)}, got {out.name!r}")
    if not frames:
        raise ValueError("the episode has no frames to write")
    if suffix == ".gif":
        from PIL import Image

        images = [Image.fromarray(f) for f in frames]
        images[0].save(out, save_all=True, append_images=images[1:], duration=1000 // fps, loop=0,
                       optimize=False)
        return
    try:
        import imageio.v2 as imageio
        import imageio_ffmpeg  # noqa: F401 - the mp4 encoder; only to say what to install
    except ImportError:
        raise ValueError(f"an .mp4 needs imageio and imageio-ffmpeg: {MP4_INSTALL}; or write a .gif") from None
    # macro_block_size 1: any frame size (600x400 CartPole is not a multiple of 16); yuv420p plays everywhere.
    with imageio.get_writer(out, fps=fps, codec="libx264", macro_block_size=1, pixelformat="yuv420p") as w:
        for f in frames:
            w.append_data(f)  # type: ignore[attr-defined]


def record_video(path: Path, out: Path, seed: int = 0, max_frames: int = MAX_VIDEO_FRAMES) -> VideoInfo:
    """Play one deterministic episode of checkpoint ``path`` and write it to ``out`` (.mp4 or .gif)."""
    if out.suffix.lower() not in VIDEO_SUFFIXES:  # before the episode is played
        raise ValueError(f"--video must end in {' or '.join(VIDEO_SUFFIXES)}, got {out.name!r}")
    episode = play_episode(path, seed, max_frames)
    write_video(episode.frames, out, episode.fps)
    return VideoInfo(path=str(out), frames=len(episode.frames), fps=episode.fps, episode_return=episode.episode_return,
                     episode_length=episode.length, truncated_at_max_frames=episode.cut)


class SampledFrames(NamedTuple):
    pngs: list[bytes]  # PNG images, longest side at most MAX_FRAME_SIDE
    steps: list[int]  # the step of the episode each frame shows
    episode_return: float
    episode_length: int


class FrameSampler:
    """Keeps a bounded set of an episode's frames as it is played (see sample_frames), then picks ``count``
    nearly evenly spaced ones, the first and the last included."""

    def __init__(self, count: int, max_side: int = MAX_FRAME_SIDE) -> None:
        self.count, self.max_side = count, max_side
        self.kept: dict[int, Any] = {}  # step -> thumbnail (PIL image)
        self.stride = 1
        self.peak = 0  # the most thumbnails held at once: at most 4 * count + 1
        self._last: tuple[int, Any] | None = None

    def _thumbnail(self, frame: Any) -> Any:
        from PIL import Image

        image = Image.fromarray(frame)
        image.thumbnail((self.max_side, self.max_side))
        return image

    def add(self, step: int, frame: Any) -> None:
        self._last = (step, frame)
        if step % self.stride:
            return
        self.kept[step] = self._thumbnail(frame)
        self.peak = max(self.peak, len(self.kept))
        if len(self.kept) > 4 * self.count:
            self.stride *= 2
            for s in [s for s in self.kept if s % self.stride]:
                del self.kept[s]

    def pick(self, length: int) -> tuple[list[int], list[bytes]]:
        """The steps shown and their PNGs, for an episode of ``length`` steps."""
        if self._last is not None and self._last[0] not in self.kept:
            self.kept[self._last[0]] = self._thumbnail(self._last[1])
        have = sorted(self.kept)
        if not have:
            return [], []
        targets = [round(i * (length - 1) / max(self.count - 1, 1)) for i in range(self.count)]
        steps = sorted({min(have, key=lambda s: abs(s - t)) for t in targets})  # noqa: B023 - used at once
        pngs = []
        for step in steps:
            buf = io.BytesIO()
            self.kept[step].save(buf, format="PNG")
            pngs.append(buf.getvalue())
        return steps, pngs


def sample_frames(path: Path, seed: int = 0, count: int = 6, max_side: int = MAX_FRAME_SIDE) -> SampledFrames:
    """A few evenly spaced frames of one deterministic episode, as small PNGs, with its return and length:
    what an assistant looks at to see what the policy does (an MCP tool returns these as images).

    Memory stays bounded whatever the episode's length (a 10,000-step episode of 600x400 frames would be
    7 GB): every step is rendered but only every ``stride``-th frame is kept, as a thumbnail, and the
    stride doubles whenever more than 4 * ``count`` are kept; the last frame is kept apart. Each frame
    shown is the kept one nearest its evenly spaced target, so the steps are exact and nearly even."""
    if not 1 <= count <= MAX_SAMPLED_FRAMES:
        raise ValueError(f"count must be between 1 and {MAX_SAMPLED_FRAMES}, got {count}")
    if not 16 <= max_side <= MAX_FRAME_SIDE:
        raise ValueError(f"max_side must be between 16 and {MAX_FRAME_SIDE}, got {max_side}")
    sampler = FrameSampler(count, max_side)
    episode_return, length, _, _ = _play(path, seed, MAX_VIDEO_FRAMES, sampler.add)
    steps, pngs = sampler.pick(length)
    return SampledFrames(pngs, steps, episode_return, length)


class FramesInfo(BaseModel):
    """`gsolve eval --frames DIR`: a few frames of one deterministic episode written as small PNGs."""

    folder: str
    files: list[str] = Field(description="the PNG files in folder, in episode order")
    steps: list[int] = Field(description="the episode step each frame shows (0: the first observation)")
    width: int = Field(description=f"pixels; the longest side is at most {MAX_FRAME_SIDE}")
    height: int
    seed: int
    episode_return: float
    episode_length: int


def save_frames(path: Path, folder: Path, seed: int = 0, count: int = 6) -> FramesInfo:
    """Write ``count`` evenly spaced frames of one deterministic episode (seed ``seed``) of checkpoint
    ``path`` into ``folder`` as frame_NN_step_S.png; what they show, with the episode's return and length."""
    from PIL import Image

    sampled = sample_frames(path, seed, count)
    files = []
    for i, (png, step) in enumerate(zip(sampled.pngs, sampled.steps, strict=True)):
        name = f"frame_{i:02d}_step_{step}.png"
        (folder / name).write_bytes(png)
        files.append(name)
    width, height = Image.open(io.BytesIO(sampled.pngs[0])).size if sampled.pngs else (0, 0)
    return FramesInfo(folder=str(folder), files=files, steps=sampled.steps, width=width, height=height, seed=seed,
                      episode_return=sampled.episode_return, episode_length=sampled.episode_length)
