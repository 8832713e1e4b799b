# The SIMD bounds tool (kernels/bounds/simd_bounds.c): measures on a node the latencies and
# instruction-mix throughputs the per-cycle bounds of the Mandelbrot and π inner loops rest on
# (docs/simd-bounds.md). Built with the kernels' flags and linked with the harness objects it uses
# (the path choice, the uarch and the clock's add chain); not a kernel: the runner runs it once per
# host and campaign (jobs/simd_bounds.py).
SIMD_BOUNDS_OBJS := $(OBJ_DIR)/bounds/simd_bounds.o $(OBJ_DIR)/bounds/floor_estimate.o $(OBJ_DIR)/common/sb_cpu.o \
    $(OBJ_DIR)/common/sb_mandel_simd.o $(OBJ_DIR)/common/sb_pi_simd.o $(OBJ_DIR)/common/sb_clock.o \
    $(OBJ_DIR)/common/sb_time.o
$(OBJ_DIR)/bounds/%.o: kernels/bounds/%.c kernels/bounds/floor_estimate.h $(HARNESS_HDRS) kernels/simd_bounds.mk
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_REF) $(HARNESS_INC) -c $< -o $@
$(BIN_DIR)/simd-bounds: $(SIMD_BOUNDS_OBJS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_REF) $^ -o $@ -lm
KERNEL_BINS += $(BIN_DIR)/simd-bounds
