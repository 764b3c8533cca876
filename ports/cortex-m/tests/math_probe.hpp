// SPDX-License-Identifier: MIT
// Calls every function of core/math.hpp at the arguments where C libraries set errno; shared by
// the on-target test (tests/math.cpp) and the host test (tests/host/test_math.cpp).
#pragma once

#include <limits>

#include "sgmcmc/core/math.hpp"

namespace sgmcmc::test {

/// Underflow, overflow, pole and domain arguments of exp, log, log1p, pow, plus the specials.
inline constexpr float kErrnoArguments[] = {-200.0f,
                                            -104.0f,
                                            -103.9f,
                                            89.0f,
                                            200.0f,
                                            0.0f,
                                            -0.0f,
                                            -1.0f,
                                            -2.0f,
                                            std::numeric_limits<float>::infinity(),
                                            -std::numeric_limits<float>::infinity(),
                                            std::numeric_limits<float>::quiet_NaN(),
                                            std::numeric_limits<float>::denorm_min(),
                                            1e-30f,
                                            1e30f};

#if defined(__clang__)
#define SGMCMC_TEST_OPAQUE_CALL [[gnu::noinline]]
#else
#define SGMCMC_TEST_OPAQUE_CALL [[gnu::noinline, gnu::noipa]]
#endif

/// Every float function at x (pow with x as base and as exponent) and every double function at
/// 8x; returns the sum so that nothing is dropped. Not inlined, no interprocedural constant
/// propagation: the calls run with the arguments, not folded at compile time.
SGMCMC_TEST_OPAQUE_CALL inline double call_every_math_function(float x) noexcept {
  namespace m = sgmcmc::detail;
  const float f = m::exp(x) + m::expm1(x) + m::log(x) + m::log1p(x) + m::tanh(x) + m::sqrt(x) +
                  m::pow(x, -3.0f) + m::pow(x, 50.0f) + m::pow(2.0f, x);
  const double d = 8.0 * static_cast<double>(x);
  return static_cast<double>(f) + m::exp(d) + m::expm1(d) + m::log(d) + m::log1p(d) + m::tanh(d) +
         m::sqrt(d) + m::pow(d, -3.0) + m::pow(d, 500.0) + m::pow(2.0, d);
}

}  // namespace sgmcmc::test
