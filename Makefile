# The README's commands. Each does its own set-up on a fresh machine.
#   make reproduce   the CPU-scale reproduction: the smoke study into build/reproduce/, every
#                    notebook into build/executed/ (each figure inline, files in
#                    build/reproduce/figures/; the tutorials read the committed results/), then a
#                    comparison of the smoke study with the committed one (exit 1 beyond tolerance)
#   make test        ruff + the unit tests + nbval over every tutorial notebook (figures to build/),
#                    on every core; leaves out the tests marked slow or distributed
#   make test-all    make test with those tests too, with the tracking and cluster extras
#                    (what CI runs)
#   make pretrain    the study's pre-trained bases into results/bases/ (rewrites them on purpose)
#   make study       the full CPU-scale study (8 seeds) from the committed bases, then every
#                    notebook: rewrites the committed results/full and figures/ on purpose
#   make variation   the smoke study under 4 CPU kernel/thread configurations: the measured
#                    variation the reproduction check's tolerances come from
#   make lock        recompile requirements.lock from pyproject.toml (uv), every install's pins
#   make refresh     the smoke study and every notebook over the committed results/smoke, figures/
#   make lab         JupyterLab (root allowed) with the tutorials' .py files opening as notebooks
#   make book        the reading edition: a static site of the notebooks as `make reproduce`
#                    executed them (build/executed/), into build/book/ (run `make reproduce` first)
#   make book-check  headless Chromium over every page of build/book/, and `make lab` opening a
#                    tutorial as a notebook; screenshots in build/book-screenshots/
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.paperlib-installed
LOCK := requirements.lock
LOCK_VENV := build/lock-venv
# every install: the lock (all packages, transitive ones included) and the torch pair
PIP_PINS := --constraint constraints.txt --constraint $(LOCK)
TUTORIALS := $(wildcard notebooks/[0-9][0-9]_*.py)
NB_BUILD := build/notebooks
REPRO := build/reproduce
# the data folders a notebook parameter file may point into (paperlib.notebooks.confine_paths):
# the project's evaluation data beside the repository, where it is present
DATA_ROOTS ?= ../shared/data
LAB_STAMP := $(VENV)/.paperlib-lab-installed
DOCS_STAMP := $(VENV)/.paperlib-docs-installed
EXTRAS_STAMP := $(VENV)/.paperlib-extras-installed
# the venv's JupyterLab settings: jupytext's viewer opens Python text notebooks (jupytext-config)
LAB_SETTINGS := $(VENV)/etc/jupyter/labconfig/default_setting_overrides.json
LAB_ARGS ?=
# pytest on every core: one worker per CPU, each taking the next test when it is free
XDIST := -n auto --dist worksteal

.PHONY: setup extras-setup test test-all lint unit unit-all nbval reproduce refresh study pretrain variation lock lab lab-setup book book-check bench clean

$(STAMP): pyproject.toml constraints.txt $(LOCK)
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet $(PIP_PINS) -e ".[dev]"
	touch $(STAMP)

setup: $(STAMP)

lint: setup
	$(VENV)/bin/ruff check paperlib tests benchmarks notebooks scripts docs
	$(VENV)/bin/ruff format --check paperlib tests benchmarks notebooks scripts docs

unit: setup  # leaves out the tests marked slow or distributed
	HF_HUB_OFFLINE=1 $(PY) -m pytest $(XDIST) -m "not slow and not distributed" tests

# the whole suite, with the tracking and cluster extras: the live-log tests read real event
# files, and the smoke study runs on a two-node Ray cluster
unit-all: extras-setup
	HF_HUB_OFFLINE=1 $(PY) -m pytest $(XDIST) tests

# Agg: nbval compares no figure, and drawing none inline keeps it quick (the runner draws inline)
nbval: setup
	rm -rf $(NB_BUILD)
	$(PY) -m paperlib.notebooks convert $(TUTORIALS)
	PAPERLIB_FIGURES=build/nbval-figures HF_HUB_OFFLINE=1 MPLBACKEND=Agg \
	  $(PY) -m pytest --nbval-lax -p no:cacheprovider $(NB_BUILD)

test: lint unit nbval

test-all: lint unit-all nbval

reproduce: setup
	PAPERLIB_RESULTS=$(REPRO)/results PAPERLIB_RUNS=$(REPRO)/runs HF_HUB_OFFLINE=1 \
	  $(PY) -m paperlib.study --scale smoke
	PAPERLIB_FIGURES=$(REPRO)/figures PAPERLIB_DATA_ROOTS=$(DATA_ROOTS) HF_HUB_OFFLINE=1 \
	  $(PY) -m paperlib.notebooks reproduce --preset smoke-cpu
	$(PY) -m paperlib.study.compare --scale smoke --reproduced $(REPRO)/results

refresh: setup
	HF_HUB_OFFLINE=1 $(PY) -m paperlib.study --scale smoke
	PAPERLIB_DATA_ROOTS=$(DATA_ROOTS) HF_HUB_OFFLINE=1 $(PY) -m paperlib.notebooks reproduce --preset smoke-cpu

pretrain: setup
	HF_HUB_OFFLINE=1 $(PY) -m paperlib.study.run.pretrain --scale full

study: setup
	HF_HUB_OFFLINE=1 $(PY) -m paperlib.study --scale full
	PAPERLIB_DATA_ROOTS=$(DATA_ROOTS) HF_HUB_OFFLINE=1 $(PY) -m paperlib.notebooks reproduce --preset smoke-cpu

variation: setup
	HF_HUB_OFFLINE=1 $(PY) -m paperlib.study.report.variation --scale smoke

lock:
	$(PYTHON) -m venv $(LOCK_VENV)
	$(LOCK_VENV)/bin/pip install --quiet uv==0.13.9
	$(LOCK_VENV)/bin/uv pip compile pyproject.toml --extra dev --extra lab --extra docs --extra tracking --extra cluster \
	  --constraint constraints.txt --python-version 3.11 --python-platform x86_64-manylinux_2_28 \
	  --custom-compile-command "make lock" --output-file $(LOCK)

bench: setup
	for b in benchmarks/bench_*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

$(EXTRAS_STAMP): $(STAMP) pyproject.toml constraints.txt $(LOCK)
	$(PY) -m pip install --quiet $(PIP_PINS) -e ".[dev,tracking,cluster]"
	touch $(EXTRAS_STAMP)

extras-setup: $(EXTRAS_STAMP)

$(LAB_STAMP): $(STAMP) pyproject.toml constraints.txt $(LOCK)
	$(PY) -m pip install --quiet $(PIP_PINS) -e ".[dev,lab]"
	touch $(LAB_STAMP)

lab-setup: $(LAB_STAMP)
	$(VENV)/bin/jupytext-config --settings-file $(LAB_SETTINGS) set-default-viewer python

# --allow-root: JupyterLab refuses root otherwise (containers); the kernel is this venv's python3
lab: lab-setup
	$(VENV)/bin/jupyter lab --allow-root --ServerApp.root_dir="$(CURDIR)" \
	  --LabApp.default_url=/lab/tree/notebooks $(LAB_ARGS)

$(DOCS_STAMP): $(STAMP) pyproject.toml constraints.txt $(LOCK)
	$(PY) -m pip install --quiet $(PIP_PINS) -e ".[dev,lab,docs]"
	touch $(DOCS_STAMP) $(LAB_STAMP)

book: $(DOCS_STAMP)
	$(PY) scripts/build_book.py

book-check: $(DOCS_STAMP) lab-setup
	$(PY) scripts/check_book.py
	$(PY) scripts/check_lab.py

clean:
	rm -rf build
