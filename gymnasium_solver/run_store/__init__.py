"""The read side of the run-folder contract, re-exported: find runs, read them safely, never import torch.

Each job has its module: :mod:`.refs` resolves run references, :mod:`.files` is the one way a
run file is read, :mod:`.metrics` parses metrics.csv, :mod:`.cache` bounds memory, :mod:`.store`
ties them together as :class:`RunStore`, and the query modules (:mod:`.summaries`,
:mod:`.details`, :mod:`.series`, :mod:`.status`, :mod:`.logs`, :mod:`.checkpoints`,
:mod:`.compare`) answer the CLI and the MCP server with small pydantic models.
"""

from gymnasium_solver.run_store.cache import DEFAULT_CACHE_MB, ByteLRU
from gymnasium_solver.run_store.checkpoints import CheckpointInfo, CheckpointList, list_checkpoints
from gymnasium_solver.run_store.compare import ComparedRun, Comparison, ConfigDifference, compare_runs
from gymnasium_solver.run_store.details import (
    KEY_HYPERPARAMETERS,
    FileState,
    PresetDifference,
    RunDetails,
    key_hyperparameters,
    preset_comparison,
    run_details,
)
from gymnasium_solver.run_store.files import RunFileError, read_run_file, read_run_text
from gymnasium_solver.run_store.groups import (
    BestRun,
    SeedGroup,
    best_run,
    group_runs,
    rank_configs,
    select_runs,
)
from gymnasium_solver.run_store.limits import (
    MAX_COMPARE,
    MAX_LIST_LIMIT,
    MAX_LOG_CHARS,
    MAX_LOG_LINE_CHARS,
    MAX_LOG_LINES,
    MAX_NON_FINITE_LISTED,
    MAX_POINTS_PER_SERIES,
    MAX_POINTS_TOTAL,
    check_limit,
)
from gymnasium_solver.run_store.logs import LogTail, tail_log
from gymnasium_solver.run_store.metrics import MetricsArrays, MetricsFile, read_metrics
from gymnasium_solver.run_store.refs import (
    LAST_REF,
    LIST_RUNS_HINT,
    RunNotFoundError,
    list_run_ids,
    resolve_run_dir,
)
from gymnasium_solver.run_store.series import (
    DEFAULT_METRICS,
    SIGNIFICANT_DIGITS,
    MetricInfo,
    MetricList,
    MetricSeries,
    MetricsResult,
    NonFiniteKind,
    available_metrics,
    downsample_indices,
    first_non_finite,
    query_metrics,
    unknown_metric_error,
)
from gymnasium_solver.run_store.status import TrainingStatus, refuse_live, training_status
from gymnasium_solver.run_store.store import RunStore
from gymnasium_solver.run_store.summaries import (
    EvalSummary,
    RunKind,
    RunList,
    RunSummary,
    list_runs,
    summarize_run,
    threshold,
)

__all__ = [
    "DEFAULT_CACHE_MB", "DEFAULT_METRICS", "KEY_HYPERPARAMETERS", "LAST_REF", "LIST_RUNS_HINT", "MAX_COMPARE",
    "MAX_LIST_LIMIT", "RunKind", "SeedGroup", "select_runs", "group_runs", "rank_configs", "MAX_LOG_CHARS", "MAX_LOG_LINES", "MAX_LOG_LINE_CHARS", "MAX_NON_FINITE_LISTED",
    "MAX_POINTS_PER_SERIES", "MAX_POINTS_TOTAL", "SIGNIFICANT_DIGITS", "BestRun", "ByteLRU", "CheckpointInfo",
    "CheckpointList", "ComparedRun", "Comparison", "ConfigDifference", "EvalSummary", "FileState", "LogTail",
    "MetricInfo", "MetricList", "MetricSeries", "MetricsArrays", "MetricsFile", "MetricsResult", "NonFiniteKind",
    "PresetDifference", "RunDetails", "RunFileError", "RunList", "RunNotFoundError", "RunStore", "RunSummary",
    "TrainingStatus", "available_metrics", "best_run", "check_limit", "compare_runs", "downsample_indices",
    "first_non_finite", "key_hyperparameters", "list_checkpoints", "list_run_ids", "list_runs", "preset_comparison",
    "query_metrics", "read_metrics", "read_run_file", "read_run_text", "resolve_run_dir", "run_details",
    "refuse_live", "summarize_run", "tail_log", "threshold", "training_status", "unknown_metric_error",
]  # fmt: skip
