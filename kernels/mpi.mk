# MPI (+OpenMP) kernels. Included by the top Makefile after kernels/c.mk (fragments are included in name
# order), whose harness objects and flags (HARNESS_OBJS, HARNESS_INC, HARNESS_HDRS, CFLAGS_REF,
# LIKWID_CFLAGS/LIBS, OBJ_DIR, sb_buildinfo_obj) it reuses.

# The MPI C wrapper: mpicc unless MPICC is set (environment or make's command line).
MPICC ?= mpicc

# Every rank runs the whole harness; sb_mpi.o adds MPI init/finalize, the barrier-started compute region
# and the gathering of per-rank times and placement on rank 0.
MPI_MODEL_FLAGS := -fopenmp
MPI_OBJ_DIR := $(OBJ_DIR)/mpi
$(MPI_OBJ_DIR)/sb_mpi.o: kernels/common/sb_mpi.c kernels/common/sb_mpi.h $(HARNESS_HDRS) \
    kernels/mpi.mk
	@mkdir -p $(@D)
	$(MPICC) $(CFLAGS_REF) $(HARNESS_INC) -c $< -o $@

# $(1) kernel
define mpi_kernel
$(MPI_OBJ_DIR)/$(1)_mpi.o: kernels/$(1)/$(1)_mpi.c kernels/common/sb_mpi.h $$(HARNESS_HDRS) \
    kernels/mpi.mk
	@mkdir -p $$(@D)
	$$(MPICC) $$(CFLAGS_REF) $$(MPI_MODEL_FLAGS) $$(HARNESS_INC) -c $$< -o $$@
$(BIN_DIR)/$(1)-c-mpi: $(MPI_OBJ_DIR)/$(1)_mpi.o $(MPI_OBJ_DIR)/sb_mpi.o \
    $(call sb_buildinfo_obj,$(1)-c-mpi,$(strip $(MPICC) $(CFLAGS_REF) $(MPI_MODEL_FLAGS) $(LIKWID_CFLAGS))) \
    $$(HARNESS_OBJS)
	@mkdir -p $$(@D)
	$$(MPICC) $$(CFLAGS_REF) $$(MPI_MODEL_FLAGS) $$^ -o $$@ $$(LIKWID_LIBS) -lm
KERNEL_BINS += $(BIN_DIR)/$(1)-c-mpi
endef

$(foreach k,mandelbrot mcpi,$(eval $(call mpi_kernel,$(k))))
$(eval $(call kernels_need,$(foreach k,mandelbrot mcpi,$(BIN_DIR)/$(k)-c-mpi),$(MPICC),\
    an MPI C compiler wrapper for the MPI kernels: set MPICC or load an MPI))
