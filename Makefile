# fwbench: `make reproduce` (the study) and `make test` (the tests) set everything up themselves.
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON_BOOT ?= $(shell command -v python3.11 || command -v python3)
VENV        := .venv
BIN         := $(VENV)/bin
STAMP       := $(VENV)/.installed
PROFILE     ?= quick
SCHEDULER   ?=
NB_PARAMS   := -p profile $(PROFILE) $(if $(SCHEDULER),-p scheduler $(SCHEDULER))
# In file-name order: the study notebooks, then 05_claims_ledger (reads the store only, so it sees every study's rows).
NOTEBOOKS   := $(sort $(wildcard notebooks/*.ipynb))
EXECUTED    := build/executed
REPORTS     := reports
TIMEOUT     ?= 14400
# make test: pytest-xdist workers (tests/conftest.py groups the tests that share an expensive fixture); 0 runs serially
TEST_WORKERS ?= 2
# make lab: where JupyterLab listens (loopback by default; LAB_IP=0.0.0.0 to reach it from another machine)
LAB_PORT    ?= 8888
LAB_IP      ?= 127.0.0.1

# The staged datasets beside this checkout (this workplace); elsewhere the user cache dir + download is used.
ifneq ($(wildcard ../shared/data),)
export FWBENCH_DATA_DIR ?= $(abspath ../shared/data)
endif
export MPLBACKEND := agg
# uv writes every installed module's bytecode (.pyc), as pip does by default: where PYTHONDONTWRITEBYTECODE is set
# (containers, CI) Python would otherwise compile torch, gluonts and Lightning afresh in every trial process, 10-25 s
# of start-up each on a slow CPU; no timed region imports a module (docs/benchmarks.md)
export UV_COMPILE_BYTECODE := 1

# the committed paper run: the post's first screen is shot from it (docs/first-screen.png)
PAPER_STORE := results/paper/paper-run.sqlite

.PHONY: kernels envs first-screen time-envs time-reproduce readme help setup browser reproduce notebooks html lint test bench lab status export publish lock clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-10s %s\n", $$1, $$2}'
	@echo "  variables: PROFILE=smoke|quick|paper|full (default quick; readme: paper when stored), SCHEDULER=tcp://HOST:8786 (Dask), TEST_WORKERS, LAB_PORT, LAB_IP, FWBENCH_DATA_DIR, FWBENCH_RESULTS"

$(STAMP): requirements.lock constraints.txt pyproject.toml
	# with uv (pip where uv cannot be had); numpy is pinned by the constraints file so no package can lift it to
	# 2.x (MXNet 1.9.1 needs < 1.24)
	$(PYTHON_BOOT) tools/install_main.py --venv $(VENV) --lock requirements.lock --constraints constraints.txt
	$(BIN)/python -c "import numpy, mxnet, torch; assert numpy.__version__ == '1.23.5', numpy.__version__"
	@# the lock main was built from (fwbench envs calls main stale when requirements.lock changes after this)
	@sha256sum requirements.lock | cut -c1-12 > $(VENV)/fwbench-lock.sha256
	@touch $@

setup: $(STAMP) ## create .venv and install the pinned environment

browser: ## install Debian's chromium for the site test (apt-get, as root, only when it is missing)
	@command -v chromium >/dev/null || { [ "$$(id -u)" = 0 ] || { echo "chromium is missing: run 'sudo apt-get install chromium' (the site test needs it)"; exit 1; }; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; }
	@chromium --version 2>/dev/null | head -1

envs: $(STAMP) ## build the declared environments (envs/NAME/) that are missing or stale, then list them
	$(BIN)/fwbench envs --build

reproduce: $(STAMP) ## run every notebook headlessly (PROFILE=...) and render the HTML reports
	$(BIN)/fwbench envs --build --profile $(PROFILE)
	@mkdir -p $(EXECUTED) $(REPORTS) figures
	@for nb in $(NOTEBOOKS); do \
	  name=$$(basename $$nb); \
	  echo "== $$name (profile $(PROFILE))"; \
	  FWBENCH_HEADLESS=1 env -u MPLBACKEND $(BIN)/papermill -k python3 --cwd notebooks --execution-timeout $(TIMEOUT) \
	    --log-output --no-progress-bar $$nb $(EXECUTED)/$$name $(NB_PARAMS) || exit 1; \
	done
	$(BIN)/python -m fwbench.report --executed $(EXECUTED) --out $(REPORTS)
	@echo "reports in $(REPORTS)/, figures in figures/"

first-screen: $(STAMP) browser ## the paper post's first screen (1280 x 800, headless chromium) -> docs/first-screen.png
	rm -rf build/paper-post
	FWBENCH_RESULTS=$(PAPER_STORE) $(BIN)/python -m fwbench.report --executed build/none --out build/paper-post --profile paper --figures build/none
	$(BIN)/python tools/first_screen.py build/paper-post/index.html --png docs/first-screen.png

time-envs: $(STAMP) ## time building the gluonts-0.13 environment from its lock, uv and pip, cold and warm (run it alone) -> results/benchmarks/
	$(BIN)/python tools/env_build_timing.py gluonts-0.13

time-reproduce: $(STAMP) ## time `make reproduce PROFILE=...` cold then warm in a fresh clone of HEAD (run it alone) -> results/benchmarks/
	$(BIN)/python tools/reproduce_timing.py --profile $(PROFILE) --repo $(CURDIR)

lint: $(STAMP) ## ruff: lint and format check of lib/, tests/ and tools/ (configured in pyproject.toml)
	$(BIN)/ruff check lib tests tools
	$(BIN)/ruff format --check lib tests tools

test: $(STAMP) browser lint ## lint, then the test suite (notebooks included, smoke profile) on TEST_WORKERS workers
	$(BIN)/fwbench envs --build --profile smoke
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) $(PYTEST_ARGS)

kernels: $(STAMP) ## which math kernels each framework dispatches for DeepAR on this CPU -> results/paper/kernels-CPU.csv
	$(BIN)/python tools/kernel_dispatch.py -o results/paper/kernels-$$($(BIN)/python -c "from fwbench.provenance import this_cpu; print(this_cpu().replace('/', '-'))").csv

bench: $(STAMP) ## measure the harness overhead and data preparation -> the results store, study bench (BENCH=harness|harness-paired|deepar|data: one)
	$(BIN)/python tools/harness_bench.py $(BENCH)

lab: $(STAMP) ## JupyterLab on the repo, headless: prints the URL with its token (LAB_PORT=8888 LAB_IP=127.0.0.1)
	$(BIN)/jupyter lab --notebook-dir=. --no-browser --ip=$(LAB_IP) --port=$(LAB_PORT) \
	  $$([ "$$(id -u)" = 0 ] && echo --allow-root)

status: $(STAMP) ## what is done / missing / failed in the results store
	$(BIN)/fwbench status --profile $(PROFILE)

readme: $(STAMP) ## regenerate the generated blocks of README.md and docs/*.md from the results store and results/benchmarks/ (PROFILE=...)
	$(BIN)/python -m fwbench.readme $(if $(filter command line environment,$(origin PROFILE)),--profile $(PROFILE))
	$(BIN)/python tools/reproduce_timing.py --pages
	$(BIN)/python tools/env_build_timing.py --pages
	$(BIN)/python tools/harness_bench.py --pages

export: $(STAMP) ## tables measurements/trials/environments as CSV and Parquet -> results/
	$(BIN)/fwbench export --format csv --format parquet -o results

publish: $(STAMP) ## the profile's results as small text files to commit: results/$(PROFILE)/ (trials table, ledger, pins)
	@# measurements.csv and environments.csv (2 MB each for the paper run) are derived from the committed store, so
	@# only the site carries them (reports/data/); trials.csv, the one a reader opens on the forge, is kept
	$(BIN)/fwbench export --profile $(PROFILE) --format csv -o build/tables-$(PROFILE)
	cp build/tables-$(PROFILE)/trials.csv results/$(PROFILE)/trials.csv
	$(BIN)/fwbench ledger --profile $(PROFILE) -o results/$(PROFILE)/ledger.csv
	$(BIN)/fwbench ledger --profile $(PROFILE) --by-cpu -o results/$(PROFILE)/ledger_by_cpu.csv
	$(BIN)/python -m fwbench.analysis.deepar_prediction --profile $(PROFILE) -o results/$(PROFILE)/deepar_post_comparison.csv
	$(BIN)/python -m fwbench.analysis.deepar_conditions --profile $(PROFILE) -o results/$(PROFILE)/deepar_gap_factors.csv
	cp requirements.lock results/$(PROFILE)/requirements.lock

lock: ## regenerate requirements.lock from requirements.in, and every envs/NAME/requirements.lock (needs the registry)
	rm -rf build/lockenv && $(PYTHON_BOOT) -m venv build/lockenv
	build/lockenv/bin/pip install --quiet -r requirements.in -c constraints.txt
	{ echo "# Generated by 'make lock' from requirements.in with -c constraints.txt. Do not edit by hand."; \
	  build/lockenv/bin/pip freeze | sed 's/+cpu$$//'; } > requirements.lock
	PATH="$(abspath build/lockenv/bin):$$PATH" PYTHONPATH=lib build/lockenv/bin/python -m fwbench.cli envs --lock

clean: ## remove build outputs (keeps the results store and .venv)
	rm -rf build $(REPORTS)
