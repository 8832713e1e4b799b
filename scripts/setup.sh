#!/usr/bin/env bash
# Checks that what a make target needs is there, by trying it (a C compiler that builds and runs an
# OpenMP program, Python >= 3.11 with venv, ...), and installs the project's .venv with the pinned
# Python dependencies. Idempotent and cheap when everything is there, so `make bench`, `make test` and
# `make lint` call it every time.
#
#   scripts/setup.sh bench   what the default campaign needs; Fortran, MPI, likwid, stress-ng,
#                            Slurm, perf and cyclictest are optional (one line each when missing: what
#                            they enable is skipped)
#   scripts/setup.sh test    everything, test-only tools included (Slurm daemons, munge, chromium, clang)
#   scripts/setup.sh lint    the .venv and clang-format
#
# As root on Debian/Ubuntu, missing Debian packages are installed first (apt-get), as before. Anywhere
# else nothing is installed: a missing required tool gets one message saying what it is for and how to
# get it with apt, dnf, environment modules or Spack, and the script exits 3 (environment).
# Compilers are the ones make will use: CC, FC, MPICC from the environment (defaults gcc,
# gfortran, mpicc); PYTHON names the interpreter for the .venv (default: the first python3.X >= 3.11).
set -uo pipefail
cd "$(dirname "$0")/.."
target=${1:-bench}
case "$target" in bench | test | lint) ;; *)
  echo "setup: unknown target '$target' (expected bench, test or lint)" >&2
  exit 2
  ;;
esac

# An executable on PATH (bash's `command -v` also names a non-executable file when nothing better is
# found, e.g. a tool an administrator disabled with chmod or a bind mount of /dev/null).
have() {
  local path
  path=$(command -v "$1") && [ -f "$path" ] && [ -x "$path" ]
}

# ---- root on Debian: install the Debian packages (the machines the tests run on) -----------------
debian_packages=(
  gcc make gfortran              # C11 and Fortran 2008 kernels
  libopenmpi-dev openmpi-bin     # MPI kernels, mpirun
  likwid                         # likwid-pin, likwid-perfctr, likwid-topology, marker API header
  stress-ng                      # competing load of a case ([load.<name>] in experiments)
  slurm-wlm munge                # real Slurm for the job-array tests and the test cluster
  hwloc                          # topology cross-check (lstopo)
  jq                             # reading records.jsonl by hand (and its test)
  chromium                       # headless rendering test of the HTML report
  clang-format                   # C formatting check (make lint)
  clang libomp-14-dev            # ThreadSanitizer check of the OpenMP kernels (LLVM Archer); clang build
  rt-tests linux-perf            # cyclictest, perf bench beside the microbenchmarks
  python3-venv                   # venv and ensurepip for the .venv
  zstd imagemagick               # programs nobody here wrote, run as campaigns (tests/programs/)
)
if [ "$(id -u)" -eq 0 ] && have apt-get && have dpkg-query; then
  missing=()
  for p in "${debian_packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "setup: installing Debian packages: ${missing[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    # With recommends, as on the machines this was verified on (fonts for chromium, Slurm plugins).
    apt-get install -y -qq "${missing[@]}" >/dev/null || exit 3
  fi
fi

# ---- capabilities, each checked by trying it ---------------------------------------------------------
CC=${CC:-gcc} FC=${FC:-gfortran} MPICC=${MPICC:-mpicc}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

has_c_openmp() {
  printf '#include <omp.h>\n#include <stdio.h>\nint main(void){int n=0;\n#pragma omp parallel reduction(+:n)\nn+=1;\nprintf("%%d\\n",n>0);return 0;}\n' >"$scratch/omp.c"
  $CC -fopenmp "$scratch/omp.c" -o "$scratch/omp" 2>/dev/null && [ "$("$scratch/omp")" = 1 ]
}
has_fortran() {
  printf 'program p\n  use iso_c_binding\n  integer(c_int64_t) :: i = 1\n  print *, i\nend program p\n' >"$scratch/f.f90"
  $FC -std=f2008 -fopenmp "$scratch/f.f90" -o "$scratch/f" 2>/dev/null && "$scratch/f" >/dev/null
}
has_mpi() {
  printf '#include <mpi.h>\nint main(int c,char**v){MPI_Init(&c,&v);MPI_Finalize();return 0;}\n' >"$scratch/mpi.c"
  $MPICC "$scratch/mpi.c" -o "$scratch/mpi" 2>/dev/null && have mpirun
}
has_clang_archer() { have clang && compgen -G '/usr/lib/llvm-*/lib/libarcher.so' >/dev/null; }
has_slurm_daemons() { have slurmctld && have slurmd; }

# A Python >= 3.11 with venv and ensurepip (a bare Debian python3 lacks python3-venv).
python_ok() { "$1" -c 'import sys, venv, ensurepip; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; }
find_python() {
  local p
  for p in ${PYTHON:-} python3 python3.13 python3.12 python3.11; do
    if have "$p" && python_ok "$p"; then
      echo "$p"
      return 0
    fi
  done
  return 1
}

# name | check | what it is for | apt | dnf | module / Spack
capabilities=(
  "C compiler with OpenMP ($CC)|has_c_openmp|the C kernels and their harness|gcc|gcc|module load gcc / spack install gcc"
  "make|have make|building the kernels|make|make|module load make / spack install gmake"
  "Python >= 3.11 with venv|find_python|the scalebench command (.venv)|python3 python3-venv|python3.11|module load python/3.11 / spack install python@3.11"
  "Fortran compiler ($FC)|has_fortran|the Fortran kernels (*-f-*)|gfortran|gcc-gfortran|module load gcc / spack install gcc"
  "MPI ($MPICC, mpirun)|has_mpi|the MPI kernels (*-c-mpi)|libopenmpi-dev openmpi-bin|openmpi-devel (then module load mpi/openmpi-x86_64)|module load openmpi / spack install openmpi"
  "likwid|have likwid-perfctr|hardware counters and pin_tool = likwid-pin (topology then comes from sysfs)|likwid|likwid (EPEL)|module load likwid / spack install likwid"
  "stress-ng|have stress-ng|competing load of a case ([load.<name>])|stress-ng|stress-ng (EPEL)|spack install stress-ng"
  "Slurm client (sbatch)|have sbatch|scalebench submit|slurm-client|slurm (EPEL)|module load slurm"
  "perf|have perf|the perfbench-tool-pipe microbenchmark|linux-perf|perf|-"
  "cyclictest|have cyclictest|the cyclictest-tool-nanosleep microbenchmark|rt-tests|rt-tests|spack install rt-tests"
  "Slurm daemons (slurmctld, slurmd)|has_slurm_daemons|the one-host test cluster (make test)|slurm-wlm|slurm-slurmctld slurm-slurmd (EPEL)|-"
  "munge|have munged|authentication of the test cluster (make test)|munge|munge|-"
  "chromium|have chromium|the headless rendering test of the HTML report (make test)|chromium|chromium (EPEL)|-"
  "clang with LLVM Archer|has_clang_archer|the clang build and ThreadSanitizer test of the OpenMP kernels (make test)|clang libomp-14-dev|clang libomp-devel|module load llvm / spack install llvm"
  "jq|have jq|the records.jsonl-by-hand test (make test)|jq|jq|spack install jq"
  "clang-format|have clang-format|the C formatting check (make lint)|clang-format|clang-tools-extra|module load llvm / spack install llvm"
)
# What each target requires (by name prefix): bench its three and the optional list; test everything but
# the lint-only tools; lint the .venv and clang-format.
required_bench=("C compiler with OpenMP" "make" "Python >= 3.11")
optional_bench=("Fortran compiler" "MPI" "C++20 compiler" "likwid" "stress-ng" "Slurm client" "perf" "cyclictest")
required_lint=("Python >= 3.11" "clang-format")
lint_only=("clang-format")  # `make test` needs everything else

wanted() { # $1 capability name, $2 list name -> whether the name starts with an entry of the list
  local -n list=$2
  local prefix
  for prefix in "${list[@]}"; do [[ "$1" == "$prefix"* ]] && return 0; done
  return 1
}

failed=0
for entry in "${capabilities[@]}"; do
  IFS='|' read -r name check purpose apt dnf other <<<"$entry"
  case "$target" in
    test) if wanted "$name" lint_only; then continue; else level=required; fi ;;
    lint) if wanted "$name" required_lint; then level=required; else continue; fi ;;
    bench)
      if wanted "$name" required_bench; then level=required
      elif wanted "$name" optional_bench; then level=optional
      else continue; fi ;;
  esac
  $check >/dev/null && continue
  if [ "$level" = optional ]; then
    echo "setup: optional: no $name: $purpose skipped" >&2
  else
    how="apt-get install $apt (Debian/Ubuntu); dnf install $dnf (RHEL/Rocky/Alma)"
    [ "$other" = - ] || how="$how; $other (modules/Spack)"
    echo "setup: missing $name, needed for $purpose; get it with: $how" >&2
    failed=1
  fi
done
[ "$failed" -eq 0 ] || exit 3

# ---- the .venv: rebuilt when requirements.txt changes (its hash is kept inside the venv) ------------
python=$(find_python)
want=$(sha256sum requirements.txt | cut -d' ' -f1)
have=$(cat .venv/.requirements.sha256 2>/dev/null || true)
if [ "$want" != "$have" ] || [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv from requirements.txt with $python" >&2
  "$python" -m venv .venv || exit 3
  # PIP_* variables (PIP_NO_INDEX, PIP_FIND_LINKS, a proxy) are honoured: sites without PyPI use a wheel
  # directory.
  .venv/bin/python -m pip install -q --disable-pip-version-check -r requirements.txt || exit 3
  echo "$want" >.venv/.requirements.sha256
fi

# ---- make test: the pinned wheels, for the tests that install scalebench into fresh venvs offline
# (pip install --no-index --find-links build/wheels) -------------------------------------------------
if [ "$target" = test ] && [ "$(cat build/wheels/.requirements.sha256 2>/dev/null || true)" != "$want" ]; then
  echo "setup: downloading the pinned wheels into build/wheels" >&2
  mkdir -p build/wheels
  .venv/bin/python -m pip download -q --disable-pip-version-check -r requirements.txt -d build/wheels || exit 3
  echo "$want" >build/wheels/.requirements.sha256
fi
