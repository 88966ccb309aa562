# The README's commands. Each does its own set-up on a fresh machine.
#   make reproduce   the CPU-scale reproduction (smoke scale): every notebook, figures/
#   make test        ruff + unit tests + nbval over every tutorial notebook
#   make study       the full CPU-scale study (3 seeds), then every notebook
#   make lab         JupyterLab on the paired notebooks
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.paperlib-installed
TUTORIALS := $(wildcard notebooks/[0-9][0-9]_*.py)
NB_BUILD := build/notebooks

.PHONY: setup test lint unit nbval reproduce study lab bench clean

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --constraint constraints.txt -e ".[dev]"
	touch $(STAMP)

setup: $(STAMP)

lint: setup
	$(VENV)/bin/ruff check paperlib tests benchmarks notebooks

unit: setup
	HF_HUB_OFFLINE=1 $(PY) -m pytest tests

nbval: setup
	rm -rf $(NB_BUILD)
	$(PY) -m paperlib.notebooks convert $(TUTORIALS)
	HF_HUB_OFFLINE=1 MPLBACKEND=Agg $(PY) -m pytest --nbval-lax -p no:cacheprovider $(NB_BUILD)

test: lint unit nbval

reproduce: setup
	HF_HUB_OFFLINE=1 $(PY) -m paperlib.study --scale smoke
	HF_HUB_OFFLINE=1 MPLBACKEND=Agg $(PY) -m paperlib.notebooks reproduce --preset smoke-cpu

study: setup
	HF_HUB_OFFLINE=1 $(PY) -m paperlib.study --scale full
	HF_HUB_OFFLINE=1 MPLBACKEND=Agg $(PY) -m paperlib.notebooks reproduce --preset smoke-cpu

bench: setup
	for b in benchmarks/bench_*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

lab: setup
	$(PY) -m pip install --quiet --constraint constraints.txt -e ".[dev,lab]"
	$(VENV)/bin/jupyter lab notebooks/

clean:
	rm -rf build
