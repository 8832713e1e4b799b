# Fortran 2008 kernels. Included by the top Makefile after kernels/c.mk (fragments are included in name
# order), whose harness objects and flags it reuses (HARNESS_OBJS, HARNESS_INC, HARNESS_HDRS,
# CFLAGS_REF, LIKWID_CFLAGS/LIBS, OBJ_DIR, sb_buildinfo_obj): the binaries here are the same C harness
# plus one kernel object, exactly like the C kernels.
#
# Fortran kernel = a C descriptor file (<kernel>_f_<model>.c) + a Fortran module whose bind(C) run()
# the descriptor points to + the shared compute module (mandelbrot_rows / mcpi_hits) + harness_f.f90
# (the iso_c_binding view of harness.h).
#
# Linked by the C compiler (main() is the C harness's) with the Fortran runtime library: the OpenMP
# kernels then have one OpenMP runtime, the C compiler's, for both languages (libgomp under gcc; libomp
# under clang, which also implements the GOMP_* entry points gfortran emits). Linking with gfortran
# would pull libgomp beside clang's __kmpc_* calls and fail.

# make's built-in default f77 is replaced by gfortran; an FC from the environment or the command line
# is kept (a gfortran-compatible compiler: the flags below are gfortran's).
ifeq ($(origin FC),default)
FC := gfortran
endif
FORTRAN_RUNTIME := $(or $(filter /%,$(shell $(FC) -print-file-name=libgfortran.so 2>/dev/null)),-lgfortran)
# Reference build: no FMA contraction (bit-identical to C), -fwrapv so integer(int64) products wrap
# modulo 2**64 like uint64_t in the pi generator.
FFLAGS_REF := -std=f2008 -O2 -ffp-contract=off -fwrapv -g -Wall -Wextra
# The record's build.compiler names the harness's C compiler; the Fortran compiler and its version go
# into build.flags.
FC_VERSION := $(shell $(FC) -dumpfullversion 2>/dev/null)
F_OBJ_DIR := $(OBJ_DIR)/fortran
F_MOD_DIR := $(F_OBJ_DIR)/mod

# ---- Fortran modules shared by the Fortran kernels --------------------------------------------------
F_COMMON_OBJS := $(F_OBJ_DIR)/harness_f.o $(F_OBJ_DIR)/mandelbrot_rows.o $(F_OBJ_DIR)/mcpi_hits.o \
    $(F_OBJ_DIR)/sb_simd_f.o
$(F_OBJ_DIR)/harness_f.o: kernels/common/harness_f.f90
$(F_OBJ_DIR)/mandelbrot_rows.o: kernels/mandelbrot/mandelbrot_rows.f90
$(F_OBJ_DIR)/mcpi_hits.o: kernels/mcpi/mcpi_hits.f90 $(F_OBJ_DIR)/harness_f.o $(F_OBJ_DIR)/sb_simd_f.o
$(F_OBJ_DIR)/sb_simd_f.o: kernels/common/sb_simd_f.f90 $(F_OBJ_DIR)/harness_f.o
# The shared compute functions start on a cache line, as the C SIMD row kernels do (kernels/c.mk): their
# speed then no longer depends on where the linker put them in each binary (the same mcpi_count_hits ran
# 1.8 % slower in the serial binary, starting at 0x...e0, than in the OpenMP one, at 0x...f0).
# Code alignment only: the results are the same bits.
F_ALIGN_mandelbrot_rows := -falign-functions=64
F_ALIGN_mcpi_hits := -falign-functions=64
$(F_COMMON_OBJS): kernels/fortran.mk $(BUILD_CONFIG)
	@mkdir -p $(@D) $(F_MOD_DIR)
	$(FC) $(FFLAGS_REF) $(F_ALIGN_$(basename $(@F))) -J$(F_MOD_DIR) -c $(filter %.f90,$^) -o $@

# Per-model Fortran modules: the OpenMP region skeleton (sb_omp_f.f90) needs -fopenmp, so only the
# omp kernels compile against it and link it.
F_MODEL_OBJS_omp := $(F_OBJ_DIR)/sb_omp_f.o $(PROBE_OMP_OBJ)
$(F_OBJ_DIR)/sb_omp_f.o: kernels/common/sb_omp_f.f90 $(F_OBJ_DIR)/harness_f.o kernels/fortran.mk \
    $(BUILD_CONFIG)
	@mkdir -p $(@D) $(F_MOD_DIR)
	$(FC) $(FFLAGS_REF) -fopenmp -J$(F_MOD_DIR) -c $< -o $@

# $(1) kernel, $(2) model, $(3) model flags (compile and link)
define f_kernel
$(F_OBJ_DIR)/$(1)_f_$(2).o: kernels/$(1)/$(1)_f_$(2).f90 $(F_COMMON_OBJS) $(F_MODEL_OBJS_$(2)) \
    kernels/fortran.mk $(BUILD_CONFIG)
	@mkdir -p $$(@D)
	$$(FC) $$(FFLAGS_REF) $(3) -J$$(F_MOD_DIR) -c $$< -o $$@
$(F_OBJ_DIR)/$(1)_f_$(2)_desc.o: kernels/$(1)/$(1)_f_$(2).c $$(HARNESS_HDRS) kernels/fortran.mk
	@mkdir -p $$(@D)
	$$(CC) $$(CFLAGS_REF) $$(HARNESS_INC) -c $$< -o $$@
$(BIN_DIR)/$(1)-f-$(2): $(F_OBJ_DIR)/$(1)_f_$(2).o $(F_OBJ_DIR)/$(1)_f_$(2)_desc.o $(F_COMMON_OBJS) \
    $(F_MODEL_OBJS_$(2)) \
    $(call sb_buildinfo_obj,$(1)-f-$(2),$(strip $(FC) $(FC_VERSION) $(FFLAGS_REF) $(3) / C harness $(CFLAGS_REF) $(LIKWID_CFLAGS))) \
    $$(HARNESS_OBJS)
	@mkdir -p $$(@D)
	$$(CC) $$(CFLAGS_REF) $(3) $$^ -o $$@ $$(FORTRAN_RUNTIME) $$(LIKWID_LIBS) -lm
KERNEL_BINS += $(BIN_DIR)/$(1)-f-$(2)
endef

F_MODEL_FLAGS_serial :=
F_MODEL_FLAGS_omp := -fopenmp
$(foreach k,mandelbrot mcpi,$(foreach m,serial omp,\
    $(eval $(call f_kernel,$(k),$(m),$(F_MODEL_FLAGS_$(m))))))
$(eval $(call kernels_need,$(foreach k,mandelbrot mcpi,$(foreach m,serial omp,$(BIN_DIR)/$(k)-f-$(m))),$(FC),\
    a Fortran 2008 compiler for the Fortran kernels: set FC or load one))
