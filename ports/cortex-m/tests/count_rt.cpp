// SPDX-License-Identifier: MIT
// Instruction counts per call, one phase each (insn_count plugin, scripts/cm4-count): the port's
// normal fill against the portable Box-Muller, and every float function of core/math.hpp against
// newlib's. Prints "count-phase P <constant|varies|report> <label>" for tools/count-constant.sh,
// which checks that every "constant" phase has min = max and every "varies" phase min < max.
#include <cmath>
#include <cstdint>

#include "count_phase.hpp"
#include "sgmcmc/core/math.hpp"
#include "sgmcmc/core/noise.hpp"
#include "sgmcmc/cortex_m/console.hpp"
#include "sgmcmc/cortex_m/count.hpp"
#include "sgmcmc/cortex_m/rng.hpp"

using fw::next_phase;
using sgmcmc::cortex_m::Rng;
namespace count = sgmcmc::cortex_m::count;
namespace m = sgmcmc::detail;

namespace {

constexpr int kCalls = 10000;  // intervals per phase

float g_float_out[32];
double g_double_out[8];

/// kCalls fills of n values through the port's Rng::fill_normal, one interval each.
template <class Scalar>
void port_fill(Rng& rng, Scalar* out, std::size_t n) {
  for (int i = 0; i < kCalls; ++i) {
    count::start();
    rng.fill_normal(out, n);
    count::stop();
  }
}

/// kCalls fills of 8 through the portable Box-Muller (newlib's log, sqrt, cos, sin).
template <class Scalar>
void portable_fill(Rng& rng) {
  sgmcmc::Vector<Scalar, 8> v;
  for (int i = 0; i < kCalls; ++i) {
    count::start();
    sgmcmc::fill_normal_portable(rng, v);
    count::stop();
  }
}

// Arguments: random bit patterns (every exponent, both signs, NaN, Inf, subnormals), read from
// a volatile inside the interval so that the call cannot move out of it; the result goes to a
// volatile. The interval is the call plus that load and store.
volatile float g_arg[kCalls];
volatile float g_arg2[kCalls];
volatile float g_result;

template <class F>
void function_calls(F f) {
  for (int i = 0; i < kCalls; ++i) {
    count::start();
    g_result = f(g_arg[i], g_arg2[i]);
    count::stop();
  }
}

}  // namespace

int main() {
  fw::stop_systick();
  Rng rng(2024);
  for (int i = 0; i < kCalls; ++i) {
    const std::uint64_t w = rng();
    g_arg[i] = m::bit_cast<float>(static_cast<std::uint32_t>(w));
    g_arg2[i] = m::bit_cast<float>(static_cast<std::uint32_t>(w >> 32));
  }

  next_phase("constant", "Rng::fill_normal<float>, n = 8");
  port_fill(rng, g_float_out, 8);
  next_phase("constant", "Rng::fill_normal<float>, n = 1");
  port_fill(rng, g_float_out, 1);
  next_phase("constant", "Rng::fill_normal<float>, n = 2");
  port_fill(rng, g_float_out, 2);
  next_phase("constant", "Rng::fill_normal<float>, n = 32");
  port_fill(rng, g_float_out, 32);
  next_phase("varies", "fill_normal_portable<float, 8> (newlib)");
  portable_fill<float>(rng);
  next_phase("report", "Rng::fill_normal<double>, n = 8 (soft double)");
  port_fill(rng, g_double_out, 8);
  next_phase("report", "fill_normal_portable<double, 8> (newlib)");
  portable_fill<double>(rng);

  next_phase("constant", "detail::exp<float>");
  function_calls([](float x, float) { return m::exp(x); });
  next_phase("constant", "detail::expm1<float>");
  function_calls([](float x, float) { return m::expm1(x); });
  next_phase("constant", "detail::log<float>");
  function_calls([](float x, float) { return m::log(x); });
  next_phase("constant", "detail::log1p<float>");
  function_calls([](float x, float) { return m::log1p(x); });
  next_phase("constant", "detail::tanh<float>");
  function_calls([](float x, float) { return m::tanh(x); });
  next_phase("constant", "detail::pow<float>");
  function_calls([](float x, float y) { return m::pow(x, y); });
  next_phase("constant", "detail::sqrt<float>");
  function_calls([](float x, float) { return m::sqrt(x); });
  next_phase("varies", "newlib expf");
  function_calls([](float x, float) { return std::exp(x); });
  next_phase("varies", "newlib logf");
  function_calls([](float x, float) { return std::log(x); });
  next_phase("report", "newlib tanhf");
  function_calls([](float x, float) { return std::tanh(x); });
  return 0;
}
