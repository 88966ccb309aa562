# The README's commands. Each does its own set-up on a fresh machine.
#   make reproduce   the CPU-scale reproduction (smoke study, every notebook) into build/reproduce/,
#                    then a comparison with the committed results (exit 1 beyond tolerance)
#   make test        ruff + unit tests + nbval over every tutorial notebook (figures to build/)
#   make study       the full CPU-scale study (5 seeds), then every notebook: rewrites the
#                    committed results/full and figures/ on purpose
#   make refresh     the smoke study and every notebook over the committed results/smoke, figures/
#   make lab         JupyterLab on the paired notebooks
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.paperlib-installed
TUTORIALS := $(wildcard notebooks/[0-9][0-9]_*.py)
NB_BUILD := build/notebooks
REPRO := build/reproduce

.PHONY: setup test lint unit unit-all nbval reproduce refresh study lab bench clean

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --constraint constraints.txt -e ".[dev]"
	touch $(STAMP)

setup: $(STAMP)

lint: setup
	$(VENV)/bin/ruff check paperlib tests benchmarks notebooks

unit: setup  # the fast loop: leaves out the tests marked slow or distributed (pytest counts them)
	HF_HUB_OFFLINE=1 $(PY) -m pytest -m "not slow and not distributed" tests

unit-all: setup
	HF_HUB_OFFLINE=1 $(PY) -m pytest tests

nbval: setup
	rm -rf $(NB_BUILD)
	$(PY) -m paperlib.notebooks convert $(TUTORIALS)
	PAPERLIB_FIGURES=build/nbval-figures HF_HUB_OFFLINE=1 MPLBACKEND=Agg \
	  $(PY) -m pytest --nbval-lax -p no:cacheprovider $(NB_BUILD)

test: lint unit-all nbval

reproduce: setup
	PAPERLIB_RESULTS=$(REPRO)/results PAPERLIB_RUNS=$(REPRO)/runs HF_HUB_OFFLINE=1 \
	  $(PY) -m paperlib.study --scale smoke
	PAPERLIB_FIGURES=$(REPRO)/figures HF_HUB_OFFLINE=1 MPLBACKEND=Agg \
	  $(PY) -m paperlib.notebooks reproduce --preset smoke-cpu
	$(PY) -m paperlib.study.compare --scale smoke --reproduced $(REPRO)/results

refresh: setup
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
