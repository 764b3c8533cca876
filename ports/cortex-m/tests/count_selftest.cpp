// SPDX-License-Identifier: MIT
// Firmware that validates the insn_count QEMU plugin: intervals of known length (straight-line
// Thumb code, a counted loop, the empty interval) and one long interval also timed by SysTick.
// It prints the expected counts; tools/count-selftest.sh compares them with the plugin's log.
#include <cstdint>

#include "sgmcmc/core/noise.hpp"
#include "sgmcmc/cortex_m/clock.hpp"
#include "sgmcmc/cortex_m/console.hpp"
#include "sgmcmc/cortex_m/count.hpp"
#include "sgmcmc/cortex_m/rng.hpp"

using sgmcmc::cortex_m::Line;

namespace {

// `bl start; <body>; bl stop` as one asm block, so the compiler adds nothing in between.
#define SGMCMC_COUNTED(body) \
  asm volatile("bl sgmcmc_count_start\n\t" body "\n\tbl sgmcmc_count_stop" ::: "lr", "memory")

/// Exactly 2 * n + 1 instructions between the markers (mov, then n × subs/bne).
[[gnu::noinline]] void counted_loop(std::uint32_t n) {
  asm volatile(
      "mov r0, %0\n\t"
      "bl sgmcmc_count_start\n\t"
      "mov r1, r0\n\t"
      "1:\n\t"
      "subs r1, r1, #1\n\t"
      "bne 1b\n\t"
      "bl sgmcmc_count_stop"
      :
      : "r"(n)
      : "r0", "r1", "lr", "cc", "memory");
}

}  // namespace

int main() {
  // Expected counts, in the order the intervals run.
  SGMCMC_COUNTED("");                           // 0
  SGMCMC_COUNTED("nop");                        // 1
  SGMCMC_COUNTED("nop\n\tadd.w r12, r12, #1");  // 2: a 16- and a 32-bit instruction
  SGMCMC_COUNTED(".rept 37\n\tnop\n\t.endr");   // 37
  SGMCMC_COUNTED(".rept 250\n\tnop.w\n\tmov r12, r12\n\t.endr");  // 500
  counted_loop(1000);                                             // 2001
  counted_loop(1);                                                // 3
  sgmcmc::cortex_m::count::start();                               // the C++ wrappers add nothing: 0
  sgmcmc::cortex_m::count::stop();
  Line() << "count-expect: 0 1 2 37 500 2001 3 0\n";

  // Phase 1: a long interval (portable Box-Muller normals, 1000 fills of 8) timed both ways:
  // SysTick under -icount shift=0 gives 40 instructions per tick, i.e. the count to within one tick
  // plus the ticks() reads inside the window.
  sgmcmc::cortex_m::count::phase();
  sgmcmc::cortex_m::Rng rng(1);
  sgmcmc::Vector<float, 8> z;
  float sink = 0.0f;
  sgmcmc::cortex_m::count::start();
  const std::uint64_t t0 = sgmcmc::cortex_m::Clock::ticks();
  for (int i = 0; i < 1000; ++i) {
    sgmcmc::fill_normal_portable(rng, z);
    sink += z[0];
  }
  const std::uint64_t t1 = sgmcmc::cortex_m::Clock::ticks();
  sgmcmc::cortex_m::count::stop();
  Line() << "count-systick: " << static_cast<unsigned long long>((t1 - t0) * 40u) << '\n';
  Line() << "sink " << sink << '\n';
  return 0;
}
