# Two commands for a fresh clone with only Python and make:
#   make test   create .venv if needed, install, run the whole suite
#   make demo   create .venv if needed, install, run the demo
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
INSTALLED := $(VENV)/.installed
PYTEST_WORKERS ?= 2

.PHONY: install test lint demo bench clean

$(INSTALLED): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $(INSTALLED)

install: $(INSTALLED)

test: $(INSTALLED)
	$(BIN)/python -m pytest -n $(PYTEST_WORKERS) -q

lint: $(INSTALLED)
	$(BIN)/ruff check plangym tests benchmarks
	$(BIN)/ruff format --check plangym tests benchmarks

demo: $(INSTALLED)
	$(BIN)/python -m plangym.demo

bench: $(INSTALLED)
	$(BIN)/python benchmarks/single_process.py

clean:
	rm -rf $(VENV) build *.egg-info .hypothesis
