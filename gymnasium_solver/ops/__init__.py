"""Operations over many runs: the model registry, promotion, regression checks, telemetry. docs/ARCHITECTURE.md"""
