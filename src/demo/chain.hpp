// SPDX-License-Identifier: MIT
// Runs one sampler on one target through the run driver (run/driver.hpp): emulated gradient noise
// (MATH.md §5.3(a)), burn-in, thinning, the first steps kept for path plots, wall time per step
// from the host clock.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "common/table.hpp"
#include "demo/targets.hpp"
#include "sgmcmc/host/clock.hpp"
#include "sgmcmc/host/rng.hpp"
#include "sgmcmc/run/driver.hpp"
#include "sgmcmc/sgmcmc.hpp"

namespace sgmcmc::demo {

/// The samplers of the demo, in table order.
enum class Kind { SGLD, SGHMC, SGNHT, HMC, SGD, SGDMomentum };
inline constexpr Kind kAllKinds[] = {Kind::SGLD, Kind::SGHMC, Kind::SGNHT,
                                     Kind::HMC,  Kind::SGD,   Kind::SGDMomentum};

/// Display name of a sampler.
inline const char* kind_name(Kind k) {
  switch (k) {
    case Kind::SGLD:
      return "SGLD";
    case Kind::SGHMC:
      return "SGHMC";
    case Kind::SGNHT:
      return "SGNHT";
    case Kind::HMC:
      return "HMC";
    case Kind::SGD:
      return "SGD";
    case Kind::SGDMomentum:
      return "SGD-momentum";
  }
  return "?";
}

/// Zero-temperature baselines (MATH.md §2.3): they optimise, they do not sample.
inline bool is_optimiser(Kind k) {
  return k == Kind::SGD || k == Kind::SGDMomentum;
}

/// How long each chain runs; lengths count kept samples.
struct Plan {
  long samples = 200000;          ///< kept per chain
  long burn_in_samples = 10000;   ///< burn-in, in sample intervals (× thinning steps)
  int path_steps = 200;           ///< first steps recorded for the path plot (within burn-in)
  double gradient_noise = 1.0;    ///< V of g = ∇U + N(0, V I) (MATH.md §5.3(a))
  std::uint64_t seed = 20240601;  ///< base seed; each chain uses its own streams
  double step_scale = 1.0;        ///< multiplies every step size (SGD-momentum's η by its square)
};

/// What one chain produced.
struct ChainResult {
  Kind kind = Kind::SGLD;
  std::string params;           ///< the sampler's parameters, for the settings table
  int grads_per_step = 1;       ///< gradient evaluations per step (HMC: L)
  long thin = 1;                ///< steps between kept samples
  long steps = 0;               ///< steps run, burn-in included
  std::vector<double> samples;  ///< kept positions, dim numbers each
  std::vector<double> path;     ///< start and the first path_steps positions, dim numbers each
  double ns_per_step = 0.0;     ///< wall time per step: median over chunks of the sampling
  double seconds = 0.0;         ///< wall time of the whole run, burn-in included
  double accept_rate = -1.0;    ///< HMC only
  Status status;                ///< Ok, or the first failure
  long failed_step = -1;        ///< step index of that failure
  std::string failure;          ///< where it failed, in words
};

/// g = ∇U(θ) + N(0, V I), a fresh draw from its own RNG stream on every call.
template <class Model, class Rng>
class NoisyGradient {
 public:
  /// Wraps model (kept by reference) with noise of the given variance drawn from rng.
  NoisyGradient(const Model& model, double variance, Rng& rng)
      : model_(model), sd_(std::sqrt(variance)), rng_(&rng) {}
  /// g = ∇U(θ) + √V ζ, ζ ~ N(0, I) (θ, g: the engine's maps, or vectors).
  template <class Theta, class Grad>
  void gradient(const Theta& th, Grad& g) const noexcept {
    model_.gradient(th, g);
    Vector<double, Model::dim> n;
    fill_normal(*rng_, n);
    g += sd_ * n;
  }

 private:
  const Model& model_;
  double sd_;
  Rng* rng_;  // the noise stream advances through a const gradient()
};

/// Chunks of the sampling phase timed separately (ns/step is the median chunk's).
inline constexpr long kTimingChunks = 32;

/// Run-driver hook that records the first `steps` positions after the start (the path plot).
template <int Dim>
struct PathRecorder {
  std::vector<double>* path;
  long steps;
  template <class St>
  void after_step(std::uint64_t t, const St& z) {
    if (static_cast<long>(t) >= steps) return;
    const auto th = z.position();
    for (int d = 0; d < Dim; ++d) path->push_back(th[d]);
  }
};

/// Run-driver hook that counts HMC's accepted transitions (z.extra() after each step).
struct AcceptCounter {
  long accepted = 0;
  template <class St>
  void after_step(std::uint64_t, const St& z) noexcept {
    accepted += z.extra().accepted ? 1 : 0;
  }
};

/// Through the run driver (run/driver.hpp): a burn-in of max(plan.burn_in_samples · thin,
/// plan.path_steps) steps recording the start and the first plan.path_steps positions, then
/// plan.samples kept positions, one every `thin` steps, run in kTimingChunks timed pieces. `hooks`
/// sees every step of both phases (e.g. AcceptCounter).
template <class S, class St, class Model, class Hooks = NoHooks>
void run_loop(const Plan& plan, long thin, const S& sampler, St& z, const Model& model,
              host::Rng& rng, ChainResult& r, Hooks&& hooks = Hooks{}) {
  using Clock = host::Clock;
  constexpr int Dim = S::dim;
  r.thin = thin;
  r.samples.assign(static_cast<std::size_t>(plan.samples) * Dim, 0.0);
  r.path.clear();
  r.path.reserve(static_cast<std::size_t>(plan.path_steps + 1) * Dim);
  const long burn = std::max<long>(plan.burn_in_samples * thin, plan.path_steps);
  const std::uint64_t t0 = Clock::ticks();
  auto fail = [&](const RunResult& run, long first_step, const char* phase) {
    const long t = first_step + static_cast<long>(run.failed_at);
    r.steps = t;
    r.status = run.status;
    r.failed_step = t;
    r.failure = common::format("%s, step %ld", phase, t);
  };
  {
    const auto th = z.position();
    for (int d = 0; d < Dim; ++d) r.path.push_back(th[d]);
    PathRecorder<Dim> recorder{&r.path, plan.path_steps};
    auto both = both_hooks(recorder, hooks);
    const RunResult burned =
        run(sampler, z, model, rng, RunPlan{static_cast<std::uint64_t>(burn), 0, 1}, DiscardSink{},
            both);
    if (!burned.status) return fail(burned, 0, "burn-in");
  }
  // The sampling phase is timed in chunks; ns/step is the median chunk's, which shrugs off
  // bursts of other processes on a shared machine.
  std::vector<double> chunk_ns;
  chunk_ns.reserve(kTimingChunks + 1);
  const long per_chunk = std::max<long>(1, plan.samples / kTimingChunks);
  const double ns_per_tick = 1e9 / static_cast<double>(Clock::ticks_per_second());
  for (long k0 = 0; k0 < plan.samples; k0 += per_chunk) {
    const long k1 = std::min(plan.samples, k0 + per_chunk);
    double* out = r.samples.data() + static_cast<std::size_t>(k0) * Dim;
    PositionTrace<double, Dim> trace(out, static_cast<std::uint64_t>(k1 - k0));
    const std::uint64_t c0 = Clock::ticks();
    const RunResult chunk =
        run(sampler, z, model, rng,
            RunPlan{0, static_cast<std::uint64_t>(k1 - k0), static_cast<std::uint64_t>(thin)},
            trace, hooks);
    if (!chunk.status) return fail(chunk, burn + k0 * thin, "sampling");
    chunk_ns.push_back(ns_per_tick * static_cast<double>(Clock::ticks() - c0) /
                       static_cast<double>((k1 - k0) * thin));
  }
  r.steps = burn + plan.samples * thin;
  r.seconds = static_cast<double>(Clock::ticks() - t0) * ns_per_tick * 1e-9;
  std::nth_element(chunk_ns.begin(), chunk_ns.begin() + chunk_ns.size() / 2, chunk_ns.end());
  r.ns_per_step = chunk_ns.empty() ? 0.0 : chunk_ns[chunk_ns.size() / 2];
}

/// Runs sampler `kind` on Target with the target's settings. Sampler noise comes from stream
/// 2·chain of plan.seed, the emulated gradient noise from stream 2·chain + 1.
template <class Target>
ChainResult run_chain(Kind kind, const Plan& plan, std::uint64_t chain) {
  constexpr int D = Target::dim;
  using Vec = Vector<double, D>;
  SamplerSettings st = Target::settings;
  const double sc = plan.step_scale;
  st.sgld_step *= sc;
  st.sghmc_step *= sc;
  st.sgnht_step *= sc;
  st.hmc_step *= sc;
  st.sgd_rate *= sc;
  st.momentum_rate *= sc * sc;
  const Target model;
  host::Rng rng(plan.seed, 2 * chain);
  host::Rng noise_rng(plan.seed, 2 * chain + 1);
  const NoisyGradient<Target, host::Rng> noisy(model, plan.gradient_noise, noise_rng);
  const double v = plan.gradient_noise;
  Vec theta0;
  for (int d = 0; d < D; ++d) theta0[d] = Target::start[d];

  ChainResult r;
  r.kind = kind;
  const long gps = st.grads_per_sample;
  // A sampler whose parameters are rejected never steps: report its Status as the failure.
  auto rejected = [&](Status s, const char* what) {
    r.status = s;
    r.failure = what;
    return r;
  };
  switch (kind) {
    case Kind::SGLD: {
      typename SGLD<double, D>::Params p;
      p.step_size = st.sgld_step;
      SGLD<double, D> s(p);
      if (auto c = s.set_gradient_noise(v); !c) return rejected(c, "parameters");
      auto z = s.start(theta0);
      r.params = common::format("h = %g, D₀ = I, V̂ = %g", st.sgld_step, v);
      run_loop(plan, gps, s, z, noisy, rng, r);
      break;
    }
    case Kind::SGHMC: {
      typename SGHMC<double, D>::Params p;
      p.step_size = st.sghmc_step;
      p.friction = st.sghmc_friction;
      SGHMC<double, D> s(p);
      if (auto c = s.set_gradient_noise(v); !c) return rejected(c, "parameters");
      auto z = s.start(theta0);
      r.params = common::format("h = %g, C = %g, m = 1, V̂ = %g, kick–drift", st.sghmc_step,
                                st.sghmc_friction, v);
      run_loop(plan, gps, s, z, noisy, rng, r);
      break;
    }
    case Kind::SGNHT: {
      typename SGNHT<double, D>::Params p;
      p.step_size = st.sgnht_step;
      p.diffusion = st.sgnht_diffusion;
      SGNHT<double, D> s(p);
      if (auto c = s.set_gradient_noise(v); !c) return rejected(c, "parameters");
      auto z = s.start(theta0);
      r.params =
          common::format("h = %g, A = %g, V̂ = %g, ξ₀ = A", st.sgnht_step, st.sgnht_diffusion, v);
      run_loop(plan, gps, s, z, noisy, rng, r);
      break;
    }
    case Kind::HMC: {
      typename HMC<double, D>::Params p;
      p.step_size = st.hmc_step;
      p.steps = st.hmc_leapfrog;
      HMC<double, D> s(p);
      if (auto c = s.status(); !c) return rejected(c, "parameters");
      auto z = s.start(theta0);
      AcceptCounter accepted;
      r.grads_per_step = st.hmc_leapfrog;
      r.params = common::format("h = %g, L = %d, m = 1, Metropolis, exact ∇U", st.hmc_step,
                                st.hmc_leapfrog);
      run_loop(plan, std::max<long>(1, gps / st.hmc_leapfrog), s, z, model, rng, r, accepted);
      if (r.steps > 0) r.accept_rate = static_cast<double>(accepted.accepted) / r.steps;
      break;
    }
    case Kind::SGD: {
      typename SGD<double, D>::Params p;
      p.learning_rate = st.sgd_rate;
      SGD<double, D> s(p);
      if (auto c = s.status(); !c) return rejected(c, "parameters");
      auto z = s.start(theta0);
      r.params = common::format("learning rate %g (zero temperature)", st.sgd_rate);
      run_loop(plan, gps, s, z, noisy, rng, r);
      break;
    }
    case Kind::SGDMomentum: {
      typename SGDMomentum<double, D>::Params p;
      p.learning_rate = st.momentum_rate;
      p.momentum_decay = st.momentum_decay;
      SGDMomentum<double, D> s(p);
      if (auto c = s.status(); !c) return rejected(c, "parameters");
      auto z = s.start(theta0);
      r.params =
          common::format("η = %g, α = %g (zero temperature)", st.momentum_rate, st.momentum_decay);
      run_loop(plan, gps, s, z, noisy, rng, r);
      break;
    }
  }
  return r;
}

}  // namespace sgmcmc::demo
