"""OpenTelemetry export of a run, for teams with an observability pipeline: one span per run (an event
at each evaluation, the final results as attributes when it ends) and every metrics.csv column as a
gauge, sent over OTLP/HTTP to the endpoint of the standard ``OTEL_EXPORTER_OTLP_*`` environment
variables (docs/tracking.md). The providers are the sink's own, never the process-global ones."""

from __future__ import annotations

import math
import os
from typing import Any

from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.train.tracking.sinks import Row, SinkContext, final_results

SERVICE_NAME = "gymnasium-solver"
SPAN_NAME = "gsolve.train"
EVAL_EVENT = "evaluation"
METRIC_PREFIX = "gsolve."  # gsolve.eval/return_mean: instrument names allow '/', '.', '_' and '-'
EXPORT_TIMEOUT_SECONDS = 5.0
_EVAL_KEYS = (rf.M.EVAL_RETURN_MEAN, rf.M.EVAL_RETURN_STD, rf.M.EVAL_EP_LEN_MEAN)


def make_exporters() -> tuple[Any, Any]:
    """(span exporter, metric reader) for OTLP/HTTP; each reads its endpoint, headers and timeout from
    the OTEL_EXPORTER_OTLP_* environment variables (default http://localhost:4318). Tests replace this."""
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader

    # A collector that is down must cost the end of a run seconds: the exporters retry until their timeout
    # (10 s each by default, spans then metrics). Ours is 5 s unless the user set one.
    timeouts = ("OTEL_EXPORTER_OTLP_TIMEOUT", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_EXPORTER_OTLP_METRICS_TIMEOUT")
    timeout = None if any(os.environ.get(k) for k in timeouts) else EXPORT_TIMEOUT_SECONDS
    return OTLPSpanExporter(timeout=timeout), PeriodicExportingMetricReader(OTLPMetricExporter(timeout=timeout))


class OtelSink:
    name = "otel"

    def __init__(self) -> None:
        self._tracer_provider: Any = None
        self._meter_provider: Any = None
        self._span: Any = None
        self._gauges: dict[str, Any] = {}
        self._meter: Any = None
        self._attributes: dict[str, str] = {}

    def start(self, ctx: SinkContext) -> None:
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        info = ctx.info
        self._attributes = {"gsolve.run_id": info.run_id, "gsolve.config_id": info.config_id,
                            "gsolve.env_id": info.env_id, "gsolve.algo": info.algo}
        resource = Resource.create({"service.name": SERVICE_NAME})
        span_exporter, metric_reader = make_exporters()
        self._tracer_provider = TracerProvider(resource=resource)
        self._tracer_provider.add_span_processor(BatchSpanProcessor(span_exporter))
        self._meter_provider = MeterProvider(resource=resource, metric_readers=[metric_reader])
        self._meter = self._meter_provider.get_meter("gymnasium_solver")
        tracer = self._tracer_provider.get_tracer("gymnasium_solver")
        self._span = tracer.start_span(SPAN_NAME, attributes={**self._attributes, "gsolve.seed": info.seed,
                                                             "gsolve.resumed": ctx.resumed,
                                                             "gsolve.max_env_steps": info.max_env_steps})
        info.tracking["otel_trace_id"] = f"{self._span.get_span_context().trace_id:032x}"

    def append(self, row: Row) -> None:
        steps = row.get(rf.M.ENV_STEPS)
        if steps is None:
            return
        for key, value in row.items():
            if value is None or not math.isfinite(value) or key == rf.M.ENV_STEPS:
                continue
            gauge = self._gauges.get(key)
            if gauge is None:
                gauge = self._gauges[key] = self._meter.create_gauge(f"{METRIC_PREFIX}{key}")
            gauge.set(float(value), self._attributes)
        evaluation = {k: float(v) for k in _EVAL_KEYS if (v := row.get(k)) is not None and math.isfinite(v)}
        if rf.M.EVAL_RETURN_MEAN in evaluation:
            self._span.add_event(EVAL_EVENT, {rf.M.ENV_STEPS: int(steps), **evaluation})

    def finish(self, info: rf.RunInfo) -> None:
        from opentelemetry.trace import Status, StatusCode

        self._span.set_attributes({f"gsolve.final.{k}": v for k, v in final_results(info).items()})
        self._span.set_attribute("gsolve.status", info.status.value)
        if info.stop_reason is not None:
            self._span.set_attribute("gsolve.stop_reason", info.stop_reason.value)
        failed = info.status not in (rf.RunStatus.COMPLETED, rf.RunStatus.STOPPED)
        self._span.set_status(Status(StatusCode.ERROR if failed else StatusCode.OK))
        self._span.end()
        self._span = None
        self.close()

    def close(self) -> None:
        if self._span is not None:  # the run ended without finish (an error): the span still ends
            self._span.end()
            self._span = None
        for provider in (self._tracer_provider, self._meter_provider):
            if provider is not None:
                provider.shutdown()  # flushes what is pending, bounded by the exporters' timeouts
        self._tracer_provider = self._meter_provider = None
