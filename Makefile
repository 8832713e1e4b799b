# scalebench — top-level build and the two commands (`make bench`, `make test`).
# Kernel build rules live in kernels/*.mk (one fragment per language/model family); each fragment adds
# its binaries to KERNEL_BINS and its C-level test targets to KERNEL_TEST_TARGETS.
SHELL := /bin/bash
.DEFAULT_GOAL := all

BIN_DIR := build/bin
PY := .venv/bin/python
KERNEL_BINS :=
KERNEL_TEST_TARGETS :=

-include $(sort $(wildcard kernels/*.mk))
include analysis/native/native.mk

.PHONY: all setup kernels native bench seeds test test-c test-py perf lint format clean slurm-up slurm-down

all: kernels native

# Installs missing Debian packages and the pinned .venv (cheap when nothing is missing).
setup:
	@bash scripts/setup.sh

kernels: $(KERNEL_BINS)

# Main job: build, run the default workstation campaign, analyse it and print where the report is.
bench: setup
	@$(MAKE) --no-print-directory kernels native
	$(PY) ./scalebench run config/experiments/workstation.toml
	$(PY) ./scalebench analyze latest

# The 2006 thread-scaling study's ten test cases (docs/seed-reproductions.md): run each experiment here,
# then analyze it beside the published figures into the doc's generated tables. A case the OS refuses
# (e.g. SCHED_FIFO without CAP_SYS_NICE) is recorded as failed and the next experiment still runs.
SEED_EXPERIMENTS := $(sort $(wildcard config/experiments/seed-000-tc*.toml))
seeds: setup
	@$(MAKE) --no-print-directory kernels native
	@for exp in $(SEED_EXPERIMENTS); do \
	  $(PY) ./scalebench run $$exp --no-progress || echo "seeds: $$exp: some repetitions failed (see status)"; \
	  $(PY) ./scalebench analyze latest --seed-doc docs/seed-reproductions.md || exit 1; \
	done

test: setup
	@$(MAKE) --no-print-directory kernels native
	@$(MAKE) --no-print-directory test-c
	@$(MAKE) --no-print-directory test-py

test-c: $(KERNEL_TEST_TARGETS)

test-py:
	$(PY) -m pytest $(PYTEST_ARGS)

# Benchmarks: print figures (medians, ratios measured side by side in one run), assert nothing.
perf: setup
	@$(MAKE) --no-print-directory kernels native
	@set -e; for f in $(sort $(wildcard perf/perf_*.py)); do echo "== $$f"; $(PY) $$f; done

lint: setup
	$(PY) -m ruff check .
	clang-format --dry-run --Werror $(shell git ls-files 'kernels/*.c' 'kernels/*.h' 'analysis/native/*.cpp' 'analysis/native/*.h')

format: setup
	$(PY) -m ruff format .
	clang-format -i $(shell git ls-files 'kernels/*.c' 'kernels/*.h' 'analysis/native/*.cpp' 'analysis/native/*.h')

slurm-up: setup
	$(PY) -m jobs.slurm.testcluster up

slurm-down:
	$(PY) -m jobs.slurm.testcluster down

clean:
	rm -rf build
