# Standard tools as kernels (kernels/tools/standard_tools.py): perf bench sched pipe, stress-ng --switch
# and cyclictest behind binaries that speak the kernel protocol (--help, --reps, --warmup, one record per
# run), so an experiment's [[sweep]] runs them beside our microkernels. Each binary is a two-line script
# that runs kernels/tools/standard_tools.py with this repository's Python (the repository on its
# PYTHONPATH: it shares the runner's child and pinning helpers); the working directory is the campaign's.
TOOL_KERNELS := perfbench-tool-pipe stressng-tool-switch cyclictest-tool-nanosleep
# The clone's .venv/bin/python, or the PY given (`scalebench build` passes the python running it).
TOOL_PYTHON := $(abspath $(PY))

TOOL_SCRIPT := kernels/tools/standard_tools.py
$(TOOL_KERNELS:%=$(BIN_DIR)/%): $(BIN_DIR)/%: $(TOOL_SCRIPT) kernels/tools.mk
	@mkdir -p $(@D)
	printf '#!/bin/sh\nPYTHONPATH=%s$${PYTHONPATH:+:$$PYTHONPATH} exec %s %s %s "$$@"\n' \
	    "'$(CURDIR)'" "'$(TOOL_PYTHON)'" "'$(CURDIR)/$(TOOL_SCRIPT)'" "$*" > $@.tmp
	chmod +x $@.tmp
	mv $@.tmp $@
KERNEL_BINS += $(TOOL_KERNELS:%=$(BIN_DIR)/%)
