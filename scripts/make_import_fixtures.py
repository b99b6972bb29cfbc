"""Make the import fixtures in tests/fixtures/imports/ by running the real libraries (never by hand).

    .venv/bin/python scripts/make_import_fixtures.py [--only NAME] \
        [--cleanrl-repo /work/.mirror/vwxyzjn+cleanrl/repo] [--cleanrl-python PY]

Each fixture is a short real training run (a few thousand env steps, seed 1):

- ``rlzoo_dqn_cartpole``: ``python -m rl_zoo3.train --algo dqn --env CartPole-v1`` (rl_zoo3 2.9, in the
  developer's venv only: ``pip install rl_zoo3``). Kept as the Zoo writes it: ``0.monitor.csv``,
  ``evaluations.npz``, ``CartPole-v1/config.yml``, ``args.yml``, ``command.txt``; the model zips are
  deleted (the importer never reads weights) to keep the fixture small.
- ``sb3_log_ppo_cartpole``: Stable-Baselines3 PPO with ``configure(folder, ["csv", "tensorboard"])``,
  a ``Monitor`` and an ``EvalCallback(log_path=folder)``: progress.csv, monitor.csv, evaluations.npz
  (and the event file of the same logger, which the importer ignores when progress.csv is there).
- ``sb3_log_dqn_cartpole``: Stable-Baselines3 DQN with ``configure(folder, ["csv"])``, a ``Monitor`` and an
  ``EvalCallback``: progress.csv (``train/loss`` is DQN's TD loss, ``rollout/exploration_rate`` its
  epsilon), monitor.csv, evaluations.npz.
- ``sb3_tb_ppo_pendulum``: Stable-Baselines3 PPO on Pendulum-v1 (Box actions) with
  ``tensorboard_log=``, a ``Monitor`` and an ``EvalCallback``: the ``PPO_1/`` event folder only.
- ``cleanrl_ppo_cartpole``: CleanRL's own ``cleanrl/ppo.py``, unmodified, from a checkout made with
  the ``fetch`` tool (github:vwxyzjn/cleanrl), run in a side venv whose gymnasium is 0.29.1 (CleanRL
  reads ``infos["final_info"]``, which gymnasium 1.x no longer sets, so under 1.x it would log no
  episode returns). The side venv reuses this venv's packages through a .pth file:

      python3 -m venv /tmp/cleanrl-venv
      .venv/bin/python -c "import site; print(site.getsitepackages()[0])" \
          > /tmp/cleanrl-venv/lib/python3.11/site-packages/zz_gsolve.pth
      /tmp/cleanrl-venv/bin/pip install "gymnasium==0.29.1" tyro

  Only the event file it writes (``runs/<run_name>/events.out.tfevents.*``) is kept.
- ``cleanrl_dqn_cartpole``: CleanRL's own ``cleanrl/dqn.py``, unmodified, in the same side venv
  (``losses/td_loss``, ``losses/q_values``, ``charts/epsilon``).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "fixtures" / "imports"
SEED = 1


def rlzoo_dqn_cartpole(dest: Path, tmp: Path) -> None:
    subprocess.run([sys.executable, "-m", "rl_zoo3.train", "--algo", "dqn", "--env", "CartPole-v1", "-n", "4000",
                    "--eval-freq", "1000", "--eval-episodes", "5", "--seed", str(SEED), "-f", str(tmp / "logs"),
                    "--vec-env", "dummy"], check=True, cwd=tmp)
    (run,) = (tmp / "logs" / "dqn").iterdir()
    for p in run.rglob("*.zip"):
        p.unlink()
    shutil.copytree(run, dest)


def _sb3_ppo(env_id: str, folder: Path, steps: int, csv_logger: bool) -> None:
    import gymnasium as gym
    import torch
    from stable_baselines3 import PPO
    from stable_baselines3.common.callbacks import EvalCallback
    from stable_baselines3.common.logger import configure
    from stable_baselines3.common.monitor import Monitor

    torch.set_num_threads(1)
    folder.mkdir(parents=True, exist_ok=True)
    env = Monitor(gym.make(env_id), str(folder / "monitor.csv"))
    eval_cb = EvalCallback(Monitor(gym.make(env_id)), eval_freq=1024, n_eval_episodes=5, log_path=str(folder),
                           deterministic=True, verbose=0)
    if csv_logger:
        model = PPO("MlpPolicy", env, n_steps=256, batch_size=64, seed=SEED, verbose=0)
        model.set_logger(configure(str(folder), ["csv", "tensorboard"]))
    else:
        model = PPO("MlpPolicy", env, n_steps=256, batch_size=64, seed=SEED, verbose=0,
                    tensorboard_log=str(folder / "tb"))
    model.learn(total_timesteps=steps, callback=eval_cb)


def sb3_log_dqn_cartpole(dest: Path, tmp: Path) -> None:
    import gymnasium as gym
    import torch
    from stable_baselines3 import DQN
    from stable_baselines3.common.callbacks import EvalCallback
    from stable_baselines3.common.logger import configure
    from stable_baselines3.common.monitor import Monitor

    torch.set_num_threads(1)
    dest.mkdir(parents=True, exist_ok=True)
    env = Monitor(gym.make("CartPole-v1"), str(dest / "monitor.csv"))
    model = DQN("MlpPolicy", env, learning_starts=500, train_freq=4, target_update_interval=250,
                exploration_fraction=0.5, seed=SEED, verbose=0)
    model.set_logger(configure(str(dest), ["csv"]))
    eval_cb = EvalCallback(Monitor(gym.make("CartPole-v1")), eval_freq=1000, n_eval_episodes=5, log_path=str(dest),
                           deterministic=True, verbose=0)
    model.learn(total_timesteps=4000, log_interval=4, callback=eval_cb)


def sb3_log_ppo_cartpole(dest: Path, tmp: Path) -> None:
    _sb3_ppo("CartPole-v1", dest, 6144, csv_logger=True)


def sb3_tb_ppo_pendulum(dest: Path, tmp: Path) -> None:
    _sb3_ppo("Pendulum-v1", tmp / "sb3", 6144, csv_logger=False)
    shutil.copytree(tmp / "sb3" / "tb" / "PPO_1", dest)


def cleanrl_ppo_cartpole(dest: Path, tmp: Path, repo: Path, python: str) -> None:
    _cleanrl(dest, tmp, [python, str(repo / "cleanrl" / "ppo.py"), "--env-id", "CartPole-v1", "--total-timesteps",
                         "8192", "--num-envs", "4", "--num-steps", "128", "--seed", str(SEED)])


def cleanrl_dqn_cartpole(dest: Path, tmp: Path, repo: Path, python: str) -> None:
    _cleanrl(dest, tmp, [python, str(repo / "cleanrl" / "dqn.py"), "--env-id", "CartPole-v1", "--total-timesteps",
                         "4000", "--learning-starts", "500", "--seed", str(SEED)])


def _cleanrl(dest: Path, tmp: Path, command: list[str]) -> None:
    # cleanrl_utils (imported by dqn.py) sits beside cleanrl/ in the checkout
    env = {**os.environ, "PYTHONPATH": str(Path(command[1]).parent.parent)}
    subprocess.run(command, check=True, cwd=tmp, env=env)
    (run,) = (tmp / "runs").iterdir()
    dest.mkdir(parents=True)
    for p in run.glob("events.out.tfevents.*"):
        shutil.copy2(p, dest / p.name)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", help="make only this fixture")
    ap.add_argument("--cleanrl-repo", default="/work/.mirror/vwxyzjn+cleanrl/repo",
                    help="a CleanRL checkout (a git dir without work tree is exported with git archive)")
    ap.add_argument("--cleanrl-python", default="/tmp/cleanrl-venv/bin/python")
    args = ap.parse_args()
    os.environ["OMP_NUM_THREADS"] = "1"  # tiny networks: one thread each is fastest on a shared machine
    makers = {"rlzoo_dqn_cartpole": rlzoo_dqn_cartpole, "sb3_log_ppo_cartpole": sb3_log_ppo_cartpole,
              "sb3_log_dqn_cartpole": sb3_log_dqn_cartpole, "sb3_tb_ppo_pendulum": sb3_tb_ppo_pendulum}
    cleanrl = {"cleanrl_ppo_cartpole": cleanrl_ppo_cartpole, "cleanrl_dqn_cartpole": cleanrl_dqn_cartpole}
    for name in [*makers, *cleanrl]:
        if args.only and name != args.only:
            continue
        dest = OUT / name
        shutil.rmtree(dest, ignore_errors=True)
        with tempfile.TemporaryDirectory() as t:
            tmp = Path(t)
            if name in cleanrl:
                repo = Path(args.cleanrl_repo)
                if not (repo / "cleanrl").is_dir():  # a bare mirror: export its tree
                    subprocess.run(f"git --git-dir={repo} archive HEAD cleanrl cleanrl_utils | tar -x -C {tmp}", shell=True,
                                   check=True)
                    repo = tmp
                cleanrl[name](dest, tmp, repo, args.cleanrl_python)
            else:
                makers[name](dest, tmp)
        print(f"{name}: {sum(p.stat().st_size for p in dest.rglob('*') if p.is_file())} bytes in {dest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
