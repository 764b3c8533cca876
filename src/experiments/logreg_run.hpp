// SPDX-License-Identifier: MIT
// Host-only: the per-dimension part of the logistic-regression experiment — every sampler's chain
// on one train/test split, its gradient-evaluation count, AUROC and ESS
// (docs/experiments/logreg.md).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include <Eigen/Dense>

#include "experiments/logreg_core.hpp"
#include "sgmcmc/adapt/dual_averaging.hpp"
#include "sgmcmc/data/gradient_noise.hpp"
#include "sgmcmc/data/minibatch.hpp"
#include "sgmcmc/diagnostics/ess.hpp"
#include "sgmcmc/host/clock.hpp"
#include "sgmcmc/host/rng.hpp"
#include "sgmcmc/models/logistic.hpp"
#include "sgmcmc/sgmcmc.hpp"

// The samplers other engineers are adding: used when their headers exist (and are not switched
// off with -DSGMCMC_LOGREG_NO_<NAME> because they do not build); otherwise their rows read
// "not available".
#if __has_include("sgmcmc/samplers/sgmgt.hpp") && !defined(SGMCMC_LOGREG_NO_SGMGT)
#include "sgmcmc/samplers/sgmgt.hpp"
#define SGMCMC_LOGREG_HAVE_SGMGT 1
#else
#define SGMCMC_LOGREG_HAVE_SGMGT 0
#endif
#if __has_include("sgmcmc/samplers/sgrhmc.hpp") && !defined(SGMCMC_LOGREG_NO_SGRHMC)
#include "sgmcmc/samplers/sgrhmc.hpp"
#define SGMCMC_LOGREG_HAVE_SGRHMC 1
#else
#define SGMCMC_LOGREG_HAVE_SGRHMC 0
#endif
#if __has_include("sgmcmc/samplers/nuts.hpp") && !defined(SGMCMC_LOGREG_NO_NUTS)
#include "sgmcmc/samplers/nuts.hpp"
#define SGMCMC_LOGREG_HAVE_NUTS 1
#else
#define SGMCMC_LOGREG_HAVE_NUTS 0
#endif

namespace sgmcmc::logreg {

/// Compile-time minibatch capacity (Settings::batch_max must not exceed it).
inline constexpr int kBatchCapacity = 512;

/// Geometry of one training set, computed once per split (logreg_core.cpp).
struct Geometry {
  bool ok = false;
  std::string error;
  double lipschitz = 0.0;            ///< λ_max(XᵀX)/4 + 1/s²: bound on the Hessian of U
  Eigen::VectorXd map;               ///< MAP by Newton's method
  double map_potential = 0.0;        ///< U(MAP)
  Eigen::MatrixXd hessian;           ///< Ĥ = XᵀWX + I/s² at the MAP (W = diag σ(1 − σ))
  Eigen::MatrixXd cholesky_inverse;  ///< L⁻¹ with Ĥ = LLᵀ (NUTS whitening)
  Eigen::VectorXd whitened_origin;   ///< ψ of θ = 0: −Lᵀθ̂
  double lambda_diag = 0.0;          ///< λ_max(D^{-1/2}(XᵀX/4 + I/s²)D^{-1/2}), D = diag(Ĥ)
  Eigen::VectorXd example_var;  ///< S²_j: variance (N − 1) of the per-example gradients at the MAP
};

/// MAP (Newton's method), Hessian there, its Cholesky whitening, the Lipschitz bound and the
/// per-example gradient variance at the MAP, for a prepared data set (logreg_core.cpp).
Geometry analyse(const data::Dataset& train, double prior_sd);

/// One split ready to run: the prepared parts, their geometry and the derived settings.
struct SplitInput {
  const data::Dataset* train = nullptr;
  const data::Dataset* test = nullptr;
  Geometry geometry;
  DatasetConfig config;
  std::size_t split = 0;
};

/// Whether a method's sampler is compiled in; *note says why not.
bool method_available(MethodId id, std::string* note);

/// Runs every method of settings.methods on one split (out: one Run per method, same order).
/// Instantiated for the six dimensions in generated logreg_dim_<D>.cpp files.
template <int Dim>
void run_split(const SplitInput& in, const Settings& settings, std::vector<Run>& out);

/// Calls f(std::integral_constant<int, D>{}) for the experiment's dimension D = cols (7, 8, 14,
/// 15, 25 or 86, the instantiations logreg.cmake generates); false, and no call, for any other.
template <class F>
bool with_dimension(std::size_t cols, F&& f) {
  switch (cols) {
    case 7:
      f(std::integral_constant<int, 7>{});
      return true;
    case 8:
      f(std::integral_constant<int, 8>{});
      return true;
    case 14:
      f(std::integral_constant<int, 14>{});
      return true;
    case 15:
      f(std::integral_constant<int, 15>{});
      return true;
    case 25:
      f(std::integral_constant<int, 25>{});
      return true;
    case 86:
      f(std::integral_constant<int, 86>{});
      return true;
    default:
      return false;
  }
}

namespace detail {

using RowVectord = Eigen::Matrix<double, 1, Eigen::Dynamic>;

/// AUROC and ESS of a chain's kept draws (draws: kept × dim, row-major).
void finish_run(const std::vector<double>& draws, int dim, const data::Dataset& test, Run& run);

/// Seconds since a host::Clock tick count.
inline double seconds_since(std::uint64_t t0) {
  return double(host::Clock::ticks() - t0) / double(host::Clock::ticks_per_second());
}

/// The LR model as the minibatch adaptor sees it, with a running count of per-example gradients.
template <class Inner>
struct Counted {
  Inner inner;
  std::uint64_t* count;
  auto& batch() noexcept { return inner.batch(); }
  template <class V>
  void gradient(const V& theta, V& out) const noexcept {
    inner.gradient(theta, out);
    *count += inner.batch().size;
  }
};

/// The negative control: the minibatch gradient with its sign flipped.
template <class Inner>
struct Flipped {
  Inner inner;
  auto& batch() noexcept { return inner.batch(); }
  template <class V>
  void gradient(const V& theta, V& out) const noexcept {
    inner.gradient(theta, out);
    out = -out;
  }
};

/// G⁻¹ = diag(ginv), constant: SGRHMC's metric in this experiment (Γ is then exactly 0; the
/// engine's automatic differentiation confirms it at the cost of one direction).
template <int Dim>
struct ConstantInverseDiagonal {
  Vector<double, Dim> ginv = Vector<double, Dim>::Ones();
  template <class T, int N>
  Vector<T, N> operator()(const Vector<T, N>&) const noexcept {
    return ginv.template cast<T>();
  }
};

/// The full-data model in the whitened parametrisation θ = θ̂ + L⁻ᵀψ (Ĥ = LLᵀ at the MAP), so
/// that NUTS with a unit mass sees a posterior close to N(0, I). Counts N per-example gradients
/// per gradient call; the potential at the point of the last gradient comes from the same pass.
template <int Dim>
struct WhitenedModel {
  using Vec = Vector<double, Dim>;
  const LogisticRegression<double, Dim, int>* model;
  Vec center;
  Eigen::Matrix<double, Dim, Dim> linv;  // L⁻¹ (lower triangular)
  std::uint64_t* count;
  mutable Vec cached_psi;
  mutable double cached_u = 0.0;
  mutable bool cached = false;

  Vec theta(const Vec& psi) const { return center + linv.transpose() * psi; }
  void gradient(const Vec& psi, Vec& g) const noexcept {
    Vec gt;
    cached_u = model->potential_and_gradient(theta(psi), gt);
    cached_psi = psi;
    cached = true;
    g.noalias() = linv * gt;
    *count += model->rows();
  }
  double potential(const Vec& psi) const noexcept {
    if (cached && psi == cached_psi) return cached_u;
    return model->potential(theta(psi));
  }
};

/// Shared loop of the stochastic-gradient chains: per step `before()` (V̂ hand-over), a fresh
/// minibatch into model.batch(), `step(z)`; draws recorded after the burn-in, evenly thinned.
template <int Dim, class State, class Model, class Step, class Before>
void sg_chain(const SplitInput& in, const Settings& s, host::Rng& rng, Model& model, State& z,
              std::uint64_t* count, Step&& step, Before&& before, Run& run) {
  const std::size_t n_rows = in.train->rows;
  std::vector<std::uint32_t> order(n_rows);
  MinibatchSampler<kBatchCapacity> batches(order.data(), n_rows, in.config.batch);
  if (!batches.valid()) {
    run.error = "invalid minibatch size";
    return;
  }
  const std::size_t steps = s.sg_steps;
  const auto burn = static_cast<std::size_t>(std::floor(s.burn_in * double(steps)));
  const std::size_t after = steps > burn ? steps - burn : 0;
  const std::size_t thin = std::max<std::size_t>(1, (after + s.max_kept - 1) / s.max_kept);
  std::vector<double> draws;
  draws.reserve((after / thin + 1) * std::size_t(Dim));
  const std::uint64_t t0 = host::Clock::ticks();
  run.ok = true;
  for (std::size_t t = 0; t < steps; ++t) {
    before();
    batches.next(rng, model.batch());
    const Status st = step(z);
    if (!st) {
      run.ok = false;
      run.error = std::string(st.message()) + " at step " + std::to_string(t);
      break;
    }
    ++run.iterations;
    if (t >= burn && (t - burn) % thin == 0) {
      const auto th = z.position();
      draws.insert(draws.end(), th.data(), th.data() + Dim);
    }
  }
  run.seconds = seconds_since(t0);
  run.gradient_evals = *count;
  if (run.ok) finish_run(draws, Dim, *in.test, run);
}

/// A stochastic-gradient chain with the online V̂ (gradient_noise.hpp): before each step the
/// estimate from the previous batches goes to the sampler through the clip policy.
template <int Dim, class Sampler, class LR, class State>
void vhat_chain(const SplitInput& in, const Settings& s, host::Rng& rng, const LR& lr,
                Sampler& sampler, State& z, std::uint64_t* count, Run& run) {
  typename GradientNoiseEstimator<double, Dim>::Params ep;
  ep.smoothing = s.vhat_smoothing;
  GradientNoiseEstimator<double, Dim> est(ep);
  using Tracking = NoiseTrackingGradient<LR, kBatchCapacity, double, Dim>;
  Counted<Tracking> tracked{Tracking(lr, in.train->rows, &est), count};
  const Vector<double, Dim> limit = gradient_noise_limit(sampler);
  sg_chain<Dim>(
      in, s, rng, tracked, z, count, [&](auto& st) { return sampler.step(st, tracked, rng); },
      [&] { static_cast<void>(est.apply(sampler, limit)); }, run);
  run.vhat_limited = est.limited_steps();
  run.vhat_fallbacks = est.fallbacks();
  run.vhat_limited_coords =
      est.applied() > 0 ? double(est.limited_coordinates()) / double(est.applied() * Dim) : 0.0;
  run.vhat_heat = est.estimate().cwiseQuotient(limit).maxCoeff();
}

}  // namespace detail

template <int Dim>
void run_split(const SplitInput& in, const Settings& s, std::vector<Run>& out) {
  using Vec = Vector<double, Dim>;
  using LR = LogisticRegression<double, Dim, int>;
  using Batched = MinibatchGradient<LR, kBatchCapacity>;
  const data::Dataset& train = *in.train;
  const LR lr(train.x.data(), train.y.data(), train.rows, s.prior_sd);
  const DatasetConfig& c = in.config;
  Vec theta0 = Vec::Zero();
  if (s.start_at_map) {
    for (Index j = 0; j < Dim; ++j) theta0[j] = in.geometry.map[j];
  }
  auto nothing = [] {};

  out.clear();
  for (std::size_t m = 0; m < s.methods.size(); ++m) {
    const MethodId id = s.methods[m];
    Run run;
    std::uint64_t count = 0;
    // One independent stream per (split, method).
    host::Rng rng(s.seed, 64 * in.split + std::uint64_t(id) + 1);
    detail::Counted<Batched> counted{Batched(lr, train.rows), &count};
    std::string note;
    if (!method_available(id, &note)) {
      run.error = note;
      out.push_back(run);
      continue;
    }
    switch (id) {
      case MethodId::SGLD:
      case MethodId::SGLDFlipped: {
        typename SGLD<double, Dim>::Params p;
        p.step_size = c.h_sgld;
        const SGLD<double, Dim> sampler(p);
        auto z = sampler.start(theta0);
        if (id == MethodId::SGLD) {
          detail::sg_chain<Dim>(
              in, s, rng, counted, z, &count,
              [&](auto& st) { return sampler.step(st, counted, rng); }, nothing, run);
        } else {
          detail::Flipped<detail::Counted<Batched>> flipped{counted};
          detail::sg_chain<Dim>(
              in, s, rng, flipped, z, &count,
              [&](auto& st) { return sampler.step(st, flipped, rng); }, nothing, run);
        }
        break;
      }
      case MethodId::SGHMC:
      case MethodId::SGHMCVhat: {
        typename SGHMC<double, Dim>::Params p;
        p.step_size = c.h_momentum;
        p.friction = c.friction;
        SGHMC<double, Dim> sampler(p);
        auto z = sampler.start(theta0);
        if (id == MethodId::SGHMC) {
          detail::sg_chain<Dim>(
              in, s, rng, counted, z, &count,
              [&](auto& st) { return sampler.step(st, counted, rng); }, nothing, run);
        } else {
          detail::vhat_chain<Dim>(in, s, rng, lr, sampler, z, &count, run);
        }
        break;
      }
      case MethodId::SGNHT:
      case MethodId::SGNHTVhat: {
        typename SGNHT<double, Dim>::Params p;
        p.step_size = c.h_momentum;
        p.diffusion = c.friction;
        SGNHT<double, Dim> sampler(p);
        auto z = sampler.start(theta0);
        if (id == MethodId::SGNHT) {
          detail::sg_chain<Dim>(
              in, s, rng, counted, z, &count,
              [&](auto& st) { return sampler.step(st, counted, rng); }, nothing, run);
        } else {
          detail::vhat_chain<Dim>(in, s, rng, lr, sampler, z, &count, run);
        }
        break;
      }
      case MethodId::SGMGT1:
      case MethodId::SGMGT2: {
#if SGMCMC_LOGREG_HAVE_SGMGT
        const int a = id == MethodId::SGMGT1 ? 1 : 2;
        typename SGMGT<double, Dim>::Params p;
        p.step_size = c.h_momentum;
        p.shape = a;
        p.mass = 1.0;
        p.softness = a == 1 ? 5.0 : 3.0;
        p.diffusion = c.friction;
        p.resample_period = 50;
        const SGMGT<double, Dim> sampler(p);
        auto z = sampler.start(theta0, rng);
        detail::sg_chain<Dim>(
            in, s, rng, counted, z, &count,
            [&](auto& st) { return sampler.step(st, counted, rng); }, nothing, run);
#endif
        break;
      }
      case MethodId::SGMGTD1:
      case MethodId::SGMGTD2: {
#if SGMCMC_LOGREG_HAVE_SGMGT
        const int a = id == MethodId::SGMGTD1 ? 1 : 2;
        typename SGMGTD<double, Dim>::Params p;
        p.step_size = c.h_momentum;
        p.shape = a;
        p.mass = 1.0;
        p.softness = a == 1 ? 5.0 : 3.0;
        p.sigma_theta = c.sigma_theta;
        p.sigma_p = c.friction;
        p.sigma_xi = 0.01;
        p.gamma = a == 1 ? 1e-3 : 1.0;
        p.resample_period = 50;
        const SGMGTD<double, Dim> sampler(p);
        auto z = sampler.start(theta0, rng);
        detail::sg_chain<Dim>(
            in, s, rng, counted, z, &count,
            [&](auto& st) { return sampler.step(st, counted, rng); }, nothing, run);
#endif
        break;
      }
      case MethodId::SGRHMC: {
#if SGMCMC_LOGREG_HAVE_SGRHMC
        using MetricT = InverseMetric<DiagonalShape, detail::ConstantInverseDiagonal<Dim>, true>;
        typename SGRHMC<double, Dim, MetricT>::Params p;
        p.step_size = c.h_sgrhmc;
        for (Index j = 0; j < Dim; ++j) {
          p.metric.fn.ginv[j] = c.sgrhmc_c / in.geometry.hessian(j, j);
        }
        const SGRHMC<double, Dim, MetricT> sampler(p);
        auto z = sampler.start(theta0);
        detail::sg_chain<Dim>(
            in, s, rng, counted, z, &count,
            [&](auto& st) { return sampler.step(st, counted, rng); }, nothing, run);
#endif
        break;
      }
      case MethodId::NUTS: {
#if SGMCMC_LOGREG_HAVE_NUTS
        detail::WhitenedModel<Dim> wm{&lr, Vec::Zero(), {}, &count, Vec::Zero()};
        for (Index j = 0; j < Dim; ++j) wm.center[j] = in.geometry.map[j];
        for (Index i = 0; i < Dim; ++i) {
          for (Index j = 0; j < Dim; ++j) wm.linv(i, j) = in.geometry.cholesky_inverse(i, j);
        }
        // Step size: Stan's dual averaging (adapt/dual_averaging.hpp: δ = 0.8, γ = 0.05, t₀ = 10,
        // κ = 0.75) on the transitions of the burn-in, from h₀ = nuts_step; frozen at the
        // averaged value afterwards.
        typename NUTS<double, Dim>::Params p;
        p.step_size = s.nuts_step;
        DualAveraging<double> adapt;
        static_cast<void>(adapt.restart(s.nuts_step));
        bool adapting = true;
        // Start where every other chain starts: ψ₀ = 0 at the MAP, Lᵀ(0 − θ̂) at θ = 0.
        Vec psi0 = Vec::Zero();
        if (!s.start_at_map) {
          for (Index j = 0; j < Dim; ++j) psi0[j] = in.geometry.whitened_origin[j];
        }
        NUTS<double, Dim> sampler(p);
        auto z = sampler.start(psi0);
        const std::uint64_t budget = c.budget;
        const auto burn = static_cast<std::uint64_t>(std::floor(s.burn_in * double(budget)));
        std::vector<double> draws;
        std::uint64_t leapfrogs = 0;
        double accept = 0.0;
        std::size_t sampled = 0;
        const std::uint64_t t0 = host::Clock::ticks();
        run.ok = true;
        while (count < budget) {
          Status st = StatusCode::Ok;
          if (adapting && count > burn) {  // end of the burn-in: freeze h
            adapting = false;
            st = sampler.set_step_size(adapt.averaged_step_size());
          } else if (adapting) {
            st = sampler.set_step_size(adapt.step_size());
          }
          if (st) st = sampler.step(z, wm, rng);
          if (!st) {
            run.ok = false;
            run.error =
                std::string(st.message()) + " at transition " + std::to_string(run.iterations);
            break;
          }
          ++run.iterations;
          const typename NUTS<double, Dim>::Info info = z.extra();
          if (adapting) {
            static_cast<void>(adapt.update(double(info.accept_stat)));
          } else {
            ++sampled;
            leapfrogs += std::uint64_t(info.leapfrog_steps);
            accept += double(info.accept_stat);
            run.nuts_divergent += info.divergent ? 1 : 0;
            const Vec th = wm.theta(z.position());
            draws.insert(draws.end(), th.data(), th.data() + Dim);
          }
        }
        run.nuts_step = sampler.step_size();
        // A budget that ends inside the burn-in (quick runs on Caravan) still yields the final
        // state as the only draw: AUROC from it, ESS undefined.
        if (run.ok && draws.empty() && run.iterations > 0) {
          const Vec th = wm.theta(z.position());
          draws.assign(th.data(), th.data() + Dim);
        }
        run.seconds = detail::seconds_since(t0);
        run.gradient_evals = count;
        if (sampled > 0) {
          run.nuts_mean_leapfrog = double(leapfrogs) / double(sampled);
          run.nuts_accept = accept / double(sampled);
        }
        // Evenly thin to max_kept when the chain is longer (rare: NUTS gets few transitions).
        const std::size_t k = draws.size() / std::size_t(Dim);
        if (k > s.max_kept) {
          std::vector<double> thinned;
          for (std::size_t i = 0; i < s.max_kept; ++i) {
            const std::size_t src = i * k / s.max_kept;
            thinned.insert(thinned.end(), draws.begin() + std::ptrdiff_t(src * Dim),
                           draws.begin() + std::ptrdiff_t((src + 1) * Dim));
          }
          draws.swap(thinned);
        }
        if (run.ok) detail::finish_run(draws, Dim, *in.test, run);
#endif
        break;
      }
    }
    out.push_back(run);
    if (s.progress) {
      s.progress(std::string(method_name(id)) + ", split " + std::to_string(in.split + 1));
    }
  }
}

}  // namespace sgmcmc::logreg
