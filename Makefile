# Two commands for a fresh clone with only Python and make:
#   make test   create .venv if needed, install, run the whole suite
#   make demo   create .venv if needed, install, run the demo
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
INSTALLED := $(VENV)/.installed
PYTEST_WORKERS ?= 2

.PHONY: install test lint demo bench bench-baseline clean

$(INSTALLED): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev,ray]"
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
	$(BIN)/python benchmarks/parallel.py

# plangym 0.1.32 in its own virtualenv, for the side-by-side rows of benchmarks/parallel.py.
bench-baseline:
	test -x .venv-plangym01/bin/python || $(PYTHON) -m venv .venv-plangym01
	.venv-plangym01/bin/python -m pip install --quiet "plangym==0.1.32" ale-py

clean:
	rm -rf $(VENV) build *.egg-info .hypothesis
