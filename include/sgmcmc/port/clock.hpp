// SPDX-License-Identifier: MIT
// The clock contract a port fulfils: a monotonic tick count and its rate.
#pragma once

#include <cstdint>
#include <type_traits>
#include <utility>

namespace sgmcmc {

/// A port clock provides:
///   static std::uint64_t ticks() noexcept;          // monotonic
///   static std::uint64_t ticks_per_second() noexcept;
template <class Clock, class = void>
struct IsClock : std::false_type {};

template <class Clock>
struct IsClock<Clock, std::void_t<decltype(Clock::ticks()), decltype(Clock::ticks_per_second())>>
    : std::bool_constant<
          std::is_convertible_v<decltype(Clock::ticks()), std::uint64_t> &&
          std::is_convertible_v<decltype(Clock::ticks_per_second()), std::uint64_t>> {};

template <class Clock>
inline constexpr bool is_clock_v = IsClock<Clock>::value;

template <class Clock>
constexpr void check_clock() noexcept {
  static_assert(is_clock_v<Clock>,
                "sgmcmc: a clock needs static ticks() and ticks_per_second(), both convertible to "
                "std::uint64_t (see include/sgmcmc/port/clock.hpp)");
}

}  // namespace sgmcmc
