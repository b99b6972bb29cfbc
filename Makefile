# Two commands matter: `make demo` and `make test`. Both create .venv if it is missing.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)

.PHONY: demo test lint typecheck pytest bench clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	@echo "Installing gymnasium-solver and its dependencies into $(VENV) (torch 2.13.0 CPU)..."
	$(BIN)/python -m pip install --quiet -e ".[all]"
	@rm -f $(VENV)/.installed-*
	@touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/gsolve train CartPole-v1:ppo
	$(BIN)/gsolve show @last

lint: $(STAMP)
	$(BIN)/ruff check gymnasium_solver agents mcp_server tests bench

typecheck: $(STAMP)
	$(BIN)/mypy

pytest: $(STAMP)
	$(BIN)/python -m pytest -q

test: lint typecheck pytest

bench: $(STAMP)
	$(BIN)/python bench/bench_presets_vs_zoo.py --presets CartPole-v1:ppo --seeds 0 1 2 3 4 5 6 7 8 9
	$(BIN)/python bench/bench_run_store.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
