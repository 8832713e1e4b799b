#!/usr/bin/env bash
# Installs what scalebench needs and is missing: Debian packages (apt-get, as root) and the project's
# .venv with the pinned Python dependencies. Idempotent and cheap when everything is already there, so
# `make bench` and `make test` call it every time.
set -euo pipefail
cd "$(dirname "$0")/.."

# Debian packages: the real tools the benchmarks, measurement and tests use.
packages=(
  gcc make gfortran              # C11 and Fortran 2008 kernels
  g++ libsimdjson-dev            # the analysis's compiled reader of records.jsonl (analysis/native/)
  libopenmpi-dev openmpi-bin     # MPI kernels, mpirun
  likwid                         # likwid-pin, likwid-perfctr, likwid-topology, marker API header
  stress-ng                      # competing load of a case ([load.<name>] in experiments)
  slurm-wlm munge                # real Slurm for the job-array tests and the test cluster
  hwloc                          # topology cross-check (lstopo)
  jq                             # reading records.jsonl by hand (and its test)
  chromium                       # headless rendering test of the HTML report
  clang-format                   # C formatting check (make lint)
  clang libomp-14-dev            # ThreadSanitizer check of the OpenMP kernels (LLVM Archer)
  rt-tests linux-perf stress-ng  # cyclictest, perf bench, stress-ng beside the microbenchmarks
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
# A bare Debian python3 cannot make a venv without python3-venv (ensurepip lives there).
if ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
  missing+=(python3-venv)
fi

if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
    echo "setup: installing Debian packages: ${missing[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    # With recommends, as on the machines this was verified on (fonts for chromium, Slurm plugins).
    apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    echo "setup: missing Debian packages: ${missing[*]}" >&2
    echo "setup: install them as root: apt-get install ${missing[*]}" >&2
    exit 1
  fi
fi

# The .venv is rebuilt when requirements.txt changes (its hash is kept inside the venv).
want=$(sha256sum requirements.txt | cut -d' ' -f1)
have=$(cat .venv/.requirements.sha256 2>/dev/null || true)
if [ "$want" != "$have" ] || [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv from requirements.txt" >&2
  python3 -m venv .venv
  .venv/bin/python -m pip install -q --disable-pip-version-check -r requirements.txt
  echo "$want" > .venv/.requirements.sha256
fi
