"""Optional outputs of a run besides its folder (docs/tracking.md): TensorBoard event files, MLflow,
Weights & Biases (offline) and OpenTelemetry, written by metric sinks that the RunWriter feeds, so
every trainer that writes through it gets them. The run folder stays the source of truth; a sink that fails is switched off and
recorded, never the end of the run."""

from gymnasium_solver.train.tracking.sinks import (  # noqa: F401 - the package's API
    TRACKING_PIP,
    MetricSink,
    SinkContext,
    Sinks,
    check_tracking_available,
    make_sinks,
)
