// SPDX-License-Identifier: MIT
// Linked into a test compiled for AVX-512 (x86-64-v4): on a CPU without it, exits with ctest's
// skip code before any of that test's own code runs (a constructor of priority 101 runs before
// the default-priority static initialisers). Compiled for the build's baseline.
#include <cstdio>
#include <cstdlib>

namespace {

[[gnu::constructor(101)]] void require_avx512() {
  __builtin_cpu_init();
  const bool ok = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
                  __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw") &&
                  __builtin_cpu_supports("avx512dq");
  if (!ok) {
    std::puts("skipped: this CPU lacks AVX-512 (F, CD, VL, BW, DQ)");
    std::fflush(stdout);
    std::_Exit(77);
  }
}

}  // namespace
