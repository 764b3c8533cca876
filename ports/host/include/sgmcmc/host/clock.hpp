// SPDX-License-Identifier: MIT
// Host port clock: std::chrono::steady_clock behind the sgmcmc clock contract.
#pragma once

#include <chrono>
#include <cstdint>

#include "sgmcmc/port/clock.hpp"

namespace sgmcmc::host {

/// Monotonic clock for hosts; one tick is one steady_clock period (1 ns on Linux and macOS).
struct Clock {
  using Base = std::chrono::steady_clock;
  static_assert(Base::is_steady, "sgmcmc::host::Clock needs a monotonic steady_clock");
  static_assert(Base::period::num == 1, "steady_clock must tick in whole fractions of a second");

  /// Ticks since the steady_clock epoch (an unspecified point, e.g. boot).
  static std::uint64_t ticks() noexcept {
    return static_cast<std::uint64_t>(Base::now().time_since_epoch().count());
  }

  /// Ticks per second.
  static constexpr std::uint64_t ticks_per_second() noexcept {
    return static_cast<std::uint64_t>(Base::period::den);
  }
};

static_assert(is_clock_v<Clock>, "sgmcmc::host::Clock must satisfy the port clock contract");

}  // namespace sgmcmc::host
