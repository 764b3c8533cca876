// SPDX-License-Identifier: MIT
// Host-only: the per-dimension part of the posterior comparison (docs/stan-comparison.md) — the
// chains of every sampler on all rows of one data set, with the library's adaptation (adapt/),
// preconditioning (models/preconditioned.hpp) and control variates (data/control_variate.hpp).
#pragma once

#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "experiments/logreg_posterior.hpp"
#include "experiments/logreg_run.hpp"
#include "sgmcmc/adapt/dual_averaging.hpp"
#include "sgmcmc/adapt/sg_step_size.hpp"
#include "sgmcmc/adapt/sg_warmup.hpp"
#include "sgmcmc/adapt/windowed.hpp"
#include "sgmcmc/batch/batch.hpp"
#include "sgmcmc/data/control_variate.hpp"
#include "sgmcmc/data/minibatch.hpp"
#include "sgmcmc/host/rng.hpp"
#include "sgmcmc/host/streams.hpp"
#include "sgmcmc/models/logistic.hpp"
#include "sgmcmc/models/preconditioned.hpp"
#include "sgmcmc/samplers/nuts.hpp"
#include "sgmcmc/samplers/sghmc.hpp"
#include "sgmcmc/samplers/sgld.hpp"

namespace sgmcmc::logreg {

/// CPU time of the calling thread, in seconds (the machine is shared: wall time would count the
/// other processes).
inline double cpu_seconds_now() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

/// One prepared data set (all rows) with its geometry (MAP, Hessian: logreg_core.cpp).
struct PosteriorInput {
  const data::Dataset* data = nullptr;
  std::string name;
  Geometry geometry;
  double setup_seconds = 0.0;  ///< CPU time of the MAP and the Hessian
};

/// Runs every method of s.methods (out: one PosteriorRun per method, same order). Instantiated
/// for the six dimensions in the generated logreg_dim_<D>.cpp files.
template <int Dim>
void run_posterior(const PosteriorInput& in, const PosteriorSettings& s,
                   std::vector<PosteriorRun>& out);

namespace detail {

/// Pools K chains' kept draws (each kept × Dim, row-major) into per-coefficient mean, sd, bulk
/// ESS.
inline void summarise_chains(const std::vector<std::vector<double>>& chains, int dim,
                             PosteriorRun& run) {
  std::size_t n = chains.empty() ? 0 : chains[0].size() / std::size_t(dim);
  for (const auto& c : chains) n = std::min(n, c.size() / std::size_t(dim));
  run.kept = n * chains.size();
  run.mean.assign(std::size_t(dim), 0.0);
  run.sd.assign(std::size_t(dim), 0.0);
  run.ess.assign(std::size_t(dim), 0.0);
  run.rhat.assign(std::size_t(dim), 0.0);
  if (n < 4) {
    run.ok = false;
    run.error = "fewer than 4 kept draws per chain";
    return;
  }
  std::vector<std::vector<double>> per(chains.size(), std::vector<double>(n));
  for (int j = 0; j < dim; ++j) {
    double sum = 0.0;
    for (std::size_t c = 0; c < chains.size(); ++c) {
      for (std::size_t t = 0; t < n; ++t) {
        per[c][t] = chains[c][t * std::size_t(dim) + std::size_t(j)];
        sum += per[c][t];
      }
    }
    const double m = sum / double(run.kept);
    double ss = 0.0;
    for (const auto& c : per) {
      for (double v : c) ss += (v - m) * (v - m);
    }
    run.mean[std::size_t(j)] = m;
    run.sd[std::size_t(j)] = std::sqrt(ss / double(run.kept - 1));
    run.ess[std::size_t(j)] = ess_bulk(per);
    run.rhat[std::size_t(j)] = split_rhat(per);
  }
}

/// NUTS in the whitened coordinates of the Laplace approximation, Stan's windowed warm-up: dual
/// averaging of h on every warm-up transition, the dense metric re-estimated at the end of each
/// slow window (the chain is carried across by θ), h frozen at the averaged value afterwards.
template <int Dim, class LR>
void nuts_chain(const PosteriorInput& in, const PosteriorSettings& s, const LR& lr, host::Rng& rng,
                std::vector<double>& draws, PosteriorRun& run) {
  using Vec = Vector<double, Dim>;
  using Mat = Matrix<double, Dim, Dim>;
  const Geometry& g = in.geometry;
  Vec map;
  Mat hess;
  for (Index i = 0; i < Dim; ++i) {
    map[i] = g.map[i];
    for (Index j = 0; j < Dim; ++j) hess(i, j) = g.hessian(i, j);
  }
  OwnedPreconditioned<LR, double, Dim, true> pm(lr);
  if (!pm.set_precision(map, hess)) {
    run.error = "the Hessian at the MAP is not positive definite";
    return;
  }
  NUTS<double, Dim> sampler;
  DualAveraging<double> da({s.nuts_target, 0.05, 10.0, 0.75});
  double h = 0.5;
  static_cast<void>(da.restart(h));
  static_cast<void>(sampler.set_step_size(h));
  auto z = sampler.start(Vec::Zero().eval());
  WindowedMetric<double, Dim, true> windows(s.nuts_warmup);
  Mat cov;
  const std::size_t total = s.nuts_warmup + s.nuts_draws;
  std::uint64_t leapfrogs = 0, hits = 0;
  for (std::size_t t = 0; t < total; ++t) {
    if (Status st = sampler.step(z, pm, rng); !st) {
      run.error = std::string(st.message()) + " at NUTS transition " + std::to_string(t);
      return;
    }
    const typename NUTS<double, Dim>::Info info = z.extra();
    run.gradient_evals += std::uint64_t(info.leapfrog_steps + 1) * lr.rows();
    if (t < s.nuts_warmup) {
      h = da.update(double(info.accept_stat));
      const Vec theta = pm.position(z.position());
      if (windows.add(theta, cov) && s.nuts_windows) {
        if (pm.set_covariance(map, cov)) {
          z.position() = pm.whiten(theta);
          static_cast<void>(da.restart(h));
        }
      }
      if (t + 1 == s.nuts_warmup) h = da.averaged_step_size();
      static_cast<void>(sampler.set_step_size(h));
    } else {
      leapfrogs += std::uint64_t(info.leapfrog_steps);
      hits += info.max_depth ? 1 : 0;
      run.divergent += info.divergent ? 1 : 0;
      const Vec theta = pm.position(z.position());
      draws.insert(draws.end(), theta.data(), theta.data() + Dim);
    }
  }
  run.step_size += sampler.step_size();
  run.leapfrog += double(leapfrogs) / double(std::max<std::size_t>(1, s.nuts_draws));
  run.treedepth_hit += double(hits) / double(std::max<std::size_t>(1, s.nuts_draws));
}

/// The SG-CV census (PosteriorSettings::sg_census_leverage): the rows whose leverage
/// x_iᵀH⁻¹x_i exceeds s.sg_census_leverage times the median leverage, at most s.sg_census_max and
/// fewer than rows − n, in increasing order; empty when the setting is 0.
template <class LR, class Mat>
std::vector<std::uint32_t> census_rows(const LR& lr, const Mat& hess, const PosteriorSettings& s,
                                       std::size_t n) {
  const std::size_t rows = lr.rows();
  if (!(s.sg_census_leverage > 0.0) || rows <= n + 1) return {};
  const Eigen::LLT<Mat> llt(hess);
  std::vector<double> lev(rows);
  for (std::size_t i = 0; i < rows; ++i) {
    const Eigen::Matrix<typename Mat::Scalar, Mat::RowsAtCompileTime, 1> x = lr.row(i).transpose();
    lev[i] = double(x.dot(llt.solve(x)));
  }
  std::vector<double> sorted = lev;
  std::nth_element(sorted.begin(), sorted.begin() + std::ptrdiff_t(rows / 2), sorted.end());
  const double cut = s.sg_census_leverage * sorted[rows / 2];
  const std::size_t above =
      std::size_t(std::count_if(lev.begin(), lev.end(), [cut](double v) { return v > cut; }));
  const std::size_t k = std::min({above, s.sg_census_max, rows - n - 1});
  if (k == 0) return {};
  std::vector<std::uint32_t> census(k);
  if (!largest_rows(lev.data(), rows, k, census.data())) return {};
  return census;
}

/// What differs between the stochastic-gradient chains.
enum class SGKind { SGHMC, SGLD, SGHMCHot };

/// The objects of one SG-CV chain (sg_cv_chains): its stream, control-variate gradient with its
/// row cache, preconditioner, minibatches, temperature probe, V̂ pairs, sampler and state.
template <int Dim, class LR>
struct SGCVChain {
  using Vec = Vector<double, Dim>;
  using CV = OwnedControlVariateGradient<LR, kBatchCapacity, double, Dim>;
  using Pre = OwnedPreconditioned<CV, double, Dim, true>;
  SGCVChain(const LR& lr, std::size_t n, const std::vector<std::uint32_t>& census,
            std::uint64_t seed, std::uint64_t stream, double h, double decay)
      : rng(seed, stream),
        cv(lr, lr.rows()),
        row_cache(cv.row_cache_size()),
        pm(cv),
        order(lr.rows() - census.size()),
        batches(order.data(), lr.rows(), n, census.data(), census.size()),
        probe(pm, &temp, &last_gradient),
        sghmc({h, decay / h, 1.0}),
        sgld(typename SGLD<double, Dim>::Params{h, {}}),
        zh(sghmc.start(Vec::Zero().eval())),
        zl(sgld.start(Vec::Zero().eval())) {}
  host::Rng rng;
  CV cv;
  std::vector<double> row_cache;  // σ(x_iᵀθ̂) per row: one dot product per difference
  Pre pm;
  std::vector<std::uint32_t> order;
  MinibatchSampler<kBatchCapacity> batches;
  ConfigurationalTemperature<double, Dim> temp;
  Vec last_gradient = Vec::Zero();  // the step's gradient, paired with a second batch's (V̂)
  TemperatureProbe<Pre, double, Dim> probe;
  SGHMC<double, Dim> sghmc;
  SGLD<double, Dim> sgld;
  typename SGHMC<double, Dim>::State zh;
  typename SGLD<double, Dim>::State zl;
};

/// SGHMC-CV / SGLD-CV, s.chains chains (chain c on stream first_stream + c): control-variate
/// gradients at the MAP, dense preconditioning by the Laplace approximation (optionally
/// re-estimated from each chain's warm-up draws in Stan's windows), one h for all chains adapted
/// by their pooled configurational temperature in doubling windows (the chains step through each
/// window in turn, then h moves), then frozen. Pooling makes each window's estimate the chains'
/// average, so no single chain's excursion decides h. draws[c] receives chain c's kept draws.
template <int Dim, class LR>
void sg_cv_chains(const PosteriorInput& in, const PosteriorSettings& s, const LR& lr, SGKind kind,
                  std::uint64_t first_stream, std::vector<std::vector<double>>& draws,
                  PosteriorRun& run) {
  using Vec = Vector<double, Dim>;
  using Mat = Matrix<double, Dim, Dim>;
  using Chain = SGCVChain<Dim, LR>;
  const Geometry& g = in.geometry;
  const std::size_t rows = lr.rows();
  Vec map;
  Mat hess;
  for (Index i = 0; i < Dim; ++i) {
    map[i] = g.map[i];
    for (Index j = 0; j < Dim; ++j) hess(i, j) = g.hessian(i, j);
  }
  const std::size_t batch = kind == SGKind::SGLD ? s.batch : s.sghmc_cv_batch;
  const std::size_t n = std::min(batch, std::min<std::size_t>(rows, kBatchCapacity));
  SGStepSizeParams<double> rule;
  rule.decay = s.sg_decay;
  rule.tolerance = s.sg_tolerance;
  const bool langevin = kind == SGKind::SGLD;
  const double order_p = langevin ? 1.0 : 2.0;
  double h = langevin ? sgld_initial_step(1.0, rule) : sghmc_initial_step(1.0, rule);
  if (kind == SGKind::SGHMCHot) h *= s.noadapt_factor;
  const std::vector<std::uint32_t> census = census_rows(lr, hess, s, n);
  run.census = census.size();
  std::vector<std::unique_ptr<Chain>> chains;
  for (std::size_t c = 0; c < s.chains; ++c) {
    chains.push_back(
        std::make_unique<Chain>(lr, n, census, s.seed, first_stream + c, h, rule.decay));
    Chain& k = *chains.back();
    if (!k.cv.set_row_cache(k.row_cache.data(), k.row_cache.size()) || !k.cv.set_reference(map) ||
        !k.cv.set_census(census.data(), census.size())) {
      run.error = "non-finite gradient at the MAP";
      return;
    }
    run.gradient_evals += rows;
    if (!k.pm.set_precision(map, hess)) {
      run.error = "the Hessian at the MAP is not positive definite";
      return;
    }
    if (!k.batches.valid()) {
      run.error = "invalid minibatch size";
      return;
    }
    k.temp.reset(Vec::Zero());
    if (!langevin) static_cast<void>(k.sghmc.refresh_momentum(k.zh, k.rng));
  }
  // A new batch, counted in per-example evaluations (one per row with the row cache, else two).
  auto next_batch = [&](Chain& k) {
    k.batches.next(k.rng, k.cv.batch());
    run.gradient_evals += (k.cv.row_cache_ready() ? 1 : 2) * (n + census.size());
  };
  auto step = [&](Chain& k) -> Status {
    next_batch(k);
    return langevin ? k.sgld.step(k.zl, k.probe, k.rng) : k.sghmc.step(k.zh, k.probe, k.rng);
  };
  auto eta = [&](const Chain& k) -> Vec {
    return langevin ? Vec(k.zl.position()) : Vec(k.zh.position());
  };
  auto set_h = [&](double hn) {
    h = hn;
    for (auto& k : chains) {
      if (langevin) {
        static_cast<void>(k->sgld.set_step_size(h));
      } else {
        static_cast<void>(k->sghmc.set_params({h, rule.decay / h, 1.0}));
      }
    }
  };
  // The gradient-noise correction (s.sg_noise_correction; not for the hot control): V̂ (diagonal,
  // in the whitened coordinates the sampler sees) from pairs of gradients at one point on
  // independent batches, every s.sg_noise_every-th warm-up step, pooled over the chains, applied
  // after each window and frozen for the sampling phase; the samplers then inject
  // N(0, h(2D − hV̂)), which removes the heat of the gradient noise. That needs hV̂ < 2D (SGLD:
  // D = 1; SGHMC: D = C = α/h), so h is capped at 90 % of the bound.
  const bool correct = s.sg_noise_correction && kind != SGKind::SGHMCHot;
  PairedNoiseEstimate<double, Dim> noise(0.0);  // running mean over the warm-up's pairs
  Vec eta_before, paired;
  // (The cap lowers the samplers' h only: the warm-up's next window starts from its own h.)
  auto apply_noise = [&]() {
    if (!correct || noise.count() == 0) return;
    const double vmax = noise.estimate().maxCoeff();
    if (vmax > 0.0) {
      const double cap = langevin ? 1.8 / vmax : std::sqrt(1.8 * rule.decay / vmax);
      if (h > cap) set_h(cap);
    }
    for (auto& k : chains) {
      const Status st = langevin ? k->sgld.set_gradient_noise(noise.estimate())
                                 : k->sghmc.set_gradient_noise(noise.estimate());
      static_cast<void>(st);  // refused (2D − hV̂ not ⪰ 0): no correction, the sampler unchanged
    }
  };
  // Warm-up: step-size windows (h not moved for the hot control; no warm-up steps: no windows, h
  // stays at the rule's start), and optionally the metric windows.
  SGStepSizeWarmup<double> warm(s.sg_warmup, std::min(s.sg_window, s.sg_warmup), h, order_p, rule,
                                s.sg_average, s.sg_validated);
  std::vector<WindowedMetric<double, Dim, true>> metrics(
      chains.size(), WindowedMetric<double, Dim, true>(
                         s.sg_warmup, {s.sg_warmup / 10, s.sg_warmup / 5, s.sg_warmup / 10}));
  Mat cov;
  std::size_t start = 0;
  // Each chain's state at the start of the window, restored when the window ran far too hot.
  std::vector<typename SGHMC<double, Dim>::State> saved_h;
  std::vector<typename SGLD<double, Dim>::State> saved_l;
  for (const auto& k : chains) {
    saved_h.push_back(k->zh);
    saved_l.push_back(k->zl);
  }
  std::size_t restarts = 0;
  while (!warm.done()) {
    const std::size_t w = warm.window_length();
    double t_sum = 0.0;
    std::size_t t_count = 0;
    Vec t_coords = Vec::Zero();  // each coordinate's T_j summed over the chains
    for (std::size_t c = 0; c < chains.size(); ++c) {
      Chain& k = *chains[c];
      saved_h[c] = k.zh;
      saved_l[c] = k.zl;
      k.temp.clear();
      for (std::size_t t = start; t < start + w; ++t) {
        const bool pair = correct && s.sg_noise_every > 0 && t % s.sg_noise_every == 0;
        if (pair) eta_before = eta(k);
        if (Status st = step(k); !st) {
          run.error = std::string(st.message()) + " at warm-up step " + std::to_string(t) +
                      " of chain " + std::to_string(c + 1);
          return;
        }
        if (pair) {
          next_batch(k);
          k.pm.gradient(eta_before, paired);
          static_cast<void>(noise.add(k.last_gradient, paired));
        }
        if (!s.sg_metric_windows) continue;  // (the dense Welford update costs Dim² a step)
        const Vec theta = k.pm.position(eta(k));
        if (metrics[c].add(theta, cov)) {
          if (k.pm.set_covariance(map, cov)) {
            const Vec e = k.pm.whiten(theta);
            if (langevin) {
              k.zl.position() = e;
            } else {
              k.zh.position() = e;
              static_cast<void>(k.sghmc.refresh_momentum(k.zh, k.rng));
            }
            k.temp.clear();
          }
        }
      }
      if (k.temp.count() > 0) {
        t_sum += k.temp.mean_temperature();
        t_coords += k.temp.temperature();
        ++t_count;
      }
    }
    start += w;
    // No temperature pairs (every chain's metric window just ended): h stays (T̄ = 1 + ε).
    const double pooled = t_count > 0 ? t_sum / double(t_count) : 1.0 + rule.tolerance;
    const double pooled_max =
        t_count > 0 ? t_coords.maxCoeff() / double(t_count) : 1.0 + rule.tolerance;
    const double next = warm.end_window(pooled);
    if (kind != SGKind::SGHMCHot) {
      set_h(next);
      // A window far too hot (or not finite), on average or in its worst coordinate, threw the
      // chains out of the posterior's bulk, where the smaller h alone may take longer than the
      // warm-up to bring them back: they restart from where the window began.
      if (!(pooled <= s.sg_restart_temperature) || !(pooled_max <= s.sg_restart_max_temperature)) {
        ++restarts;
        for (std::size_t c = 0; c < chains.size(); ++c) {
          chains[c]->zh = saved_h[c];
          chains[c]->zl = saved_l[c];
        }
      }
    }
    apply_noise();
  }
  run.restarts = restarts;
  // Sampling: h frozen; each chain's temperature over its whole run is reported (mean).
  const std::size_t thin =
      std::max<std::size_t>(1, s.sg_steps / std::max<std::size_t>(1, s.sg_kept));
  draws.assign(chains.size(), {});
  for (std::size_t c = 0; c < chains.size(); ++c) {
    Chain& k = *chains[c];
    k.temp.clear();
    for (std::size_t t = 0; t < s.sg_steps; ++t) {
      if (Status st = step(k); !st) {
        run.error = std::string(st.message()) + " at step " + std::to_string(t) + " of chain " +
                    std::to_string(c + 1);
        return;
      }
      if ((t + 1) % thin == 0) {
        const Vec theta = k.pm.position(eta(k));
        draws[c].insert(draws[c].end(), theta.data(), theta.data() + Dim);
      }
    }
    run.step_size += h;
    run.temperature += k.temp.mean_temperature();
  }
}

/// SGHMC as in the AUROC protocol (docs/experiments/logreg.md): plain minibatch gradients in θ,
/// h = ρ/√L with ρ = 0.2, C = α/h, α = 0.1, started at the MAP.
template <int Dim, class LR>
void sghmc_plain_chain(const PosteriorInput& in, const PosteriorSettings& s, const LR& lr,
                       host::Rng& rng, std::vector<double>& draws, PosteriorRun& run) {
  using Vec = Vector<double, Dim>;
  using MB = MinibatchGradient<LR, kBatchCapacity>;
  const std::size_t rows = lr.rows();
  const std::size_t n = std::min(s.batch, std::min<std::size_t>(rows, kBatchCapacity));
  std::vector<std::uint32_t> order(rows);
  MinibatchSampler<kBatchCapacity> batches(order.data(), rows, n);
  MB model(lr, rows);
  const double h = 0.2 / std::sqrt(in.geometry.lipschitz);
  SGHMC<double, Dim> sampler({h, 0.1 / h, 1.0});
  Vec map;
  for (Index i = 0; i < Dim; ++i) map[i] = in.geometry.map[i];
  auto z = sampler.start(map);
  const std::size_t total = s.sg_warmup + s.sg_steps;
  const std::size_t thin =
      std::max<std::size_t>(1, s.sg_steps / std::max<std::size_t>(1, s.sg_kept));
  for (std::size_t t = 0; t < total; ++t) {
    batches.next(rng, model.batch());
    run.gradient_evals += n;
    if (Status st = sampler.step(z, model, rng); !st) {
      run.error = std::string(st.message()) + " at step " + std::to_string(t);
      return;
    }
    if (t >= s.sg_warmup && (t - s.sg_warmup + 1) % thin == 0) {
      const Vec theta = z.position();
      draws.insert(draws.end(), theta.data(), theta.data() + Dim);
    }
  }
  run.step_size += h;
}

/// Chains of the batched plain SGHMC run.
inline constexpr std::size_t kPlainBatchChains = 4;

/// sghmc_plain_chain for kPlainBatchChains chains at once: one Batch<SGHMC, 4> (interleaved: the
/// four chains' coordinates side by side, batch/batch.hpp), chain k drawing its minibatches and
/// its noise from its own stream, host::Rng(seed, first_stream + k), in the same order as the
/// single chain does; so chain k's draws are bit for bit those of sghmc_plain_chain with that
/// stream (tests/posterior). draws[k] receives chain k's kept draws.
template <int Dim, class LR>
void sghmc_plain_batch(const PosteriorInput& in, const PosteriorSettings& s, const LR& lr,
                       std::uint64_t first_stream, std::vector<std::vector<double>>& draws,
                       PosteriorRun& run) {
  constexpr int K = int(kPlainBatchChains);
  using MB = MinibatchGradient<LR, kBatchCapacity>;
  using Sampler = SGHMC<double, Dim>;
  const std::size_t rows = lr.rows();
  const std::size_t n = std::min(s.batch, std::min<std::size_t>(rows, kBatchCapacity));
  std::vector<std::vector<std::uint32_t>> order(K, std::vector<std::uint32_t>(rows));
  std::vector<MinibatchSampler<kBatchCapacity>> batches;
  std::vector<MB> models;
  for (int k = 0; k < K; ++k) {
    batches.emplace_back(order[std::size_t(k)].data(), rows, n);
    models.emplace_back(lr, rows);
  }
  const double h = 0.2 / std::sqrt(in.geometry.lipschitz);
  const Batch<Sampler, K> batch(Sampler({h, 0.1 / h, 1.0}));
  static typename Batch<Sampler, K>::State z;  // K · 2 copies of z: static, not on the stack
  Vector<double, Dim> map;
  for (Index i = 0; i < Dim; ++i) map[i] = in.geometry.map[i];
  if (Status st = batch.start(z, map); !st) {
    run.error = std::string(st.message()) + " at the start";
    return;
  }
  auto rngs = host::chain_streams<K>(s.seed, first_stream);
  draws.assign(std::size_t(K), {});
  const std::size_t total = s.sg_warmup + s.sg_steps;
  const std::size_t thin =
      std::max<std::size_t>(1, s.sg_steps / std::max<std::size_t>(1, s.sg_kept));
  for (std::size_t t = 0; t < total; ++t) {
    for (std::size_t k = 0; k < std::size_t(K); ++k) {
      if (batches[k].next(rngs[k], models[k].batch()) != StatusCode::Ok) {
        run.error = "minibatch draw failed at step " + std::to_string(t);
        return;
      }
    }
    run.gradient_evals += n * std::uint64_t(K);
    const BatchStatus<K> st = batch.step(z, per_chain(models), rngs);
    for (int k = 0; k < K; ++k) {
      if (!st[k]) {
        run.error = std::string(st[k].message()) + " at step " + std::to_string(t) + " of chain " +
                    std::to_string(k);
        return;
      }
    }
    if (t >= s.sg_warmup && (t - s.sg_warmup + 1) % thin == 0) {
      for (int k = 0; k < K; ++k) {
        const Vector<double, Dim> theta = z.position(k);
        draws[std::size_t(k)].insert(draws[std::size_t(k)].end(), theta.data(), theta.data() + Dim);
      }
    }
  }
  run.step_size += h * K;
}

}  // namespace detail

template <int Dim>
void run_posterior(const PosteriorInput& in, const PosteriorSettings& s,
                   std::vector<PosteriorRun>& out) {
  using LR = LogisticRegression<double, Dim, int>;
  const data::Dataset& d = *in.data;
  const LR lr(d.x.data(), d.y.data(), d.rows, s.prior_sd);
  out.clear();
  for (std::size_t m = 0; m < s.methods.size(); ++m) {
    const PosteriorMethod id = s.methods[m];
    PosteriorRun run;
    run.method = id;
    run.setup_seconds = in.setup_seconds;
    std::vector<std::vector<double>> chains(s.chains);
    double seconds = in.setup_seconds;
    bool ok = true;
    const bool batched =
        id == PosteriorMethod::SGHMCPlain && s.batch_plain && s.chains == detail::kPlainBatchChains;
    const bool pooled = id == PosteriorMethod::SGHMCCV || id == PosteriorMethod::SGLDCV ||
                        id == PosteriorMethod::SGHMCCVNoAdapt;
    if (pooled) {
      // The chains adapt one shared h from their pooled temperature (sg_cv_chains).
      const detail::SGKind kind = id == PosteriorMethod::SGLDCV    ? detail::SGKind::SGLD
                                  : id == PosteriorMethod::SGHMCCV ? detail::SGKind::SGHMC
                                                                   : detail::SGKind::SGHMCHot;
      const double t0 = cpu_seconds_now();
      detail::sg_cv_chains<Dim>(in, s, lr, kind, 1000 * std::uint64_t(id) + 1, chains, run);
      seconds += cpu_seconds_now() - t0;
      ok = run.error.empty();
      if (s.progress) {
        s.progress(in.name + ": " + posterior_method_key(id) + ", " + std::to_string(s.chains) +
                   " chains");
      }
    } else if (batched) {
      // The four chains in one Batch (same draws as one after the other, chain by chain).
      const double t0 = cpu_seconds_now();
      detail::sghmc_plain_batch<Dim>(in, s, lr, 1000 * std::uint64_t(id) + 1, chains, run);
      seconds += cpu_seconds_now() - t0;
      ok = run.error.empty();
      if (s.progress) {
        for (std::size_t c = 0; c < s.chains; ++c) {
          s.progress(in.name + ": " + posterior_method_key(id) + " (one batch), chain " +
                     std::to_string(c + 1));
        }
      }
    }
    for (std::size_t c = 0; c < s.chains && ok && !batched && !pooled; ++c) {
      host::Rng rng(s.seed, 1000 * std::uint64_t(id) + c + 1);
      const double t0 = cpu_seconds_now();
      run.error.clear();
      switch (id) {
        case PosteriorMethod::NUTS:
          detail::nuts_chain<Dim>(in, s, lr, rng, chains[c], run);
          break;
        case PosteriorMethod::SGHMCCV:
        case PosteriorMethod::SGLDCV:
        case PosteriorMethod::SGHMCCVNoAdapt:
          break;  // pooled above
        case PosteriorMethod::SGHMCPlain:
          detail::sghmc_plain_chain<Dim>(in, s, lr, rng, chains[c], run);
          break;
      }
      seconds += cpu_seconds_now() - t0;
      ok = run.error.empty();
      if (s.progress) {
        s.progress(in.name + ": " + posterior_method_key(id) + ", chain " + std::to_string(c + 1));
      }
    }
    run.cpu_seconds = seconds;
    if (ok) {
      run.ok = true;
      const double k = double(s.chains);
      run.step_size /= k;
      run.temperature /= k;
      run.leapfrog /= k;
      run.treedepth_hit /= k;
      detail::summarise_chains(chains, Dim, run);
    }
    out.push_back(run);
  }
}

}  // namespace sgmcmc::logreg
