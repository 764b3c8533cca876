// SPDX-License-Identifier: MIT
// The demo's convergence check: K = 4 chains of one sampler stepped together by one Batch
// (batch/batch.hpp), each from its own overdispersed start, with its own RNG stream and its own
// gradient-noise stream; split R̂ per coordinate (diagnostics/rhat.hpp) and the chains' summed
// batch-means ESS (diagnostics/ess.hpp) over the kept draws (docs/chains.md).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>

#include "common/table.hpp"
#include "demo/chain.hpp"
#include "sgmcmc/batch/batch.hpp"
#include "sgmcmc/diagnostics/ess.hpp"
#include "sgmcmc/diagnostics/rhat.hpp"
#include "sgmcmc/host/streams.hpp"

namespace sgmcmc::demo {

/// Chains of the convergence check (R̂ needs at least four).
inline constexpr int kCheckChains = 4;

/// What the check found for one sampler on one target.
struct Convergence {
  bool ran = false;       ///< false for the optimisers (nothing to converge to)
  double max_rhat = 0.0;  ///< the largest split R̂ over the coordinates
  double min_ess = 0.0;   ///< the smallest summed ESS over the coordinates
  long draws_per_chain = 0;
  Status status;        ///< Ok, or the first chain's failure
  std::string failure;  ///< where it failed, in words
};

/// Draws per chain of the check: a quarter of the main chains' (R̂ is a check, not an estimate).
inline long check_draws(const Plan& plan) {
  return std::max<long>(1000, plan.samples / 4);
}

/// Runs `batch` (whose chains start at Target::start + (k − 1.5)·spread in every coordinate) for
/// plan.burn_in_samples·thin steps, then check_draws(plan) kept draws one every `thin` steps;
/// `models` is what batch.step takes (one shared model or per_chain(models)).
template <class Target, class B, class Models>
Convergence run_check(const Plan& plan, std::uint64_t index, long thin, const B& batch,
                      const Models& models) {
  constexpr int D = Target::dim;
  using Vec = Vector<double, D>;
  Convergence c;
  c.ran = true;
  c.draws_per_chain = check_draws(plan);
  static typename B::State z;  // static: the demo's own, one check at a time
  constexpr double kSpread = 1.5;
  for (int k = 0; k < kCheckChains; ++k) {
    Vec theta0;
    for (int d = 0; d < D; ++d) theta0[d] = Target::start[d] + (k - 1.5) * kSpread;
    if (Status s = batch.start(z, k, theta0); !s) {
      c.status = s;
      c.failure = common::format("start of chain %d", k);
      return c;
    }
  }
  // Streams of their own, far from the main chains' 2k and 2k + 1 and the exact draws' 1000 + t.
  auto rngs = host::chain_streams<kCheckChains>(plan.seed, 5000 + 16 * index);
  auto step = [&](long t) {
    const BatchStatus<kCheckChains> s = batch.step(z, models, rngs);
    if (s.ok()) return true;
    for (int k = 0; k < kCheckChains; ++k) {
      if (!s[k]) {
        c.status = s[k];
        c.failure = common::format("chain %d, step %ld", k, t);
        break;
      }
    }
    return false;
  };
  const long burn = plan.burn_in_samples * thin;
  for (long t = 0; t < burn; ++t) {
    if (!step(t)) return c;
  }
  SplitRhat<double, D, kCheckChains> rhat(static_cast<std::uint64_t>(c.draws_per_chain));
  std::array<BatchMeansESS<double, D>, kCheckChains> ess;
  for (long i = 0; i < c.draws_per_chain; ++i) {
    for (long j = 0; j < thin; ++j) {
      if (!step(burn + i * thin + j)) return c;
    }
    for (int k = 0; k < kCheckChains; ++k) {
      const Vec x = z.position(k);
      rhat.push(static_cast<std::size_t>(k), x);
      ess[static_cast<std::size_t>(k)].push(x);
    }
  }
  Vec total = Vec::Zero();
  for (const auto& e : ess) total += e.ess();
  c.max_rhat = rhat.rhat().maxCoeff();
  c.min_ess = total.minCoeff();
  return c;
}

/// The convergence check of sampler `kind` on Target with the demo's settings (as run_chain),
/// through Batch<Sampler, 4>. The SG samplers see per-chain noisy gradients (each chain its own
/// noise stream); HMC the exact gradient and potential.
template <class Target>
Convergence check_convergence(Kind kind, const Plan& plan, std::uint64_t index) {
  constexpr int D = Target::dim;
  constexpr int K = kCheckChains;
  SamplerSettings st = Target::settings;
  const double sc = plan.step_scale;
  const Target model;
  const double v = plan.gradient_noise;
  auto noise = host::chain_streams<K>(plan.seed, 5000 + 16 * index + 8);
  using Noisy = NoisyGradient<Target, host::Rng>;
  const std::array<Noisy, K> noisy{Noisy(model, v, noise[0]), Noisy(model, v, noise[1]),
                                   Noisy(model, v, noise[2]), Noisy(model, v, noise[3])};
  const long gps = st.grads_per_sample;
  Convergence none;
  auto rejected = [&](Status s) {
    none.ran = true;
    none.status = s;
    none.failure = "parameters";
    return none;
  };
  // The SG samplers: V̂ = V, per-chain noisy gradients.
  auto noisy_check = [&](auto sampler) {
    if (auto c = sampler.set_gradient_noise(v); !c) return rejected(c);
    return run_check<Target>(plan, index, gps, Batch<decltype(sampler), K>(sampler),
                             per_chain(noisy));
  };
  switch (kind) {
    case Kind::SGLD: {
      typename SGLD<double, D>::Params p;
      p.step_size = st.sgld_step * sc;
      return noisy_check(SGLD<double, D>(p));
    }
    case Kind::SGHMC: {
      typename SGHMC<double, D>::Params p;
      p.step_size = st.sghmc_step * sc;
      p.friction = st.sghmc_friction;
      return noisy_check(SGHMC<double, D>(p));
    }
    case Kind::SGNHT: {
      typename SGNHT<double, D>::Params p;
      p.step_size = st.sgnht_step * sc;
      p.diffusion = st.sgnht_diffusion;
      return noisy_check(SGNHT<double, D>(p));
    }
    case Kind::HMC: {
      typename HMC<double, D>::Params p;
      p.step_size = st.hmc_step * sc;
      p.steps = st.hmc_leapfrog;
      HMC<double, D> s(p);
      if (auto c = s.status(); !c) return rejected(c);
      return run_check<Target>(plan, index, std::max<long>(1, gps / st.hmc_leapfrog),
                               Batch<HMC<double, D>, K>(s), model);
    }
    case Kind::SGD:
    case Kind::SGDMomentum:
      break;
  }
  return none;
}

}  // namespace sgmcmc::demo
