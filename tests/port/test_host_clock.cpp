// SPDX-License-Identifier: MIT
// host::Clock: contract and monotonicity.
#include <doctest/doctest.h>

#include <cstdint>

#include "sgmcmc/host/clock.hpp"

using sgmcmc::host::Clock;

static_assert(sgmcmc::is_clock_v<Clock>);

TEST_CASE("host clock is monotonic and ticks at a plausible rate") {
  sgmcmc::check_clock<Clock>();
  CHECK(Clock::ticks_per_second() >= 1000000U);  // at least microsecond resolution
  std::uint64_t last = Clock::ticks();
  const std::uint64_t start = last;
  bool monotonic = true;
  // Spin for about 2 ms of clock time, checking that ticks never go backwards.
  while (last - start < Clock::ticks_per_second() / 500) {
    const std::uint64_t now = Clock::ticks();
    monotonic = monotonic && now >= last;
    last = now;
  }
  CHECK(monotonic);
  CHECK(last > start);
}
