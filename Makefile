# Two commands matter: `make demo` and `make test`. Both create .venv if it is missing.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
HASH := $(shell cat pyproject.toml | cksum | cut -d' ' -f1)
STAMP := $(VENV)/.installed-all-$(HASH)
# `make demo` needs the core install only (no Ray, ALE, MLflow, TensorBoard, test tools): its own stamp.
CORE_STAMP := $(VENV)/.installed-core-$(HASH)

.PHONY: demo test lint typecheck pytest bench bench-check bench-check-any-env bench-record bench-record-machine docs-tables mutation clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	@echo "Installing gymnasium-solver with every extra into $(VENV) (torch 2.13.0 CPU)..."
	$(BIN)/python -m pip install --quiet -e ".[all]"
	@# Bytecode for what `make demo` installed without it (below), so no test process compiles torch's modules
	@# (under PYTHONDONTWRITEBYTECODE each would, every time); ~7 s when everything is compiled already. Best
	@# effort, as pip's own: a few of torch's test helpers are Python 3.12 syntax and do not compile on 3.11.
	$(BIN)/python -m compileall -q -j 0 "$$($(BIN)/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')" > /dev/null 2>&1 || true
	@rm -f $(VENV)/.installed-*
	@touch $(STAMP) $(CORE_STAMP)

$(CORE_STAMP): pyproject.toml | $(BIN)/python
	@echo "Installing gymnasium-solver (core: no extras) into $(VENV) (torch 2.13.0 CPU)..."
	@# --no-compile: pip's bytecode for torch's ~2,300 modules is 45 of this install's 72 s (AMD EPYC, 2 cores); the
	@# demo's first run compiles (and keeps) only the modules it imports, ~3 s.
	$(BIN)/python -m pip install --quiet --no-compile -e .
	@rm -f $(VENV)/.installed-core-*
	@touch $(CORE_STAMP)

install: $(STAMP)

demo: $(CORE_STAMP)
	env -u PYTHONDONTWRITEBYTECODE $(BIN)/gsolve train CartPole-v1:ppo
	$(BIN)/gsolve show @last

# The tools and scripts are held to the package's rules too (pyproject's ruff and mypy settings).
lint: $(STAMP)
	$(BIN)/ruff check gymnasium_solver mcp_server tests bench scripts

typecheck: $(STAMP)
	$(BIN)/mypy
	$(BIN)/mypy scripts bench

# Two workers (pytest-xdist, one per core here): 561 s instead of 846 s for the same suite at load ~6.
pytest: $(STAMP)
	$(BIN)/python -m pytest -q -n auto

test: lint typecheck pytest

bench: $(STAMP)
	$(BIN)/python bench/bench_presets_vs_zoo.py --presets CartPole-v1:ppo --seeds 0 1 2 3 4 5 6 7 8 9
	$(BIN)/python bench/bench_run_store.py

# The drift gate (docs/benchmarks.md): re-trains a fixed subset of presets on fixed seeds, a few minutes on
# 2 cores, and fails naming each figure whose env steps to solve moved. Not part of `make test`; run it
# before a change that touches training code. bench-record re-records it deliberately (then commit
# bench/results/gate.json and the docs docs-tables regenerates).
bench-check: $(STAMP)
	$(BIN)/python bench/bench_check.py

bench-record: $(STAMP)
	$(BIN)/python bench/bench_check.py --record
	$(BIN)/python bench/render_tables.py

# Issue 22's any-environment figures (docs/benchmarks.md): our arm of each env's newest side by side with the Zoo,
# re-trained on its seeds; exit 1 naming each seed whose env steps moved. About 20 minutes on 2 cores.
bench-check-any-env: $(STAMP)
	$(BIN)/python bench/any_env_drift.py

# Env steps are exact per machine, not across CPUs: this machine's record beside the others (gate-<cpu>.json),
# on code whose gate passes on a recorded machine.
bench-record-machine: $(STAMP)
	$(BIN)/python bench/bench_check.py --add-machine
	$(BIN)/python bench/render_tables.py

# README.md and docs/ figures, rendered from bench/results/*.json between <!-- generated: NAME --> markers.
docs-tables: $(STAMP)
	$(BIN)/python bench/render_tables.py

# Mutation testing of the core modules (docs/testing.md): mutmut with one worker, in a temporary copy of
# HEAD, over each module's fast test files; rewrites the kill-rate table of docs/testing.md. Not part of
# `make test`: several minutes on 2 cores.
mutation: $(STAMP)
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	$(BIN)/python bench/mutation_report.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
