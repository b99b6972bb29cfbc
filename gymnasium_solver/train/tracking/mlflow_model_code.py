"""The model script MLflow copies into a logged model and runs to load it ("models from code")."""

from mlflow.models import set_model

from gymnasium_solver.train.tracking.mlflow_model import PolicyModel

set_model(PolicyModel())
