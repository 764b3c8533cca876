// SPDX-License-Identifier: MIT
// sgmcmc_recipe_fig2: the recipe paper's Figure 2 (Ma, Chen & Fox 2015; MATH.md §5.1): KL of
// SGLD, SGHMC, naive SGRHMC and gSGRHMC on two 1-D targets, and the banana's paths and KL curves.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "common/cli.hpp"
#include "common/density_grid.hpp"
#include "common/gnuplot.hpp"
#include "common/histogram.hpp"
#include "common/plots.hpp"
#include "common/table.hpp"
#include "sgmcmc/host/rng.hpp"
#include "sgmcmc/run/driver.hpp"
#include "sgmcmc/samplers/naive.hpp"
#include "sgmcmc/samplers/sghmc.hpp"
#include "sgmcmc/samplers/sgld.hpp"
#include "sgmcmc/samplers/sgrhmc.hpp"

namespace {

namespace common = sgmcmc::common;
using common::format;
using sgmcmc::Vector;

constexpr const char* kUsage =
    "usage: sgmcmc_recipe_fig2 [--out DIR] [--quick] [--seed N] [--noise V] [--step H]\n"
    "                          [--banana-step H] [--no-plots] [--help]\n"
    "\n"
    "Reproduces Figure 2 of Ma, Chen & Fox (2015), 'A complete recipe for stochastic gradient\n"
    "MCMC' (shared MATH.md 5.1): KL divergence of SGLD, SGHMC, naive SGRHMC (Eq. 27) and gSGRHMC\n"
    "(Algorithm 1) on U = theta^2/2 and U = theta^4 - 2 theta^2 with synthetic gradient noise, "
    "and\n"
    "on the 2-D banana the first sampled points over contours and KL against steps. Prints the\n"
    "tables, writes results.md and PNGs (gnuplot). See docs/experiments/recipe-paper.md.\n"
    "\n"
    "  --out DIR    output directory (default out/recipe_fig2)\n"
    "  --quick      10x fewer steps (a few seconds)\n"
    "  --seed N     base seed (default 20150601)\n"
    "  --noise V    variance of the additive gradient noise (default 1)\n"
    "  --step H     1-D targets: one step size for every sampler (default 0.01); 0: each\n"
    "               sampler's KL-best step on the grid 0.0025 ... 0.32 (pilot run, other seed)\n"
    "  --banana-step H  banana: one step size for every sampler (default 0: KL-best on the grid)\n"
    "  --no-plots   tables only\n"
    "\n"
    "Exit status: 0 success, 1 a sampler step failed or an output could not be written, 2 bad\n"
    "arguments.\n";

struct Options {
  std::string out = "out/recipe_fig2";
  bool quick = false;
  bool plots = true;
  std::uint64_t seed = 20150601;
  double noise = 1.0;
  double step = 0.01;        // 1-D targets; <= 0: tune per sampler
  double banana_step = 0.0;  // banana; <= 0: tune per sampler
};

/// 0: run, 1: --help printed, 2: bad argument.
int parse(int argc, char** argv, Options& o) {
  sgmcmc::common::Args args(argc, argv, "sgmcmc_recipe_fig2", kUsage);
  while (args.next()) {
    if (args.is("--quick")) {
      o.quick = true;
    } else if (args.is("--no-plots")) {
      o.plots = false;
    } else if (!args.text("--out", o.out) && !args.count("--seed", o.seed) &&
               !args.number("--noise", o.noise, 0.0) && !args.number("--step", o.step, 0.0) &&
               !args.number("--banana-step", o.banana_step, 0.0)) {
      args.unknown();
    }
  }
  return args.status();
}

// ------------------------------------------------------------------------------ targets

/// U = θ²/2.
struct Gauss1 {
  static constexpr int dim = 1;
  static constexpr const char* name = "U = θ²/2";
  static constexpr double z = 2.5066282746310002;  // √(2π)
  template <class T>
  static T u(const Vector<T, 1>& t) {
    return T(0.5) * t[0] * t[0];
  }
  static void grad(const Vector<double, 1>& t, Vector<double, 1>& g) { g[0] = t[0]; }
};

/// U = θ⁴ − 2θ² (MATH.md §5.1: Z = 5.36516023783).
struct DoubleWell1 {
  static constexpr int dim = 1;
  static constexpr const char* name = "U = θ⁴ − 2θ²";
  static constexpr double z = 5.36516023783;
  template <class T>
  static T u(const Vector<T, 1>& t) {
    const T x2 = t[0] * t[0];
    return x2 * x2 - T(2) * x2;
  }
  static void grad(const Vector<double, 1>& t, Vector<double, 1>& g) {
    g[0] = 4 * t[0] * t[0] * t[0] - 4 * t[0];
  }
};

/// U = θ₁⁴/10 + (4(θ₂ + 1.2) − θ₁²)²/2 (MATH.md §5.1: Z = 2.02013792639).
struct Banana2 {
  static constexpr int dim = 2;
  static constexpr double z = 2.02013792639;
  template <class T>
  static T u(const Vector<T, 2>& t) {
    const T a2 = t[0] * t[0];
    const T s = T(4) * (t[1] + T(1.2)) - a2;
    return a2 * a2 / T(10) + s * s / T(2);
  }
  static void grad(const Vector<double, 2>& t, Vector<double, 2>& g) {
    const double s = 4 * (t[1] + 1.2) - t[0] * t[0];
    g[0] = 0.4 * t[0] * t[0] * t[0] - 2 * t[0] * s;
    g[1] = 4 * s;
  }
};

/// Where gSGRHMC's metric G(θ) = G(Ũ(θ)) takes its potential value from.
enum class MetricValue {
  SameBatch,   ///< Ũ of the gradient's own minibatch (the paper's construction)
  OtherBatch,  ///< Ũ′ of an independent minibatch (costs one more minibatch value per step)
  FullData,    ///< the exact U
};

/// The synthetic minibatch (MATH.md §5.3): the driver sets the batch noise n ~ N(0, V I) before
/// each step; the gradient is ∇U + n, the value consistent with it Ũ = U + nᵀθ. The potential()
/// the metric reads is Ũ (SameBatch), Ũ′ = U + n′ᵀθ with an independent n′ (OtherBatch) or U.
template <class Target>
struct Synthetic {
  static constexpr int D = Target::dim;
  Vector<double, D> n = Vector<double, D>::Zero();
  Vector<double, D> n_other = Vector<double, D>::Zero();
  MetricValue value = MetricValue::SameBatch;
  template <class T>
  T potential(const Vector<T, D>& t) const {
    T u = Target::u(t);
    if (value != MetricValue::FullData) {
      const Vector<double, D>& m = value == MetricValue::SameBatch ? n : n_other;
      for (int i = 0; i < D; ++i) u += T(m[i]) * t[i];
    }
    return u;
  }
  void gradient(const Vector<double, D>& t, Vector<double, D>& g) const {
    Target::grad(t, g);
    g += n;
  }
};

/// Exact i.i.d. draws of a 1-D density exp(−u) by inverse CDF on a fine grid of [lo, hi].
class InverseCdf {
 public:
  template <class U>
  InverseCdf(U u, double lo, double hi, int cells) : lo_(lo), dx_((hi - lo) / cells) {
    cum_.assign(static_cast<std::size_t>(cells) + 1, 0.0);
    for (int i = 0; i < cells; ++i) {
      const double a = lo + i * dx_;
      const double m = std::exp(-u(a)) + 4 * std::exp(-u(a + dx_ / 2)) + std::exp(-u(a + dx_));
      cum_[static_cast<std::size_t>(i) + 1] = cum_[static_cast<std::size_t>(i)] + m * dx_ / 6;
    }
    for (double& c : cum_) c /= cum_.back();
  }
  double draw(sgmcmc::host::Rng& rng) const {
    const double p = (static_cast<double>(rng() >> 11) + 0.5) * 1.1102230246251565e-16;
    const auto it = std::upper_bound(cum_.begin(), cum_.end(), p);
    const auto i = static_cast<std::size_t>(std::clamp<std::ptrdiff_t>(
                       it - cum_.begin(), 1, static_cast<std::ptrdiff_t>(cum_.size()) - 1)) -
                   1;
    const double w = cum_[i + 1] - cum_[i];
    return lo_ + (static_cast<double>(i) + (w > 0 ? (p - cum_[i]) / w : 0.5)) * dx_;
  }

 private:
  double lo_;
  double dx_;
  std::vector<double> cum_;
};

// ------------------------------------------------------------------------------ chains

/// Run-driver hook: before every step, the synthetic minibatch's noise n (and n′ for a metric
/// built from another batch) from its own stream, independent of the sampler's injected noise.
template <class Target>
struct BatchNoise {
  Synthetic<Target>* model;
  sgmcmc::host::Rng* noise_rng;
  double sd;
  void before_step(std::uint64_t) noexcept {
    Vector<double, Target::dim> e;
    noise_rng->fill_normal(e);
    model->n = sd * e;
    if (model->value == MetricValue::OtherBatch) {
      noise_rng->fill_normal(e);
      model->n_other = sd * e;
    }
  }
};

/// Runs burn + steps steps through the run driver; record(step, θ) after every step past the
/// burn-in.
template <class S, class Target, class Record>
bool run_chain(const S& s, Synthetic<Target>& model, sgmcmc::host::Rng& rng,
               sgmcmc::host::Rng& noise_rng, double sd, const Vector<double, S::dim>& theta0,
               long burn, long steps, Record&& record, bool quiet, const char* name) {
  auto z = s.start(theta0);
  BatchNoise<Target> batch{&model, &noise_rng, sd};
  auto sink = [&](const auto& st, std::uint64_t k) { record(long(k), st.position()); };
  const sgmcmc::RunResult r = sgmcmc::run(
      s, z, model, rng,
      sgmcmc::RunPlan{static_cast<std::uint64_t>(burn), static_cast<std::uint64_t>(steps), 1}, sink,
      batch);
  if (!r.status) {
    if (!quiet) {
      std::fprintf(stderr, "%s: step %llu failed: %s\n", name,
                   static_cast<unsigned long long>(r.failed_at), r.status.message());
    }
    return false;
  }
  return true;
}

/// The samplers of Figure 2, one row each. `value` only matters for the state-dependent ones.
struct Row {
  std::string name;
  std::string color;
  int kind;  // 0 SGLD, 1 SGHMC, 2 naive SGRHMC (Eq. 27), 3 gSGRHMC Alg. 1, 4 gSGRHMC kick–drift
             // (3, 4: analytic Γ from the step's gradient; 5, 6: the same with Γ by AD of Ũ′)
  MetricValue value;
};

std::vector<Row> rows_1d() {
  using V = MetricValue;
  return {{"SGLD", "#1f77b4", 0, V::SameBatch},
          {"SGHMC", "#ff7f0e", 1, V::SameBatch},
          {"naive SGRHMC (Eq. 27)", "#d62728", 2, V::SameBatch},
          {"gSGRHMC (Alg. 1)", "#2ca02c", 3, V::SameBatch},
          {"gSGRHMC (kick–drift)", "#17becf", 4, V::SameBatch},
          {"naive SGRHMC, G(Ũ′)", "#e377c2", 2, V::OtherBatch},
          {"gSGRHMC (Alg. 1), G(Ũ′)", "#bcbd22", 5, V::OtherBatch},
          {"gSGRHMC (kick–drift), G(Ũ′)", "#7f7f7f", 6, V::OtherBatch},
          {"naive SGRHMC, G(U)", "#ff9896", 2, V::FullData},
          {"gSGRHMC (Alg. 1), G(U)", "#8c564b", 3, V::FullData},
          {"gSGRHMC (kick–drift), G(U)", "#9467bd", 4, V::FullData}};
}

/// Dispatches on row.kind: builds the sampler (V̂ = noise variance) and runs it.
template <class Target, class Record>
bool run_row(const Row& row, const Options& o, double h, std::uint64_t seed, long burn, long steps,
             const Vector<double, Target::dim>& theta0, Record&& record, bool quiet = false) {
  constexpr int D = Target::dim;
  Synthetic<Target> model;
  model.value = row.value;
  sgmcmc::host::Rng rng(seed, 0);
  sgmcmc::host::Rng noise_rng(seed, 1);
  const double sd = std::sqrt(o.noise);
  auto go = [&](auto sampler) {
    if (!sampler.set_gradient_noise(o.noise)) {
      if (!quiet)
        std::fprintf(stderr, "%s, h = %g: 2D - h V-hat is not PSD\n", row.name.c_str(), h);
      return false;
    }
    return run_chain(sampler, model, rng, noise_rng, sd, theta0, burn, steps, record, quiet,
                     row.name.c_str());
  };
  sgmcmc::PotentialMetric<double> metric;  // D = 1.5, C = 0.5, floor 0.01 (MATH.md §5.1)
  switch (row.kind) {
    case 0:
      return go(sgmcmc::SGLD<double, D>({h, sgmcmc::Scaled<double>{1.0}}));
    case 1:
      return go(sgmcmc::SGHMC<double, D>({h, 1.0, 1.0}));
    case 2:
      return go(sgmcmc::NaiveGSGRHMC<double, D>({h, metric}));
    case 3:
      return go(sgmcmc::GSGRHMC<double, D>({h, metric}));
    case 4:
      return go(sgmcmc::GSGRHMC<double, D, sgmcmc::PotentialMetricSqrtDivergence<double>,
                                sgmcmc::KickDrift>({h, metric}));
    case 5:
      return go(sgmcmc::GSGRHMC<double, D, sgmcmc::AutoGamma>({h, metric}));
    default:
      return go(sgmcmc::GSGRHMC<double, D, sgmcmc::AutoGamma, sgmcmc::KickDrift>({h, metric}));
  }
}

/// A step for the tables: "0.02", or "0.01*" when the pilot's choice was halved after a failure.
std::string step_cell(double h) {
  return h < 0 ? format("%g*", -h) : format("%g", h);
}

/// The step-size grid searched when --step is not given.
const std::vector<double>& step_grid() {
  static const std::vector<double> grid{0.0025, 0.005, 0.01, 0.02, 0.04, 0.08, 0.16, 0.32};
  return grid;
}

/// Each sampler's step: --step if given, else the grid value with the smallest kl(h) on a pilot
/// run (kl returns +inf when a step failed). Returns 0 if no grid value works.
template <class Kl>
double choose_step(double fixed, Kl&& kl) {
  if (fixed > 0) return fixed;
  double best = 0.0, best_kl = INFINITY;
  for (double h : step_grid()) {
    const double k = kl(h);
    if (k < best_kl) {
      best_kl = k;
      best = h;
    }
  }
  return best;
}

// ------------------------------------------------------------------------------ 1-D part

struct Result1d {
  std::string target;
  std::vector<common::Histogram> hists;  // per row
  std::vector<double> kl, m2, h;         // per row
  double floor_mean = 0.0, floor_sd = 0.0;
  double true_m2 = 0.0;
};

template <class Target>
bool run_1d(const Options& o, long steps, long thin, Result1d& res) {
  const common::Axis axis{-3.0, 3.0, 60};  // bins of width 0.1 (MATH.md §5.3)
  const common::Histogram proto(axis);
  auto pdf = [](double x) { return std::exp(-Target::u(Vector<double, 1>(x))); };
  const std::vector<double> p = common::cell_masses_1d(proto, pdf, Target::z);
  res.target = Target::name;
  res.true_m2 = 0.0;
  for (int i = 0; i < 20000; ++i) {  // E θ² by the midpoint rule on [-6, 6]
    const double x = -6.0 + (i + 0.5) * 12.0 / 20000;
    res.true_m2 += x * x * pdf(x) * 12.0 / 20000 / Target::z;
  }
  const long burn = steps / 10;
  int r = 0;
  for (const Row& row : rows_1d()) {
    // pilot: a tenth of the run, another seed
    const double step = choose_step(o.step, [&](double hh) {
      common::Histogram hp(axis);
      const bool ok = run_row<Target>(
          row, o, hh, o.seed + 7777 + 100 * static_cast<std::uint64_t>(r), burn / 10, steps / 10,
          Vector<double, 1>::Zero(),
          [&](long t, const Vector<double, 1>& th) {
            if ((t + 1) % thin == 0) hp.add(th[0]);
          },
          true);
      return ok ? common::kl_true_vs_sample(p, hp) : INFINITY;
    });
    if (!(step > 0)) {
      std::fprintf(stderr, "%s: no stable step size on the grid\n", row.name.c_str());
      return false;
    }
    common::Histogram h(axis);
    double s2 = 0.0;
    long n = 0;
    double used = step;
    bool ok = false;
    // A step the pilot survived can still fail in the 10x longer run (a rare excursion where
    // G⁻¹ is large): halve it, at most three times, and mark the row.
    for (int tries = 0; tries < 4 && !ok; ++tries, used /= 2) {
      h.clear();
      s2 = 0.0;
      n = 0;
      ok = run_row<Target>(row, o, used, o.seed + 100 * static_cast<std::uint64_t>(r), burn, steps,
                           Vector<double, 1>::Zero(), [&](long t, const Vector<double, 1>& th) {
                             if ((t + 1) % thin != 0) return;
                             h.add(th[0]);
                             s2 += th[0] * th[0];
                             ++n;
                           });
      if (ok) res.h.push_back(tries == 0 ? used : -used);  // negative: halved
    }
    if (!ok) return false;
    res.kl.push_back(common::kl_true_vs_sample(p, h));
    res.m2.push_back(s2 / static_cast<double>(n));
    res.hists.push_back(h);
    ++r;
  }
  // The Monte-Carlo floor: KL of as many exact i.i.d. draws, 20 replicates.
  const InverseCdf icdf([](double x) { return Target::u(Vector<double, 1>(x)); }, -6.0, 6.0,
                        200000);
  sgmcmc::host::Rng rng(o.seed, 99);
  std::vector<double> kls;
  for (int rep = 0; rep < 20; ++rep) {
    common::Histogram h(axis);
    for (long i = 0; i < steps / thin; ++i) h.add(icdf.draw(rng));
    kls.push_back(common::kl_true_vs_sample(p, h));
  }
  for (double k : kls) res.floor_mean += k / kls.size();
  for (double k : kls)
    res.floor_sd += (k - res.floor_mean) * (k - res.floor_mean) / (kls.size() - 1);
  res.floor_sd = std::sqrt(res.floor_sd);
  return true;
}

// ------------------------------------------------------------------------------ banana part

struct BananaResult {
  std::vector<Row> rows;
  std::vector<std::vector<double>> paths;  // per row: the first samples, (x, y) pairs
  std::vector<long> checkpoints;           // steps at which KL is evaluated
  std::vector<std::vector<double>> kl;     // per row, per checkpoint: mean KL over replicates
  std::vector<double> final_m1;            // per row: E θ₁² over the whole run (replicate mean)
  std::vector<double> h;                   // per row: the step used
  std::vector<double> floor_kl;            // per checkpoint: KL of as many i.i.d. draws
};

bool run_banana(const Options& o, long steps, int replicates, long path_thin, int path_points,
                BananaResult& res) {
  using V = MetricValue;
  res.rows = {{"SGLD", "#1f77b4", 0, V::SameBatch},
              {"SGHMC", "#ff7f0e", 1, V::SameBatch},
              {"gSGRHMC (Alg. 1)", "#2ca02c", 3, V::SameBatch},
              {"gSGRHMC (kick–drift)", "#17becf", 4, V::SameBatch},
              {"naive SGRHMC (Eq. 27)", "#d62728", 2, V::SameBatch},
              {"gSGRHMC (kick–drift), G(Ũ′)", "#7f7f7f", 6, V::OtherBatch},
              {"gSGRHMC (kick–drift), G(U)", "#9467bd", 4, V::FullData}};
  const common::Axis ax{-3.0, 3.0, 30};
  const common::Axis ay{-2.0, 2.0, 20};
  const common::Histogram proto(ax, ay);
  auto pdf = [](double x, double y) { return std::exp(-Banana2::u(Vector<double, 2>(x, y))); };
  const std::vector<double> p = common::cell_masses_2d(proto, pdf, Banana2::z);
  for (long c = 1000; c <= steps; c = c * 2) res.checkpoints.push_back(c);
  if (res.checkpoints.empty() || res.checkpoints.back() != steps) res.checkpoints.push_back(steps);
  const Vector<double, 2> theta0(0.0, -1.2);  // the mode
  for (std::size_t r = 0; r < res.rows.size(); ++r) {
    const Row& row = res.rows[r];
    const double step = choose_step(o.banana_step, [&](double hh) {
      common::Histogram hp(ax, ay);
      const bool ok = run_row<Banana2>(
          row, o, hh, o.seed + 5555 + 37 * r, 0, steps / 5, theta0,
          [&](long, const Vector<double, 2>& th) { hp.add(th[0], th[1]); }, true);
      return ok ? common::kl_true_vs_sample(p, hp) : INFINITY;
    });
    if (!(step > 0)) {
      std::fprintf(stderr, "%s: no stable step size on the grid\n", row.name.c_str());
      return false;
    }
    std::vector<double> kl_sum(res.checkpoints.size(), 0.0);
    double m1 = 0.0;
    std::vector<double> path;
    double used = step;
    bool halved = false;
    for (int rep = 0; rep < replicates; ++rep) {
      common::Histogram h(ax, ay);
      std::size_t next = 0;
      double s1 = 0.0;
      if (rep == 0) path.insert(path.end(), {theta0[0], theta0[1]});
      const bool ok =
          run_row<Banana2>(row, o, used, o.seed + 1000 + 37 * r + 1000003ULL * rep, 0, steps,
                           theta0, [&](long t, const Vector<double, 2>& th) {
                             h.add(th[0], th[1]);
                             s1 += th[0] * th[0];
                             if (rep == 0 && (t + 1) % path_thin == 0 &&
                                 static_cast<int>(path.size() / 2) <= path_points) {
                               path.push_back(th[0]);
                               path.push_back(th[1]);
                             }
                             if (next < res.checkpoints.size() && t + 1 == res.checkpoints[next]) {
                               kl_sum[next] += common::kl_true_vs_sample(p, h);
                               ++next;
                             }
                           });
      if (!ok) {
        // as in the 1-D part: halve the step (at most three times) and start the row again
        if (used < step / 7) return false;
        used /= 2;
        halved = true;
        rep = -1;
        m1 = 0.0;
        path.clear();
        std::fill(kl_sum.begin(), kl_sum.end(), 0.0);
        continue;
      }
      m1 += s1 / static_cast<double>(steps) / replicates;
    }
    res.h.push_back(halved ? -used : used);
    for (double& k : kl_sum) k /= replicates;
    res.kl.push_back(kl_sum);
    res.paths.push_back(path);
    res.final_m1.push_back(m1);
  }
  // Floor: KL of n i.i.d. exact draws at each checkpoint (θ₁ by inverse CDF of e^{-θ₁⁴/10},
  // θ₂ | θ₁ ~ N(θ₁²/4 − 1.2, 1/16)).
  const InverseCdf icdf([](double x) { return x * x * x * x / 10.0; }, -6.0, 6.0, 200000);
  sgmcmc::host::Rng rng(o.seed, 98);
  common::Histogram h(ax, ay);
  std::size_t next = 0;
  Vector<double, 1> e;
  for (long t = 1; t <= steps && next < res.checkpoints.size(); ++t) {
    const double x = icdf.draw(rng);
    rng.fill_normal(e);
    h.add(x, x * x / 4 - 1.2 + e[0] / 4);
    if (t == res.checkpoints[next]) {
      res.floor_kl.push_back(common::kl_true_vs_sample(p, h));
      ++next;
    }
  }
  return true;
}

// ------------------------------------------------------------------------------ plots

bool plot_kl_bars(const common::Gnuplot& gp, const std::string& dir,
                  const std::vector<Result1d>& res) {
  const auto rows = rows_1d();
  std::string data = "\"sampler\"";  // first line: the column titles (columnhead)
  for (const auto& r : res) data += " \"" + r.target + "\"";
  data += "\n";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    data += "\"" + rows[i].name + "\"";
    for (const auto& r : res) data += format(" %.6g", r.kl[i]);
    data += "\n";
  }
  if (!common::write_text(dir + "/fig2_kl_bars.dat", data)) return false;
  std::string s = gp.png_terminal(1100, 520) + "\nset output 'fig2_kl_bars.png'\n";
  s += "set title 'Recipe paper Fig. 2 (left): KL(true || sample), 1-D targets' noenhanced\n";
  s += "set style data histogram\nset style histogram cluster gap 1\n";
  s += "set style fill solid 0.8 border -1\nset boxwidth 0.9\nset logscale y\n";
  s += "set ylabel 'KL divergence (log scale)'\nset xtics rotate by -25 noenhanced\n";
  s += "set key top left noenhanced\nset grid ytics\n";
  s += format("set label 'exact i.i.d. floor: %.2g / %.2g' at graph 0.4, graph 0.93 noenhanced\n",
              res[0].floor_mean, res[1].floor_mean);
  s += "plot 'fig2_kl_bars.dat' using 2:xtic(1) title columnhead(2) lc rgb '#4c72b0', "
       "'' using 3 title columnhead(3) lc rgb '#dd8452'\n";
  return common::write_text(dir + "/fig2_kl_bars.gp", s) && gp.run(dir, "fig2_kl_bars.gp");
}

bool plot_banana_kl(const common::Gnuplot& gp, const std::string& dir, const BananaResult& b) {
  std::vector<std::vector<double>> cols;
  std::vector<double> steps;
  for (long c : b.checkpoints) steps.push_back(static_cast<double>(c));
  cols.push_back(steps);
  std::string header = "steps";
  for (std::size_t r = 0; r < b.rows.size(); ++r) {
    cols.push_back(b.kl[r]);
    header += " k" + std::to_string(r);
  }
  cols.push_back(b.floor_kl);
  header += " iid";
  if (!common::write_columns(dir + "/fig2_banana_kl.dat", header, cols)) return false;
  std::string s = gp.png_terminal(900, 600) + "\nset output 'fig2_banana_kl.png'\n";
  s += "set title 'Recipe paper Fig. 2 (right): banana, KL(true || sample) vs steps' noenhanced\n";
  s += "set logscale xy\nset xlabel 'steps (gradient evaluations)'\n";
  s += "set ylabel 'KL divergence'\nset key top right noenhanced\nset grid\n";
  s += "plot ";
  for (std::size_t r = 0; r < b.rows.size(); ++r) {
    s += format("'fig2_banana_kl.dat' using 1:%zu with linespoints lw 2 lc rgb '%s' title '%s', ",
                r + 2, b.rows[r].color.c_str(), b.rows[r].name.c_str());
  }
  s += format(
      "'fig2_banana_kl.dat' using 1:%zu with lines dt 2 lc rgb '#555555' "
      "title 'exact i.i.d. draws'\n",
      b.rows.size() + 2);
  return common::write_text(dir + "/fig2_banana_kl.gp", s) && gp.run(dir, "fig2_banana_kl.gp");
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (const int rc = parse(argc, argv, o); rc != 0) return rc == 1 ? 0 : 2;
  std::error_code ec;
  std::filesystem::create_directories(o.out, ec);
  if (ec) {
    std::fprintf(stderr, "sgmcmc_recipe_fig2: cannot create %s\n", o.out.c_str());
    return 1;
  }
  const long steps_1d = o.quick ? 200000 : 2000000;
  const long thin_1d = 10;
  const long steps_banana = o.quick ? 50000 : 500000;
  const int replicates = o.quick ? 2 : 5;

  std::printf("Recipe paper, Figure 2 (MATH.md 5.1). Settings (ours; the paper gives none):\n");
  const std::string tuned = "each sampler's KL-best h on {0.0025, 0.005, ..., 0.32} (pilot run)";
  const std::string step_1d = o.step > 0 ? format("h = %g for every sampler", o.step) : tuned;
  const std::string step_banana =
      o.banana_step > 0 ? format("h = %g for every sampler", o.banana_step) : tuned;
  std::printf("  gradient noise N(0, %g) per step, V-hat = %g; 1-D: %s;\n  banana: %s;\n", o.noise,
              o.noise, step_1d.c_str(), step_banana.c_str());
  std::printf(
      "  SGLD D0 = 1; SGHMC C = 1, m = 1, kick-drift; gSGRHMC G^-1 = 1.5 sqrt(max(|U~ + "
      "0.5|, 0.01));\n");
  std::printf(
      "  G(U~): U~ = U + n theta, the value of the gradient's own minibatch (the paper);\n"
      "  G(U~'): U~' = U + n' theta, n' an independent batch (Gamma by AD); G(U): exact U;\n");
  std::printf(
      "  1-D: %ld steps after %ld burn-in, every %ld-th kept, start 0, bins 0.1 on [-3, 3]"
      " + outside;\n",
      steps_1d, steps_1d / 10, thin_1d);
  std::printf(
      "  banana: %d chains of %ld steps from the mode (0, -1.2), 30 x 20 cells on "
      "[-3,3] x [-2,2].\n\n",
      replicates, steps_banana);

  std::vector<Result1d> res(2);
  if (!run_1d<Gauss1>(o, steps_1d, thin_1d, res[0])) return 1;
  if (!run_1d<DoubleWell1>(o, steps_1d, thin_1d, res[1])) return 1;

  common::Table t;
  t.add_column("sampler", common::Table::Align::Left);
  t.add_column("h");
  t.add_column("KL, θ²/2");
  t.add_column("E θ² (1)");
  t.add_column("h");
  t.add_column("KL, θ⁴ − 2θ²");
  t.add_column(format("E θ² (%.4f)", res[1].true_m2));
  const auto rows = rows_1d();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (i == 5 || i == 8) t.add_rule();
    t.add_row({rows[i].name, step_cell(res[0].h[i]), format("%.4f", res[0].kl[i]),
               format("%.4f", res[0].m2[i]), step_cell(res[1].h[i]), format("%.4f", res[1].kl[i]),
               format("%.4f", res[1].m2[i])});
  }
  t.add_rule();
  t.add_row({"exact i.i.d. (floor, mean ± sd)", "",
             format("%.4f ± %.4f", res[0].floor_mean, res[0].floor_sd), "", "",
             format("%.4f ± %.4f", res[1].floor_mean, res[1].floor_sd), ""});
  std::printf("Left: KL(true || sample) on 1-D targets\n%s\n", t.text().c_str());

  BananaResult b;
  if (!run_banana(o, steps_banana, replicates, 50, 10, b)) return 1;
  std::vector<std::size_t> shown;  // every other checkpoint, and the last
  for (std::size_t c = 0; c < b.checkpoints.size(); c += 2) shown.push_back(c);
  if (shown.back() + 1 != b.checkpoints.size()) shown.push_back(b.checkpoints.size() - 1);
  common::Table tb;
  tb.add_column("sampler", common::Table::Align::Left);
  tb.add_column("h");
  for (std::size_t c : shown) {
    tb.add_column(format("KL @ %ld", b.checkpoints[c]));
  }
  tb.add_column("E θ₁² (1.0688)");
  for (std::size_t r = 0; r < b.rows.size(); ++r) {
    std::vector<std::string> cells{b.rows[r].name, step_cell(b.h[r])};
    for (std::size_t c : shown) {
      cells.push_back(format("%.4f", b.kl[r][c]));
    }
    cells.push_back(format("%.4f", b.final_m1[r]));
    tb.add_row(cells);
  }
  std::vector<std::string> cells{"exact i.i.d. (one set)", ""};
  for (std::size_t c : shown) {
    cells.push_back(format("%.4f", b.floor_kl[c]));
  }
  tb.add_row(cells);
  std::printf("Right: banana, KL(true || sample) against steps (mean of %d chains)\n%s\n",
              replicates, tb.text().c_str());

  std::string md =
      "# Recipe paper, Figure 2 (sgmcmc_recipe_fig2" + std::string(o.quick ? " --quick" : "") +
      ")\n\n" +
      format("Gradient noise variance %g; 1-D: %s; banana: %s; seed %llu.\n\n", o.noise,
             step_1d.c_str(), step_banana.c_str(), static_cast<unsigned long long>(o.seed)) +
      "## 1-D targets\n\n" + t.markdown() + "\n## Banana\n\n" + tb.markdown();
  if (!common::write_text(o.out + "/results.md", md)) return 1;

  if (o.plots) {
    const common::Gnuplot gp = common::Gnuplot::detect();
    if (!gp.found) {
      std::printf("gnuplot not found: no plots.\n");
      return 0;
    }
    std::string err;
    bool ok = plot_kl_bars(gp, o.out, res) && plot_banana_kl(gp, o.out, b);
    for (std::size_t k = 0; k < res.size() && ok; ++k) {
      std::vector<common::Panel> panels;
      for (std::size_t i = 0; i < rows.size(); ++i) {
        common::Panel pn;
        pn.title = rows[i].name;
        pn.color = rows[i].color;
        pn.note = format("KL %.4f", res[k].kl[i]);
        pn.hist = &res[k].hists[i];
        panels.push_back(pn);
      }
      common::Figure fig;
      fig.name = k == 0 ? "fig2_hist_gauss" : "fig2_hist_double_well";
      fig.title = "Recipe paper Fig. S.5: " + res[k].target + " (black: true density)";
      fig.rows = 3;
      fig.cols = 4;
      fig.height = 1100;
      auto u = [k](double x) {
        return k == 0 ? std::exp(-Gauss1::u(Vector<double, 1>(x))) / Gauss1::z
                      : std::exp(-DoubleWell1::u(Vector<double, 1>(x))) / DoubleWell1::z;
      };
      ok = common::plot_histograms(gp, o.out, fig, panels, u, &err);
    }
    if (ok) {
      std::vector<common::Panel> panels;
      for (std::size_t r = 0; r < 4; ++r) {
        common::Panel pn;
        pn.title = b.rows[r].name;
        pn.color = b.rows[r].color;
        pn.note = "first 10 samples, every 50 steps";
        pn.points = &b.paths[r];
        panels.push_back(pn);
      }
      common::Figure fig;
      fig.name = "fig2_banana_paths";
      fig.title = "Recipe paper Fig. 2 (right): banana, paths of the first 10 samples";
      fig.rows = 1;
      fig.cols = 4;
      fig.width = 1600;
      fig.height = 450;
      fig.x0 = -3.0;
      fig.x1 = 3.0;
      fig.y0 = -2.0;
      fig.y1 = 2.0;
      fig.xlabel = "θ₁";
      fig.ylabel = "θ₂";
      const common::DensityGrid grid(
          [](double x, double y) { return std::exp(-Banana2::u(Vector<double, 2>(x, y))); }, -3.0,
          3.0, 121, -2.0, 2.0, 81);
      ok = common::plot_over_contours(gp, o.out, fig, panels, grid,
                                      grid.hpd_levels({0.5, 0.9, 0.99}), "50/90/99% HPD",
                                      common::PointStyle::Path, &err);
    }
    if (!ok) {
      std::fprintf(stderr, "sgmcmc_recipe_fig2: plotting failed %s\n", err.c_str());
      return 1;
    }
    std::printf(
        "Wrote %s/{results.md, fig2_kl_bars.png, fig2_hist_gauss.png, "
        "fig2_hist_double_well.png, fig2_banana_paths.png, fig2_banana_kl.png}\n",
        o.out.c_str());
  }
  return 0;
}
