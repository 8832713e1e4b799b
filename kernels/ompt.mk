# scalebench's OMPT tool (kernels/ompt/sb_ompt.c): build/lib/libscalebench_ompt.so, loaded by an OMPT
# runtime through OMP_TOOL_LIBRARIES when a user program's case asks for pop = "ompt" or "libomp"
# (jobs/programs/ompt_report.py). It needs the OMPT header omp-tools.h, which ships with LLVM's
# OpenMP (Debian: libomp-14-dev; clang's resource directory) and not with gcc: the header is copied
# into build/gen/ompt/ rather than putting clang's include directory on gcc's path (its stddef.h
# breaks gcc). Without the header the tool is not built and such cases fail with one line.
LIB_DIR := build/lib
OMPT_TOOL := $(LIB_DIR)/libscalebench_ompt.so
OMPT_HEADER ?= $(firstword $(wildcard $(shell clang -print-resource-dir 2>/dev/null)/include/omp-tools.h) \
    $(wildcard /usr/lib/llvm-*/include/omp-tools.h /usr/lib/llvm-*/lib/clang/*/include/omp-tools.h) \
    $(wildcard /usr/include/omp-tools.h))

ifneq ($(OMPT_HEADER),)
build/gen/ompt/omp-tools.h: $(OMPT_HEADER)
	@mkdir -p $(@D)
	cp $< $@

$(OMPT_TOOL): kernels/ompt/sb_ompt.c build/gen/ompt/omp-tools.h kernels/ompt.mk
	@mkdir -p $(@D)
	$(CC) -std=c11 -O2 -g -Wall -Wextra -fPIC -shared -Ibuild/gen/ompt $< -o $@

KERNEL_BINS += $(OMPT_TOOL)
else
UNAVAILABLE_BINS += $(OMPT_TOOL)
UNAVAILABLE_TOOLS += omp-tools.h
UNAVAILABLE_WHY_omp-tools.h := omp-tools.h not found (LLVM OpenMP headers: Debian libomp-14-dev, module load llvm)
UNAVAILABLE_BINS_omp-tools.h := libscalebench_ompt.so
endif

# LLVM's libomp standing in for GCC's libgomp (it implements the GOMP_ entry points): a directory
# holding libgomp.so.1 -> libomp.so.5, put first on LD_LIBRARY_PATH for a case with pop = "libomp".
OMPT_LIBOMP ?= $(firstword $(wildcard $(shell clang -print-file-name=libomp.so.5 2>/dev/null)) \
    $(wildcard /usr/lib/x86_64-linux-gnu/libomp.so.5 /usr/lib64/libomp.so.5 /usr/lib/llvm-*/lib/libomp.so.5))
LIBOMP_STANDIN := $(LIB_DIR)/libomp-as-libgomp/libgomp.so.1
ifneq ($(OMPT_LIBOMP),)
$(LIBOMP_STANDIN): kernels/ompt.mk
	@mkdir -p $(@D)
	ln -sfn $(realpath $(OMPT_LIBOMP)) $@
KERNEL_BINS += $(LIBOMP_STANDIN)
endif
