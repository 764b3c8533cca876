// SPDX-License-Identifier: MIT
// Instructions per individual step of every shipped sampler (float, d = SGMCMC_RT_DIM, U = θᵀθ/2)
// under the insn_count plugin, one phase each: the default step, the real-time tick of
// NoiseQueue (run/realtime.hpp) where a sampler has one, the refill, and the capped loops at
// their caps. scripts/realtime-table turns the output into docs/REALTIME.md's table; the ctest
// count_tick_<opt> (tools/count-constant.sh) requires every tick phase to be constant and the
// negative control (SGLD drawing through the portable Box-Muller, newlib's logf/cosf/sinf) to vary.
#include <cstdint>

#include "all_samplers.hpp"
#include "count_phase.hpp"
#include "sgmcmc/core/kinetic_mg.hpp"
#include "sgmcmc/core/linalg.hpp"
#include "sgmcmc/core/noise.hpp"
#include "sgmcmc/cortex_m/console.hpp"
#include "sgmcmc/cortex_m/count.hpp"
#include "sgmcmc/cortex_m/rng.hpp"
#include "sgmcmc/run/realtime.hpp"

#ifndef SGMCMC_RT_DIM
#define SGMCMC_RT_DIM 8
#endif

namespace {

namespace count = sgmcmc::cortex_m::count;
using fw::next_phase;
using fw::with_step;
using sgmcmc::cortex_m::Line;
using sgmcmc::cortex_m::Rng;

constexpr int kDim = SGMCMC_RT_DIM;
constexpr int kSteps = 10000;  // counted steps per phase
constexpr int kCapSteps = 20;  // counted calls at a cap (up to about 10^6 instructions each)
using Vec = sgmcmc::Vector<float, kDim>;

const fw::Isotropic g_model;
long g_failures = 0;

/// The port's generator without its fill_normal: sgmcmc::fill_normal then takes the portable
/// Box-Muller (newlib logf, sqrtf, cosf, sinf), whose instruction count depends on the bits.
struct PortableRng {
  using result_type = std::uint64_t;
  static constexpr result_type min() noexcept { return 0u; }
  static constexpr result_type max() noexcept { return ~result_type(0); }
  result_type operator()() noexcept { return rng(); }
  Rng rng;
};

/// Counts n default steps (step(z, model, rng)), one interval each; a failed step is counted.
template <class S, class R>
void steps(const S& s, typename S::State& z, R& rng, int n) {
  for (int i = 0; i < n; ++i) {
    count::start();
    const sgmcmc::Status st = s.step(z, g_model, rng);
    count::stop();
    g_failures += st ? 0 : 1;
  }
}

/// One phase of kSteps default steps of s from θ = 0.5, after a short uncounted warm-up.
template <class S>
void step_phase(const char* label, const S& s, Rng& rng) {
  typename S::State z;
  if (!s.start(z, Vec::Constant(0.5f), rng)) ++g_failures;
  for (int i = 0; i < 100; ++i) g_failures += s.step(z, g_model, rng) ? 0 : 1;
  next_phase("report", label);
  steps(s, z, rng, kSteps);
}

/// The real-time split: kSteps ticks of a NoiseQueue (each refilled, uncounted, just before),
/// then kSteps refills alone. The ticks must be constant; so must the refills on this port.
template <class S>
void tick_phases(const char* tick_label, const char* refill_label, const S& s, Rng& rng) {
  typename S::State z;
  if (!s.start(z, Vec::Constant(0.5f), rng)) ++g_failures;
  static sgmcmc::NoiseQueue<S, 1> queue;
  next_phase("constant", tick_label);
  for (int i = 0; i < kSteps; ++i) {
    if (!queue.refill(rng)) ++g_failures;
    count::start();
    const sgmcmc::Status st = queue.tick(s, z, g_model);
    count::stop();
    g_failures += st ? 0 : 1;
  }
  next_phase("constant", refill_label);
  for (int i = 0; i < kSteps; ++i) {
    count::start();
    const bool ok = queue.refill(rng);
    count::stop();
    // Consume the slot uncounted, so the next refill finds it free.
    g_failures += ok && queue.tick(s, z, g_model) ? 0 : 1;
  }
}

}  // namespace

int main() {
  fw::stop_systick();
  Rng rng(2026);
  Line() << "rt_steps: d = " << kDim << ", " << kSteps << " steps per phase\n";

  // Default steps, every shipped sampler.
  fw::for_each_sampler<kDim>([&](const char* label, const auto& s) { step_phase(label, s, rng); });

  // Ticks: constant instruction counts whatever the random numbers.
  tick_phases("tick: SGLD", "refill: SGLD", with_step<sgmcmc::SGLD<float, kDim>>(0.1f), rng);
  tick_phases("tick: SGHMC", "refill: SGHMC", with_step<sgmcmc::SGHMC<float, kDim>>(0.1f), rng);
  tick_phases("tick: SGNHT", "refill: SGNHT", with_step<sgmcmc::SGNHT<float, kDim>>(0.05f), rng);
  tick_phases("tick: SGRHMC, constant diagonal metric", "refill: SGRHMC, constant diagonal metric",
              with_step<sgmcmc::ConstantMetricSGRHMC<float, kDim>>(0.1f), rng);
  {
    sgmcmc::HMC<float, kDim>::Params p;  // L = 10, no Metropolis test: a fixed-length trajectory
    p.step_size = 0.1f;
    p.metropolis = false;
    tick_phases("tick: HMC, L = 10, no Metropolis test", "refill: HMC, L = 10",
                sgmcmc::HMC<float, kDim>(p), rng);
    // With the Metropolis test: the acceptance probability is computed without a branch on the
    // energy error and the commit is a select, so accepted and rejected ticks cost the same.
    p.metropolis = true;
    typename sgmcmc::HMC<float, kDim>::State z;
    const sgmcmc::HMC<float, kDim> hmc(p);
    if (!hmc.start(z, Vec::Constant(0.5f), rng)) ++g_failures;
    static sgmcmc::NoiseQueue<sgmcmc::HMC<float, kDim>, 1> queue;
    next_phase("constant", "tick: HMC, L = 10, Metropolis test");
    for (int i = 0; i < kSteps; ++i) {
      queue.refill(rng);
      count::start();
      const sgmcmc::Status st = queue.tick(hmc, z, g_model);
      count::stop();
      g_failures += st ? 0 : 1;
    }
  }

  // The Jacobi sweep cap (core/linalg.hpp, kMaxJacobiSweeps): one sweep of a dense symmetric
  // matrix, every rotation taken (no off-diagonal entry is zero), whose count times the cap bounds
  // symmetric_eigen; and the same matrix decomposed to convergence, for the sweeps it needs.
  {
    static sgmcmc::Matrix<float, kDim, kDim> a, v;
    static sgmcmc::Vector<float, kDim> lambda;
    for (int i = 0; i < kDim; ++i) {
      for (int j = 0; j < kDim; ++j) {
        a(i, j) = i == j ? float(kDim + i) : 1.0f / float(1 + i + j);
      }
    }
    next_phase("report", "Jacobi eigen-sweep, one sweep of a dense matrix");
    for (int i = 0; i < kCapSteps; ++i) {
      count::start();
      sgmcmc::detail::symmetric_eigen(a, lambda, v, 1);
      count::stop();
    }
    next_phase("report", "Jacobi eigen-decomposition of the same matrix to convergence");
    for (int i = 0; i < kCapSteps; ++i) {
      count::start();
      sgmcmc::detail::symmetric_eigen(a, lambda, v);
      count::stop();
    }
    if (!lambda.allFinite()) ++g_failures;
  }

  // Negative control: the same SGLD step drawing through the portable transform varies.
  {
    const auto sgld = with_step<sgmcmc::SGLD<float, kDim>>(0.1f);
    typename sgmcmc::SGLD<float, kDim>::State z;
    PortableRng portable{Rng(7)};
    if (!sgld.start(z, Vec::Constant(0.5f))) ++g_failures;
    next_phase("varies", "SGLD, portable Box-Muller (newlib)");
    steps(sgld, z, portable, kSteps);
  }

  // Capped loops at their caps. NUTS: h = 10^-3 on U = θᵀθ/2 reaches no U-turn within
  // 2^10 − 1 leapfrogs (1.02 time units, a U-turn needs about π/2), so every step runs to MaxDepth.
  {
    const auto nuts = with_step<sgmcmc::NUTS<float, kDim>>(1e-3f);
    typename sgmcmc::NUTS<float, kDim>::State z;
    if (!nuts.start(z, Vec::Constant(0.5f), rng)) ++g_failures;
    next_phase("report", "NUTS at MaxDepth = 10 (1023 leapfrogs)");
    steps(nuts, z, rng, kCapSteps);
    if (!z.extra().max_depth) ++g_failures;
  }
  // SGMGT's exact momentum draw: one draw of one coordinate; the cap is 1024 proposals.
  {
    const sgmcmc::SoftMonomialGammaKinetic<float> k{1, 1.0f, 5.0f};
    volatile float sink = 0.0f;
    next_phase("report", "SGMGT momentum draw, one coordinate");
    for (int i = 0; i < kSteps; ++i) {
      count::start();
      sink = k.sample1(rng);
      count::stop();
    }
    (void)sink;
  }

  Line() << "rt_steps: failed steps " << g_failures << '\n';
  return g_failures == 0 ? 0 : 1;
}
