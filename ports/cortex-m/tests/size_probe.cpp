// SPDX-License-Identifier: MIT
// Size/speed probe for scripts/size-table: one sampler (SGMCMC_PROBE_SGLD, _SGHMC, _SGNHT, _HMC,
// _SGRLD, _SGRHMC, _GSGRHMC, _SGMGT, _SGMGTD, _NUTS, or none for the baseline) at
// d = SGMCMC_PROBE_DIM, float; prints stack and ticks per step.
#include <cstdint>

#include "probe_models.hpp"
#include "sgmcmc/cortex_m/clock.hpp"
#include "sgmcmc/cortex_m/console.hpp"
#include "sgmcmc/cortex_m/rng.hpp"
#include "sgmcmc/cortex_m/stack.hpp"
#include "sgmcmc/samplers/hmc.hpp"
#include "sgmcmc/samplers/nuts.hpp"
#include "sgmcmc/samplers/sghmc.hpp"
#include "sgmcmc/samplers/sgld.hpp"
#include "sgmcmc/samplers/sgmgt.hpp"
#include "sgmcmc/samplers/sgnht.hpp"
#include "sgmcmc/samplers/sgrhmc.hpp"
#include "sgmcmc/samplers/sgrld.hpp"

#ifndef SGMCMC_PROBE_DIM
#define SGMCMC_PROBE_DIM 2
#endif

namespace {

constexpr int kDim = SGMCMC_PROBE_DIM;
constexpr long kSteps = 1000;
using Vec = sgmcmc::Vector<float, kDim>;

using fw::Isotropic;
using fw::SeparableMetric;

#if defined(SGMCMC_PROBE_SGLD)
using Sampler = sgmcmc::SGLD<float, kDim>;
Sampler make() {
  Sampler::Params p;
  p.step_size = 0.1f;
  return Sampler(p);
}
#elif defined(SGMCMC_PROBE_SGHMC)
using Sampler = sgmcmc::SGHMC<float, kDim>;
Sampler make() {
  Sampler::Params p;
  p.step_size = 0.1f;
  return Sampler(p);
}
#elif defined(SGMCMC_PROBE_SGNHT)
using Sampler = sgmcmc::SGNHT<float, kDim>;
Sampler make() {
  Sampler::Params p;
  p.step_size = 0.05f;
  return Sampler(p);
}
#elif defined(SGMCMC_PROBE_HMC)
using Sampler = sgmcmc::HMC<float, kDim>;
Sampler make() {
  Sampler::Params p;  // L = 10 leapfrog steps per step
  p.step_size = 0.1f;
  return Sampler(p);
}
#elif defined(SGMCMC_PROBE_SGRLD)
using Sampler = sgmcmc::SGRLD<float, kDim, SeparableMetric>;
Sampler make() {
  return Sampler({0.05f, {}, {}});
}
#elif defined(SGMCMC_PROBE_SGRHMC)
using Sampler = sgmcmc::SGRHMC<float, kDim, SeparableMetric>;
Sampler make() {
  return Sampler({0.05f, {}, {}});
}
#elif defined(SGMCMC_PROBE_GSGRHMC)
using Sampler = sgmcmc::GSGRHMC<float, kDim>;
Sampler make() {
  return Sampler({0.05f, {}});
}
#elif defined(SGMCMC_PROBE_SGMGT)
using Sampler = sgmcmc::SGMGT<float, kDim>;
Sampler make() {
  Sampler::Params p;  // a = 1, c = 5
  p.step_size = 0.05f;
  return Sampler(p);
}
#elif defined(SGMCMC_PROBE_SGMGTD)
using Sampler = sgmcmc::SGMGTD<float, kDim>;
Sampler make() {
  Sampler::Params p;
  p.step_size = 0.05f;
  return Sampler(p);
}
#elif defined(SGMCMC_PROBE_NUTS)
using Sampler = sgmcmc::NUTS<float, kDim>;
Sampler make() {
  Sampler::Params p;  // MaxDepth 10; the tree depth on U = θᵀθ/2 at h = 0.5 is 2–3
  p.step_size = 0.5f;
  return Sampler(p);
}
#else
/// Baseline: the same harness with a step that only touches the state.
struct Sampler {
  struct StateType {
    Vec theta;
  };
  StateType start(const Vec& t) const noexcept { return {t}; }
  template <class Model, class R>
  bool step(StateType& z, const Model&, R&) const noexcept {
    z.theta[0] += 1.0f;
    return true;
  }
};
Sampler make() {
  return Sampler{};
}
#endif

/// The measured loop: kSteps steps; returns the number of failed steps.
[[gnu::noinline]] long run_steps(const Sampler& s, Sampler::StateType& z,
                                 sgmcmc::cortex_m::Rng& rng) {
  const Isotropic model;
  long failures = 0;
  for (long i = 0; i < kSteps; ++i) failures += s.step(z, model, rng) ? 0 : 1;
  return failures;
}

}  // namespace

int main() {
  const Sampler sampler = make();
  Sampler::StateType z = sampler.start(Vec::Constant(0.5f));
  sgmcmc::cortex_m::Rng rng(1);
  long failures = run_steps(sampler, z, rng);  // warm-up, and the first repaint's reference

  sgmcmc::cortex_m::stack::repaint();
  const std::uintptr_t mark = sgmcmc::cortex_m::stack::pointer();
  const std::uint64_t t0 = sgmcmc::cortex_m::Clock::ticks();
  failures += run_steps(sampler, z, rng);
  const std::uint64_t t1 = sgmcmc::cortex_m::Clock::ticks();
  const std::size_t stack = sgmcmc::cortex_m::stack::used_below(mark);

  sgmcmc::cortex_m::Line() << "PROBE dim=" << kDim << " steps=" << kSteps
                           << " ticks=" << static_cast<unsigned long long>(t1 - t0)
                           << " stack=" << static_cast<unsigned>(stack)
                           << " state=" << static_cast<unsigned>(sizeof z)
                           << " failures=" << failures << '\n';
  return failures == 0 ? 0 : 1;
}
