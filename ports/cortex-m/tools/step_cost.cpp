// SPDX-License-Identifier: MIT
// The default step's cost, for comparing two versions of the library (scripts/step-cost): the
// mean instructions of step(z, model, rng) for every sampler of tests/all_samplers.hpp (float,
// d = SGMCMC_RT_DIM, U = θᵀθ/2), one insn_count phase each, 10^4 counted steps after 100
// uncounted ones. It uses only what the library has offered since the samplers existed (start,
// step, the port's Rng), so the same source builds against an older tree's headers
// (SGMCMC_STEP_COST_BASE in CMakeLists.txt): the two figures differ only by the library.
#include <cstdint>

// This tree's markers and sampler list, found next to this file whatever the include path says.
#include "../include/sgmcmc/cortex_m/count.hpp"
#include "../tests/all_samplers.hpp"
#include "sgmcmc/cortex_m/console.hpp"
#include "sgmcmc/cortex_m/rng.hpp"

#ifndef SGMCMC_RT_DIM
#define SGMCMC_RT_DIM 8
#endif

namespace {

namespace count = sgmcmc::cortex_m::count;
constexpr int kDim = SGMCMC_RT_DIM;
constexpr int kSteps = 10000;
const fw::Isotropic g_model;
long g_failures = 0;
int g_phase = 0;  // one counter for every instantiation of phase()

/// One phase: "step-cost P <label>", then kSteps counted default steps of s.
template <class S>
[[gnu::noinline]] void phase(const char* label, const S& s, sgmcmc::cortex_m::Rng& rng) {
  count::phase();
  sgmcmc::cortex_m::Line() << "step-cost " << ++g_phase << ' ' << label << '\n';
  static typename S::State z;
  if (!s.start(z, sgmcmc::Vector<float, kDim>::Constant(0.5f), rng)) ++g_failures;
  for (int i = 0; i < 100; ++i) g_failures += s.step(z, g_model, rng) ? 0 : 1;
  for (int i = 0; i < kSteps; ++i) {
    count::start();
    const sgmcmc::Status st = s.step(z, g_model, rng);
    count::stop();
    g_failures += st ? 0 : 1;
  }
}

}  // namespace

int main() {
  // SysTick off: its wrap interrupt (5 instructions every 2^24 ticks) would land in an interval.
  *reinterpret_cast<volatile std::uint32_t*>(0xE000E010u) = 0u;
  sgmcmc::cortex_m::Rng rng(2026);
  fw::for_each_sampler<kDim>([&](const char* label, const auto& s) { phase(label, s, rng); });
  if (g_failures != 0) sgmcmc::cortex_m::Line() << "step-cost: " << g_failures << " failed steps\n";
  return g_failures == 0 ? 0 : 1;
}
