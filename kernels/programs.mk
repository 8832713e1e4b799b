# A user's own program as a case (docs/own-programs.md): build/bin/program-run speaks the kernels'
# protocol (--help, --check-args, --reps, --warmup, one record per run) and runs the program a case
# names (kernels/programs/run_program.py, a two-line script like the standard tools' binaries, with
# this repository's Python); build/bin/machine-probe times the kernels' machine-state probe around
# each run of it (kernels/programs/machine_probe.c, linked with the harness objects).
PROGRAM_RUN := $(BIN_DIR)/program-run
PROGRAM_SCRIPT := kernels/programs/run_program.py
$(PROGRAM_RUN): $(PROGRAM_SCRIPT) kernels/programs.mk
	@mkdir -p $(@D)
	printf '#!/bin/sh\nPYTHONPATH=%s$${PYTHONPATH:+:$$PYTHONPATH} exec %s %s "$$@"\n' \
	    "'$(CURDIR)'" "'$(abspath $(PY))'" "'$(CURDIR)/$(PROGRAM_SCRIPT)'" > $@.tmp
	chmod +x $@.tmp
	mv $@.tmp $@

MACHINE_PROBE := $(BIN_DIR)/machine-probe
$(OBJ_DIR)/programs/machine_probe.o: kernels/programs/machine_probe.c $(HARNESS_HDRS) kernels/programs.mk
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_REF) $(HARNESS_INC) -c $< -o $@
$(MACHINE_PROBE): $(OBJ_DIR)/programs/machine_probe.o $(filter-out $(OBJ_DIR)/common/main.o,$(HARNESS_OBJS))
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_REF) $^ -o $@ $(LIKWID_LIBS) -lm
KERNEL_BINS += $(PROGRAM_RUN) $(MACHINE_PROBE)
