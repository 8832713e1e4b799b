# scalebench — top-level build and the two commands (`make bench`, `make test`).
# Kernel build rules live in kernels/*.mk (one fragment per language/model family); each fragment adds
# its binaries to KERNEL_BINS and its C-level test targets to KERNEL_TEST_TARGETS.
SHELL := /bin/bash
.DEFAULT_GOAL := all

BIN_DIR := build/bin
PY := .venv/bin/python
KERNEL_BINS :=
KERNEL_TEST_TARGETS :=

# Kernels that need an optional tool: $(eval $(call kernels_need,<binaries>,<tool command>,<what>)) in a
# fragment. When the tool is not found (or not executable) the binaries are not built: `make kernels` says so in one line
# per tool and lists them with the reason in build/bin/unavailable.tsv, and planning leaves their cases
# out (jobs/binaries.py, jobs/plan.py) and the campaign's manifest names them.
UNAVAILABLE_BINS :=
UNAVAILABLE_TOOLS :=
define kernels_need
ifeq ($$(shell p=$$$$(command -v $(firstword $(2))) && [ -f "$$$$p" ] && [ -x "$$$$p" ] && echo "$$$$p"),)
UNAVAILABLE_BINS += $(1)
UNAVAILABLE_TOOLS += $(firstword $(2))
UNAVAILABLE_WHY_$(firstword $(2)) := $(firstword $(2)) not found ($(strip $(3)))
UNAVAILABLE_BINS_$(firstword $(2)) := $(notdir $(1))
endif
endef

-include $(sort $(wildcard kernels/*.mk))

# The build's configuration (kernels/c.mk) is written again, and every object rebuilt, only when it
# changed since the last build.
ifneq ($(file < $(BUILD_CONFIG)),$(BUILD_CONFIG_TEXT))
$(BUILD_CONFIG): FORCE
endif
FORCE:

.PHONY: all setup kernels bench seeds test test-c test-py perf lint format clean \
        slurm-up slurm-down FORCE

all: kernels

# Checks what the target needs by trying it (scripts/setup.sh bench|test|lint; root on Debian installs
# missing Debian packages first) and installs the pinned .venv (cheap when nothing is missing).
# `make setup` alone checks for `make bench`.
SETUP_TARGET := bench
test slurm-up: SETUP_TARGET := test
lint format: SETUP_TARGET := lint
setup:
	@bash scripts/setup.sh $(SETUP_TARGET)

kernels: $(filter-out $(UNAVAILABLE_BINS),$(KERNEL_BINS))
	@mkdir -p $(BIN_DIR)
	@printf '%s\n' $(foreach t,$(UNAVAILABLE_TOOLS),"kernels: not built: $(UNAVAILABLE_BINS_$(t)): $(UNAVAILABLE_WHY_$(t))") \
	    | grep -v '^$$' >&2 || true
	@printf '%s\t%s\n' $(foreach t,$(UNAVAILABLE_TOOLS),$(foreach b,$(UNAVAILABLE_BINS_$(t)),'$(b)' '$(UNAVAILABLE_WHY_$(t))')) \
	    | grep -v '^\s*$$' > $(BIN_DIR)/unavailable.tsv.tmp || true
	@mv $(BIN_DIR)/unavailable.tsv.tmp $(BIN_DIR)/unavailable.tsv

# Main job: build, run the default workstation campaign, analyse it and print where the report is.
bench: setup
	@$(MAKE) --no-print-directory kernels
	$(PY) ./scalebench run config/experiments/workstation.toml
	$(PY) ./scalebench analyze latest

# The seed studies 000 (TC1-TC10), 001 and 003, each measured when the machine is quiet (else exit 3)
# and analyzed beside the published figures into docs/seed-reproductions.md (jobs/seeds.py; options in
# SEEDS_ARGS, e.g. SEEDS_ARGS="--max-wait 1200" or "--studies 001"; "--render-only" re-renders the doc
# from the newest existing campaigns without measuring). A case the OS refuses (SCHED_FIFO without
# CAP_SYS_NICE) is recorded as failed and its row says so. The campaigns behind the doc are exported as
# results/seed-campaigns-<stamp>.tar.gz.
seeds: setup
	@$(MAKE) --no-print-directory kernels
	$(PY) -m jobs.seeds $(SEEDS_ARGS)

test: setup
	@$(MAKE) --no-print-directory kernels
	@$(MAKE) --no-print-directory test-c
	@$(MAKE) --no-print-directory test-py

test-c: $(KERNEL_TEST_TARGETS)

test-py:
	$(PY) -m pytest $(PYTEST_ARGS)

# Benchmarks: print figures (medians, ratios measured side by side in one run), assert nothing.
perf: setup
	@$(MAKE) --no-print-directory kernels
	@set -e; for f in $(sort $(wildcard perf/perf_*.py)); do echo "== $$f"; $(PY) $$f; done

lint: setup
	$(PY) -m ruff check .
	clang-format --dry-run --Werror $(shell git ls-files 'kernels/*.c' 'kernels/*.h')

format: setup
	$(PY) -m ruff format .
	clang-format -i $(shell git ls-files 'kernels/*.c' 'kernels/*.h')

slurm-up: setup
	$(PY) -m jobs.slurm.testcluster up

slurm-down:
	$(PY) -m jobs.slurm.testcluster down

clean:
	rm -rf build
