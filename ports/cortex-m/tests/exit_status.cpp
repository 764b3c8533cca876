// SPDX-License-Identifier: MIT
// Negative control for the harness: one passing and one deliberately failing check, so the
// harness reports 1; the firmware maps that to 42 to show the exact status, not just
// pass/fail, reaches the host through SYS_EXIT_EXTENDED (see cmake/expect-exit.cmake).
#include "sgmcmc/cortex_m/check.hpp"

int main() {
  volatile int one = 1;
  SGMCMC_CHECK(one == 1);
  SGMCMC_CHECK(one == 2);  // fails on purpose
  return sgmcmc::cortex_m::check::finish() == 1 ? 42 : 0;
}
