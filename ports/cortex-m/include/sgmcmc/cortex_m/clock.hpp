// SPDX-License-Identifier: MIT
// Cortex-M clock port: SysTick at the core clock, widened to 64 bits by its wrap interrupt.
#pragma once

#include <cstdint>

#include "sgmcmc/cortex_m/board.hpp"
#include "sgmcmc/port/clock.hpp"

extern "C" {
/// Number of SysTick wraps (2^24 ticks each) since reset; incremented by SysTick_Handler.
extern volatile std::uint32_t sgmcmc_systick_wraps;
}

namespace sgmcmc::cortex_m {

/// Monotonic core-clock ticks, satisfying the clock contract (include/sgmcmc/port/clock.hpp).
///
/// The startup code (src/startup.cpp) starts SysTick with reload 2^24 - 1 on the processor
/// clock and counts wraps in its interrupt, so ticks() is 64-bit and never goes backwards.
/// Why not the DWT cycle counter: QEMU (7.2) does not model the DWT, so CYCCNT never counts
/// there. SysTick is modelled, but runs on QEMU's virtual clock: with `-icount shift=0` every
/// guest instruction takes exactly 1 virtual ns, so at 25 MHz one tick is 40 instructions and
/// timings are deterministic; without -icount the virtual clock follows host wall time.
/// On real silicon a board may switch to DWT->CYCCNT behind the same two functions.
struct Clock {
  /// SysTick reload value: the counter runs kReload..0, then reloads (period kReload + 1).
  static constexpr std::uint32_t kReload = 0x00FFFFFFu;

  /// Ticks since reset.
  static std::uint64_t ticks() noexcept {
    volatile const std::uint32_t& cvr = *reinterpret_cast<volatile std::uint32_t*>(0xE000E018u);
    volatile const std::uint32_t& icsr = *reinterpret_cast<volatile std::uint32_t*>(0xE000ED04u);
    constexpr std::uint32_t kPendSTSet = 1u << 26;
    for (;;) {
      const std::uint32_t hi = sgmcmc_systick_wraps;
      const std::uint32_t v1 = cvr;
      const bool pending = (icsr & kPendSTSet) != 0u;
      const std::uint32_t v2 = cvr;
      if (hi != sgmcmc_systick_wraps) continue;  // the wrap interrupt ran meanwhile
      std::uint64_t wraps = hi;
      std::uint32_t value = v2;
      if (pending) {
        wraps += 1u;  // wrapped before v2 was read, interrupt not taken yet (masked)
      } else if (v2 > v1) {
        value = v1;  // wrapped between the pending check and v2: v1 is pre-wrap
      }
      return (wraps << 24) + (kReload - value);
    }
  }

  /// Tick rate: the core clock (SGMCMC_CORTEX_M_CPU_HZ).
  static constexpr std::uint64_t ticks_per_second() noexcept { return SGMCMC_CORTEX_M_CPU_HZ; }
};

static_assert(is_clock_v<Clock>, "sgmcmc::cortex_m::Clock must satisfy the clock contract");

}  // namespace sgmcmc::cortex_m
