// SPDX-License-Identifier: MIT
// Named phases of the counting firmware (tests/count_rt.cpp, tests/rt_steps.cpp): each phase
// prints "count-phase P <kind> <label>" for tools/count-constant.sh and scripts/realtime-table,
// which pair it with the insn_count plugin's summary of phase P.
#pragma once

#include <cstdint>

#include "sgmcmc/cortex_m/console.hpp"
#include "sgmcmc/cortex_m/count.hpp"

namespace fw {

/// Starts the next phase and names it. kind: "constant" (min = max required), "varies"
/// (min < max required: a negative control) or "report" (no requirement).
inline void next_phase(const char* kind, const char* label) {
  static int phase = 0;
  sgmcmc::cortex_m::count::phase();
  ++phase;
  sgmcmc::cortex_m::Line() << "count-phase " << phase << ' ' << kind << ' ' << label << '\n';
}

/// Stops SysTick. The plugin counts interrupt handlers too, so the clock's wrap interrupt (every
/// 2^24 ticks, 5 instructions) would add to whichever interval it lands in: a firmware that
/// requires constant counts runs without it (Clock::ticks() stops).
inline void stop_systick() {
  *reinterpret_cast<volatile std::uint32_t*>(0xE000E010u) = 0u;  // SYST_CSR: disabled
}

}  // namespace fw
