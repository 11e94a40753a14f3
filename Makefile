# Two commands for a fresh clone with only Python and make:
#   make test   create .venv if needed, install, run the whole suite
#   make demo   create .venv if needed, install the core and viz only (unless make test
#               installed everything already), plan a game of Ms. Pac-Man (GIF in demo/)
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
INSTALLED := $(VENV)/.installed
DEMO_INSTALLED := $(VENV)/.installed-demo
PYTEST_WORKERS ?= 2
# The demo: swarm planner, 2 worker processes, 300 agent steps (1,500 frames of play).
DEMO_STEPS ?= 300
DEMO_SEED ?= 0

.PHONY: install test test-slow lint demo bench bench-baseline clean docs docs-check

# Every extra. The nes extra pins pyglet below what retro needs (pyglet only draws nes-py's
# window), so its packages go in without their dependency pins, next to retro's pyglet.
$(INSTALLED): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev,docs,ray,mujoco,dm-control,box2d,retro]"
	$(BIN)/python -m pip install --quiet --no-deps \
		fragile-gym==1.21.1 fragile-nes-py==10.0.1 fragile-gym-super-mario-bros==7.4.1 setuptools
	touch $(INSTALLED)

install: $(INSTALLED)

# What the demo needs: the core and the viz extra (Pillow, tqdm), with the pip the venv has.
$(DEMO_INSTALLED): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet -e ".[viz]"
	touch $(DEMO_INSTALLED)

test: $(INSTALLED)
	PLANGYM_EVERY_EXTRA=1 $(BIN)/python -m pytest -n $(PYTEST_WORKERS) -q

# The suite plus the long sweeps (every dm_control task, twice): about 2 more minutes.
test-slow: $(INSTALLED)
	PLANGYM_EVERY_EXTRA=1 $(BIN)/python -m pytest -n $(PYTEST_WORKERS) -q --run-slow

lint: $(INSTALLED)
	$(BIN)/ruff check plangym tests benchmarks examples scripts
	$(BIN)/ruff format --check plangym tests benchmarks examples scripts
	$(BIN)/mypy plangym

# The documentation site in site/ (open site/index.html): mkdocs-material, the API reference
# from the docstrings, the notebooks executed at build time (a failing cell fails the
# build). --strict turns every warning (broken link, docstring error) into a failure. SDL's
# dummy drivers keep pygame quiet in the notebooks' kernels (no display, no sound card).
docs: $(INSTALLED)
	SDL_VIDEODRIVER=dummy SDL_AUDIODRIVER=dummy NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

# The built site in headless Chromium (Debian's chromium package): every page opened,
# every internal link followed, screenshots in site-screenshots/. Needs `make docs` first.
docs-check: $(INSTALLED)
	$(BIN)/python scripts/check_site.py site --screenshots site-screenshots

# A .venv that make test filled has everything the demo needs already.
demo: $(if $(wildcard $(INSTALLED)),$(INSTALLED),$(DEMO_INSTALLED))
	$(BIN)/plangym plan ALE/MsPacman-v5 --planner swarm --workers 2 \
		--steps $(DEMO_STEPS) --seed $(DEMO_SEED) --out demo

# The last two lines: how cost grows (batch, workers, vector API) into
# benchmarks/results/scaling.json, then its plots (docs/img/scaling/) and docs/performance.md.
bench: $(INSTALLED)
	$(BIN)/python benchmarks/single_process.py
	$(BIN)/python benchmarks/mujoco_envs.py
	$(BIN)/python benchmarks/dm_control.py
	$(BIN)/python benchmarks/box2d.py
	$(BIN)/python benchmarks/parallel.py
	$(BIN)/python benchmarks/scaling.py
	$(BIN)/python benchmarks/plot_scaling.py

# plangym 0.1.32 in its own virtualenv, for the side-by-side rows of benchmarks/parallel.py.
bench-baseline:
	test -x .venv-plangym01/bin/python || $(PYTHON) -m venv .venv-plangym01
	.venv-plangym01/bin/python -m pip install --quiet "plangym==0.1.32" ale-py

clean:
	rm -rf $(VENV) build *.egg-info .hypothesis site site-screenshots
