"""A checkpoint as an MLflow pyfunc model: ``mlflow.pyfunc.load_model(uri).predict(obs)`` returns the
policy's deterministic actions (argmax / Gaussian mean) for a batch of raw observations, normalised
with the statistics saved in the checkpoint. Loading needs gymnasium-solver installed. Logged as
MLflow "models from code" (``MODEL_CODE``, nothing pickled)."""

from __future__ import annotations

from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
from mlflow.pyfunc.model import PythonModel

MODEL_CODE = Path(__file__).with_name("mlflow_model_code.py")  # what MLflow runs to build the model


def pip_requirements() -> list[str]:
    """The libraries the model needs, pinned to this trainer's versions (given, not inferred: MLflow's
    inference would load the model in a subprocess at the end of every run)."""
    out = []
    for dist in ("torch", "gymnasium", "numpy"):
        try:
            out.append(f"{dist}=={metadata.version(dist)}")
        except metadata.PackageNotFoundError:
            out.append(dist)
    return out


class PolicyModel(PythonModel):
    # MLflow's switch for skipping type-hint validation of predict (its own ChatModel uses it): an
    # observation batch has no schema to validate, and without it defining this class warns
    # "Add type hints to the `predict` method" in every run that logs a model.
    _skip_type_hint_validation = True

    def load_context(self, context: Any) -> None:
        from gymnasium_solver.envs import make_vec_env, space_spec
        from gymnasium_solver.train.checkpoints import checkpoint_config, load_checkpoint

        path = Path(context.artifacts["checkpoint"])
        cfg = checkpoint_config(path)
        env = make_vec_env(cfg, 1)
        try:
            spec = space_spec(env)
        finally:
            env.close()
        self._loaded = load_checkpoint(path, spec)
        self._obs_dim = spec.obs_dim

    # No type hints: MLflow reads predict's hints as an input schema, and an observation batch has none.
    def predict(self, context, model_input, params=None):  # type: ignore[no-untyped-def]
        obs = np.asarray(getattr(model_input, "values", model_input), np.float32).reshape(-1, self._obs_dim)
        policy, normalizer = self._loaded.policy, self._loaded.normalizer
        return policy.act(normalizer(obs), None, deterministic=True).env_actions
