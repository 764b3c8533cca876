// SPDX-License-Identifier: MIT
// Marker functions for exact instruction counts under QEMU with the insn_count plugin
// (ports/cortex-m/tools/qemu-plugin, run by scripts/cm4-count); on real hardware they are no-ops.
#pragma once

extern "C" {
/// Marks the start of a counted interval. Its only instruction is `bx lr`, as the plugin
/// requires: the count is the instructions executed after it returns and before the call of
/// sgmcmc_count_stop(), so `bl sgmcmc_count_start; K instructions; bl sgmcmc_count_stop`
/// counts exactly K. Everything the core runs in between counts, interrupt handlers included.
[[gnu::naked, gnu::noinline, gnu::used]] inline void sgmcmc_count_start() {
  asm volatile("bx lr");
}
/// Marks the end of the interval opened by sgmcmc_count_start().
[[gnu::naked, gnu::noinline, gnu::used]] inline void sgmcmc_count_stop() {
  asm volatile("bx lr");
}
/// Single-marker mode (scripts/cm4-count --mark): each call ends one interval and starts the next.
[[gnu::naked, gnu::noinline, gnu::used]] inline void sgmcmc_count_mark() {
  asm volatile("bx lr");
}
/// Starts a new phase: the intervals after it are summarised separately (min/median/max per
/// phase). Call it outside intervals.
[[gnu::naked, gnu::noinline, gnu::used]] inline void sgmcmc_count_phase() {
  asm volatile("bx lr");
}
}

namespace sgmcmc::cortex_m::count {

/// Opens an interval. The memory clobber keeps loads and stores of the measured code from
/// moving across the marker; pure register arithmetic may still be scheduled across it, so
/// measure code whose results are stored (a sampler step is).
inline void start() noexcept {
  sgmcmc_count_start();
  asm volatile("" ::: "memory");
}

/// Closes the interval.
inline void stop() noexcept {
  asm volatile("" ::: "memory");
  sgmcmc_count_stop();
}

/// Starts the next phase (phase 0 runs from reset to the first call).
inline void phase() noexcept {
  asm volatile("" ::: "memory");
  sgmcmc_count_phase();
  asm volatile("" ::: "memory");
}

}  // namespace sgmcmc::cortex_m::count
