# skgibbs: set-up, tests, demo, documentation and benchmarks.
#
#   make demo    install (if needed) and run examples/plot_gap_regression.py
#   make test    install (if needed) and run the whole test suite
#   make test-fast  the same without the slow statistical tests (development)
#   make docs    install the documentation tools (if needed) and build doc/_build/html
#   make bench   run every benchmark (python -m benchmarks run all; BENCH="--quick" for a smoke run)
#
# PYTHON selects the interpreter (e.g. make test PYTHON=.venv/bin/python).

PYTHON ?= python
PIP = $(PYTHON) -m pip
# Installed before the package so that pip keeps this CPU build (a local
# wheel) instead of resolving "torch>=2.2" to a multi-gigabyte download.
TORCH ?= torch==2.13.0
DEMO_PNG ?= build/gap_regression.png

.PHONY: help setup setup-docs test test-fast demo docs doc-figures bench clean

help:
	@sed -n '3,9p' Makefile

# Idempotent: .ci/installed.py exits 0 when this checkout is already
# installed with every requirement of the named extras, and pip is skipped.
setup:
	@$(PYTHON) .ci/installed.py test plot || { \
		$(PIP) install "$(TORCH)" && $(PIP) install -e ".[test,plot]"; }

setup-docs:
	@$(PYTHON) .ci/installed.py docs || { \
		$(PIP) install "$(TORCH)" && $(PIP) install -e ".[docs]"; }

# pytest reads testpaths (tests/ and the doctests in skgibbs/) from pyproject.toml.
test: setup
	$(PYTHON) -m pytest -n 2 --dist worksteal -p no:cacheprovider

# The fast lane for development; CI runs `make test` (slow tests included).
test-fast: setup
	$(PYTHON) -m pytest -n 2 --dist worksteal -p no:cacheprovider -m "not slow"

demo: setup
	@mkdir -p $(dir $(DEMO_PNG))
	$(PYTHON) examples/plot_gap_regression.py $(DEMO_PNG)

docs: setup-docs
	$(PYTHON) -m sphinx -W -b html doc doc/_build/html

# The figure included by doc/user_guide/surrogate.rst (committed).
doc-figures: setup
	$(PYTHON) examples/plot_accepted_batches.py doc/_static/accepted_batches.png
	$(PYTHON) examples/plot_model_selection.py doc/_static/model_selection.png
	$(PYTHON) examples/plot_control_variates.py doc/_static/control_variates.png

# BENCH passes options on, e.g. make bench BENCH="--quick" or BENCH="--n-jobs 16".
bench: setup
	$(PYTHON) -m benchmarks run all $(BENCH)

clean:
	rm -rf doc/_build $(DEMO_PNG)
