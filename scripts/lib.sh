# Shared by scripts/test and scripts/demo: install missing Debian packages, configure, build.
# shellcheck shell=bash

SGMCMC_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# Packages the full suite needs (host build, plots, cross toolchains and emulators; zlib for the
# IDX loader, and the FashionMNIST data its test and the network experiment read).
SGMCMC_PACKAGES=(cmake make g++ libeigen3-dev doctest-dev libbenchmark-dev gnuplot-nox clang
  libclang-rt-14-dev zlib1g-dev dataset-fashion-mnist)
SGMCMC_PACKAGES+=(libtbb-dev libopenmpi-dev openmpi-bin)  # chains on threads and ranks (tests/parallel)
SGMCMC_STAN_PACKAGES=(r-cran-rstan)  # only scripts/logreg-stan (Stan NUTS beside the library)

# ensure_packages PKG...: apt-get install only those not installed; nothing when all are present.
ensure_packages() {
  local missing=()
  local p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    return 0
  fi
  echo "scripts: installing missing Debian packages: ${missing[*]}" >&2
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

# configure_and_build DIR [cmake args...]: Release build, warnings as errors, 2 jobs.
configure_and_build() {
  local dir=$1
  shift
  cmake -S "$SGMCMC_ROOT" -B "$dir" -DCMAKE_BUILD_TYPE=Release -DSGMCMC_WERROR=ON "$@" >/dev/null
  cmake --build "$dir" -j "$(nproc)"
}

# replace_doc_block FILE NAME: replaces the lines between the markers "<!-- NAME:begin -->" and
# "<!-- NAME:end -->" of FILE (a generated table in a doc) with standard input.
replace_doc_block() {
  local file=$1 name=$2
  local begin="<!-- $name:begin -->" end="<!-- $name:end -->"
  if ! grep -qxF "$begin" "$file" || ! grep -qxF "$end" "$file"; then
    echo "scripts: $file has no $begin ... $end block" >&2
    return 1
  fi
  local block tmp
  block=$(mktemp)
  tmp=$(mktemp)
  cat >"$block"
  awk -v b="$begin" -v e="$end" -v f="$block" '
    $0 == b { print; while ((getline line < f) > 0) print line; skip = 1; next }
    $0 == e { skip = 0 }
    !skip { print }' "$file" >"$tmp"
  mv "$tmp" "$file"
  rm -f "$block"
}

# host_steps_callgrind ROOT DIR [g++ flags...]: builds ports/cortex-m/tools/host_steps.cpp
# (g++ -O2, this tree's probe) against ROOT's library and host-port headers as DIR/host_steps,
# runs it under callgrind, and writes DIR/host_ir.txt (each row's "desc: Trigger: Client
# Request: <label>" and "totals: <instructions of its 10^4 steps>" lines, in the probe's order)
# and DIR/callgrind.log. Shared by scripts/realtime-table and scripts/step-cost.
host_steps_callgrind() {
  local root=$1 dir=$2
  shift 2
  mkdir -p "$dir"
  nice g++ -std=c++17 -O2 -DNDEBUG "$@" -I"$root/include" -I"$root/ports/host/include" \
    -isystem /usr/include/eigen3 "$SGMCMC_ROOT/ports/cortex-m/tools/host_steps.cpp" \
    -o "$dir/host_steps"
  rm -f "$dir"/cg.out*
  nice valgrind --tool=callgrind --callgrind-out-file="$dir/cg.out" "$dir/host_steps" \
    >/dev/null 2>"$dir/callgrind.log"
  # One dump per row: cg.out.1, .2, ..., .10 (a version sort keeps the probe's order).
  ls -v "$dir"/cg.out.* | xargs grep -h '^desc: Trigger\|^totals' >"$dir/host_ir.txt"
}

# machine_line: "CPU model, N logical CPUs; kernel" for the tables' provenance lines.
machine_line() {
  local cpu
  cpu=$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | sed 's/.*: //' || true)
  echo "${cpu:-unknown CPU}, $(nproc) logical CPUs; $(uname -sr)"
}
