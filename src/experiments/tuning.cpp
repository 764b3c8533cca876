// SPDX-License-Identifier: MIT
// The measurements behind docs/tuning.md and docs/samplers/sgmgt.md: SGMGT's step size and
// resampling period against mixing (ESS), SGHMC's h, friction and mass, the minibatch size of a
// logistic regression, and SGRHMC's stability bound h < 2/λmax(G⁻¹). Every chain runs through the
// run driver (run/driver.hpp); ESS is Geyer's (diagnostics/ess.hpp) on the stored, thinned trace.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <string>
#include <type_traits>
#include <vector>

#include "common/cli.hpp"
#include "common/table.hpp"
#include "sgmcmc/data/gradient_noise.hpp"
#include "sgmcmc/data/minibatch.hpp"
#include "sgmcmc/diagnostics/ess.hpp"
#include "sgmcmc/diagnostics/welford.hpp"
#include "sgmcmc/host/rng.hpp"
#include "sgmcmc/models/logistic.hpp"
#include "sgmcmc/run/driver.hpp"
#include "sgmcmc/sgmcmc.hpp"

namespace {

using sgmcmc::Status;
using sgmcmc::Vector;
using sgmcmc::common::format;
using sgmcmc::common::Table;
using Rng = sgmcmc::host::Rng;

const char* const kUsage =
    "usage: sgmcmc_tuning [--section S] [--quick] [--seed N]\n"
    "\n"
    "The measurements of docs/tuning.md. Sections (default all):\n"
    "  sgmgt    SGMGT: h and resample period R against ESS (5-D Gaussian) and mode switches\n"
    "           (two-mode mixture), 5e6 steps per chain\n"
    "  sgmgtd   the same for SGMGT-D\n"
    "  sghmc    SGHMC: h, friction C and mass m against ESS and variance error (5-D Gaussian)\n"
    "  batch    SGHMC on a logistic regression: batch size n, with and without V-hat\n"
    "  sgrhmc   SGRHMC with a constant metric: h against 2/lambda_max(G^-1)\n"
    "\n"
    "  --quick  a tenth of the steps\n"
    "  --seed N base seed (default 20251125)\n";

struct Options {
  std::string section = "all";
  bool quick = false;
  std::uint64_t seed = 20251125;
};

// ------------------------------------------------------------------------------------ targets

/// U = Σ θ_i² / (2σ_i²): a Gaussian with independent coordinates of scale σ_i.
template <int D>
struct Gaussian {
  static constexpr int dim = D;
  Vector<double, D> precision = Vector<double, D>::Ones();
  template <class Theta, class Grad>
  void gradient(const Theta& th, Grad& g) const noexcept {
    g = precision.cwiseProduct(th);
  }
  template <class Theta>
  double potential(const Theta& th) const noexcept {
    return 0.5 * th.cwiseAbs2().dot(precision);
  }
};

/// ½N(−μe₁, I) + ½N(μe₁, I) in d = 2: U = |θ|²/2 − log cosh(μθ₁), ∇U = θ − μ tanh(μθ₁) e₁.
/// With μ = 2 the barrier at θ₁ = 0 is 2 − log(cosh 4 / e⁸ ...) ≈ 2 nats above the modes.
struct TwoModes {
  double mu = 2.0;
  template <class Theta, class Grad>
  void gradient(const Theta& th, Grad& g) const noexcept {
    g = th;
    g[0] -= mu * std::tanh(mu * th[0]);
  }
};

// ------------------------------------------------------------------------------------ chains

/// What a chain gave: ESS per coordinate (Geyer, on the kept trace), mean and variance per
/// coordinate, and the run's result.
template <int D>
struct ChainStats {
  Vector<double, D> ess = Vector<double, D>::Zero();
  Vector<double, D> mean = Vector<double, D>::Zero();
  Vector<double, D> var = Vector<double, D>::Zero();
  sgmcmc::RunResult run;
  long switches = 0;         ///< TwoModes: crossings from θ₁ < −1 to θ₁ > 1 or back
  double right_share = 0.0;  ///< TwoModes: share of kept states with θ₁ > 0
  bool ok() const { return static_cast<bool>(run.status) && !run.stopped; }
};

/// Counts crossings between the cores θ₁ < −1 and θ₁ > 1 (hysteresis, so noise at the barrier
/// does not count), as a run-driver hook on every step.
struct SwitchCounter {
  int side = 0;  // −1, +1, or 0 before the first core
  long switches = 0;
  template <class St>
  void after_step(std::uint64_t, const St& z) noexcept {
    const double x = z.position()[0];
    const int now = x > 1.0 ? 1 : (x < -1.0 ? -1 : side);
    if (side != 0 && now != side) ++switches;
    side = now;
  }
};

/// Runs `steps` steps of sampler s from θ₀ (auxiliary variables drawn with start(θ₀, rng)),
/// keeping every thin-th position in a trace; ESS, mean and variance from the trace.
template <class S, class Model>
ChainStats<S::dim> run_chain(const S& s, const Model& model, const Vector<double, S::dim>& theta0,
                             std::uint64_t steps, std::uint64_t thin, std::uint64_t seed) {
  constexpr int D = S::dim;
  ChainStats<D> out;
  Rng rng(seed, 0);
  auto z = s.start(theta0, rng);
  const std::uint64_t n = steps / thin;
  std::vector<double> memory(n * D);
  sgmcmc::PositionTrace<double, D> trace(memory.data(), n);
  SwitchCounter counter;
  out.run = sgmcmc::run(s, z, model, rng, sgmcmc::RunPlan{0, n, thin}, trace, counter);
  out.run.stopped = out.run.stopped && trace.size() < n;  // a full trace is not an early stop
  out.switches = counter.switches;
  if (!out.ok()) return out;
  long right = 0;
  for (std::uint64_t k = 0; k < n; ++k) right += trace[k][0] > 0 ? 1 : 0;
  out.right_share = double(right) / double(n);
  for (int d = 0; d < D; ++d) {
    out.ess[d] = sgmcmc::ess_geyer(memory.data() + d, n, D).ess;
    double m = 0, q = 0;
    for (std::uint64_t k = 0; k < n; ++k) m += memory[k * D + d];
    m /= double(n);
    for (std::uint64_t k = 0; k < n; ++k) q += (memory[k * D + d] - m) * (memory[k * D + d] - m);
    out.mean[d] = m;
    out.var[d] = q / double(n - 1);
  }
  return out;
}

/// A table with a first column aligned `first` and right-aligned others.
Table make_table(const char* first, Table::Align align, std::initializer_list<const char*> rest) {
  Table t;
  t.add_column(first, align);
  for (const char* c : rest) t.add_column(c);
  return t;
}

/// Adds a row to the table and prints it at once (a long section shows its progress).
void emit_row(Table& t, const std::vector<std::string>& cells) {
  t.add_row(cells);
  for (const auto& c : cells) std::printf("%s | ", c.c_str());
  std::printf("\n");
  std::fflush(stdout);
}

template <int D>
std::string ess_range(const ChainStats<D>& c) {
  if (!c.ok()) return format("failed: %s", c.run.status.message());
  return format("%.0f–%.0f", c.ess.minCoeff(), c.ess.maxCoeff());
}

// ------------------------------------------------------------------------------------ SGMGT

/// Sampler families by size, for rows that run the same parameters at two dimensions.
struct SGMGTFamily {
  template <int D>
  using At = sgmcmc::SGMGT<double, D>;
};
struct SGMGTDFamily {
  template <int D>
  using At = sgmcmc::SGMGTD<double, D>;
};

/// SGMGT (a = 1, 2) and SGMGT-D on a 5-D standard Gaussian and the two-mode mixture, for a grid
/// of (h, R); the docs' old example (R = 50, h = 0.01; SGMGT-D h = 0.001) among them.
void section_sgmgt(const Options& o) {
  const std::uint64_t steps = o.quick ? 500000 : 5000000;
  const std::uint64_t thin = steps / 50000;  // 50 000 kept states per chain
  std::printf(
      "SGMGT / SGMGT-D: %llu steps per chain (ESS on 50 000 kept states, min–max over\n"
      "coordinates); 5-D N(0, I) from θ₀ = 0; two modes ½N(∓2e₁, I) in 2-D from θ₀ = "
      "(−2, 0):\nswitches between θ₁ < −1 and θ₁ > 1, share of time at θ₁ > 0 (exact: "
      "0.5).\n\n",
      static_cast<unsigned long long>(steps));
  Table t = make_table("sampler", Table::Align::Left,
                       {"h", "R", "R·h", "ESS, 5-D Gaussian", "var (1)", "switches", "θ₁ > 0"});
  const Gaussian<5> gauss;
  const TwoModes modes;
  const Vector<double, 5> g0 = Vector<double, 5>::Zero();
  const Vector<double, 2> m0(-2.0, 0.0);
  std::uint64_t seed = o.seed;
  // One row: the sampler family S at d = 5 (Gaussian) and d = 2 (two modes), same parameters.
  auto row = [&](auto tag, const std::string& name, const auto& params) {
    using P = std::decay_t<decltype(params)>;
    using S5 = typename decltype(tag)::template At<5>;
    using S2 = typename decltype(tag)::template At<2>;
    static_assert(std::is_same_v<P, typename S5::Params>, "one Params type for both sizes");
    const auto cg = run_chain(S5(params), gauss, g0, steps, thin, ++seed);
    const auto cm = run_chain(S2(params), modes, m0, steps, thin, ++seed);
    const double h = params.step_size;
    const int r = params.resample_period;
    const std::vector<std::string> cells = {
        name,
        format("%g", h),
        format("%d", r),
        r > 0 ? format("%g", r * h) : "∞",
        ess_range(cg),
        cg.ok() ? format("%.3f", cg.var.mean()) : "—",
        cm.ok() ? format("%ld", cm.switches) : format("failed: %s", cm.run.status.message()),
        cm.ok() ? format("%.3f", cm.right_share) : "—"};
    emit_row(t, cells);
  };
  const bool plain = o.section == "all" || o.section == "sgmgt";
  const bool damped = o.section == "all" || o.section == "sgmgtd";
  for (int a : {1, 2}) {
    if (!plain) break;
    for (double h : {0.01, 0.05, 0.1, 0.2}) {
      for (int r : {50, 500, 0}) {
        sgmcmc::SGMGTParams<double> p;
        p.step_size = h;
        p.shape = a;
        p.softness = a == 1 ? 5.0 : 3.0;
        p.resample_period = r;
        row(SGMGTFamily{}, format("SGMGT a = %d", a), p);
      }
      t.add_rule();
    }
  }
  // SGMGT-D: the code's σ's (σ_θ = σ_ξ = 0.01, σ_p = 10; a = 2: γ = 1, c = 3), the docs' old
  // example at h = 0.001, and the multiple-well experiment's σ_θ = σ_ξ = 0.3, σ_p = 1, γ = 1.
  for (int a : {1, 2}) {
    if (!damped) break;
    for (int set : {0, 1}) {
      for (double h : {0.001, 0.01, 0.05, 0.1}) {
        for (int r : {50, 0}) {
          sgmcmc::SGMGTDParams<double> p;
          p.step_size = h;
          p.shape = a;
          p.softness = a == 1 ? 5.0 : 3.0;
          p.resample_period = r;
          if (a == 2) p.gamma = 1.0;
          if (set == 1) {
            p.sigma_theta = 0.3;
            p.sigma_p = 1.0;
            p.sigma_xi = 0.3;
            p.gamma = 1.0;
          }
          row(SGMGTDFamily{}, format("SGMGT-D a = %d, σ_p = %g, γ = %g", a, p.sigma_p, p.gamma), p);
        }
      }
      t.add_rule();
    }
  }
  std::printf("%s\n", t.markdown().c_str());
}

// ------------------------------------------------------------------------------------ SGHMC

/// ESS of θ_i and of θ_i² (min over coordinates) and the variance error, SGHMC on N(0, I₅) with
/// exact gradients: a grid of h and C, the stability bound h²k/m + 2hC/m < 4, and the mass as a
/// change of units, (h, C, m) ≡ (h/√m, C/√m, 1).
void section_sghmc(const Options& o) {
  const std::uint64_t steps = o.quick ? 200000 : 2000000;
  const std::uint64_t thin = 10;
  std::printf(
      "SGHMC (kick–drift) on N(0, I₅), exact gradient, %llu steps from θ₀ = 0, r₀ ~ "
      "N(0, mI);\nESS per 10⁶ steps of θ_i and θ_i² (min over coordinates, Geyer on "
      "every 10th state,\nso at most 10⁵), max_i |Var θ_i − 1|.\n\n",
      static_cast<unsigned long long>(steps));
  Table t = make_table(
      "h", Table::Align::Right,
      {"C", "m", "2hC/m + h²k/m", "ESS θ / 10⁶ steps", "ESS θ² / 10⁶ steps", "max |Var − 1|"});
  const Gaussian<5> gauss;
  std::uint64_t seed = o.seed + 1000;
  auto row = [&](double h, double c, double m, bool same_seed = false) {
    sgmcmc::SGHMC<double, 5> s({h, c, m});
    const Vector<double, 5> theta0 = Vector<double, 5>::Zero();
    Rng rng(same_seed ? seed : ++seed, 0);
    auto z = s.start(theta0);
    static_cast<void>(s.refresh_momentum(z, rng));
    const std::uint64_t n = steps / thin;
    std::vector<double> memory(n * 5);
    sgmcmc::PositionTrace<double, 5> trace(memory.data(), n);
    const auto run = sgmcmc::run(s, z, gauss, rng, sgmcmc::RunPlan{0, n, thin}, trace);
    const double bound = 2 * h * c / m + h * h / m;
    std::vector<std::string> cells = {format("%g", h), format("%g", c), format("%g", m),
                                      format("%.3f", bound)};
    bool finite = run.status && memory.back() == memory.back() && std::isfinite(memory.back());
    if (!finite) {
      cells.push_back(run.status ? "diverged (non-finite θ)"
                                 : format("failed at step %llu: %s",
                                          static_cast<unsigned long long>(run.failed_at),
                                          run.status.message()));
    } else {
      double ess1 = 1e300, ess2 = 1e300, err = 0;
      std::vector<double> sq(n);
      for (int d = 0; d < 5; ++d) {
        ess1 = std::min(ess1, sgmcmc::ess_geyer(memory.data() + d, n, 5).ess);
        double v = 0;
        for (std::uint64_t k = 0; k < n; ++k) {
          sq[k] = memory[k * 5 + d] * memory[k * 5 + d];
          v += sq[k];
        }
        err = std::max(err, std::fabs(v / double(n) - 1.0));
        ess2 = std::min(ess2, sgmcmc::ess_geyer(sq.data(), n).ess);
      }
      const double per = 1e6 / double(steps);
      cells.push_back(format("%.0f", ess1 * per));
      cells.push_back(format("%.0f", ess2 * per));
      cells.push_back(format("%.3f", err));
    }
    emit_row(t, cells);
  };
  for (double h : {0.05, 0.2, 0.5}) {
    for (double c : {0.1, 0.5, 1.0, 2.0, 5.0, 20.0}) row(h, c, 1.0);
    t.add_rule();
  }
  // Near the bound: C = 1, m = 1 gives h² + 2h < 4, h < √5 − 1 = 1.236.
  for (double h : {0.8, 1.1, 1.2, 1.25}) row(h, 1.0, 1.0);
  t.add_rule();
  // The mass is a change of units: (h, C, m) = (0.4, 2, 4) is (0.2, 1, 1); same seed, so the
  // same chain up to rounding.
  row(0.4, 2.0, 4.0);
  row(0.2, 1.0, 1.0, true);
  std::printf("%s\n", t.markdown().c_str());
}

// ------------------------------------------------------------------------------------ batch size

/// Per-example logistic regression data: N rows of (1, x₁, x₂), x ~ N(0, I), labels from
/// β* = (0.5, −1, 2).
struct LogRegData {
  static constexpr int D = 3;
  std::vector<double> x;
  std::vector<int> y;
  std::size_t rows;
  LogRegData(std::size_t n, std::uint64_t seed) : x(n * D), y(n), rows(n) {
    Rng rng(seed, 7);
    const Vector<double, D> beta(0.5, -1.0, 2.0);
    for (std::size_t i = 0; i < n; ++i) {
      x[i * D] = 1.0;
      x[i * D + 1] = sgmcmc::normal<double>(rng);
      x[i * D + 2] = sgmcmc::normal<double>(rng);
      const double eta = beta[0] + beta[1] * x[i * D + 1] + beta[2] * x[i * D + 2];
      y[i] = sgmcmc::uniform_open01<double>(rng) < 1.0 / (1.0 + std::exp(-eta)) ? 1 : 0;
    }
  }
};

/// Run-driver hook: draws the step's minibatch, and (when an estimator is given) hands the
/// estimated V̂ to the sampler before the step (GradientNoiseEstimator::apply, Clip policy).
/// independent: every batch starts a new epoch (a fresh uniformly random n-subset, independent
/// of the previous batches) instead of continuing the epoch (disjoint consecutive batches).
template <class S, class Model, int Capacity>
struct BatchHook {
  sgmcmc::MinibatchSampler<Capacity>* batches;
  Model* model;
  Rng* rng;
  bool independent = false;
  std::uint32_t* order = nullptr;  ///< the batches' buffer (for independent batches)
  S* sampler = nullptr;
  sgmcmc::GradientNoiseEstimator<double, 3>* estimator = nullptr;
  void before_step(std::uint64_t) noexcept {
    if (independent) {
      // A new sampler refills the permutation: its first batch is a fresh uniform n-subset.
      *batches = sgmcmc::MinibatchSampler<Capacity>(order, batches->rows(), batches->batch_size());
    }
    batches->next(*rng, model->batch());
    if (estimator != nullptr && estimator->batches() > 0) {
      static_cast<void>(estimator->apply(*sampler, sgmcmc::gradient_noise_limit(*sampler)));
    }
  }
};

/// SGHMC on a logistic regression (N = 1000, d = 3) with batch sizes 10 ... 1000, without V̂
/// and with V̂ estimated online (NoiseTrackingGradient), against NUTS on the full data.
void section_batch(const Options& o) {
  constexpr int D = LogRegData::D;
  constexpr int Cap = 1000;
  const LogRegData data(1000, o.seed);
  const sgmcmc::LogisticRegression<double, D> full(data.x.data(), data.y.data(), data.rows);
  // Reference: NUTS on the full data.
  sgmcmc::Welford<double, D> ref;
  {
    sgmcmc::NUTS<double, D> nuts({0.1, 1.0, 1000.0});
    Rng rng(o.seed, 11);
    auto z = nuts.start(Vector<double, D>::Zero());
    sgmcmc::StreamingSink<sgmcmc::Welford<double, D>> sink(ref);
    const auto r =
        sgmcmc::run(nuts, z, full, rng, sgmcmc::RunPlan{1000, o.quick ? 5000u : 40000u, 1}, sink);
    if (!r.status) {
      std::printf("NUTS failed: %s\n", r.status.message());
      return;
    }
  }
  const Vector<double, D> ref_sd = ref.variance().cwiseSqrt();
  std::printf(
      "Logistic regression, N = 1000, d = 3 (intercept, two N(0, 1) features), prior "
      "N(0, 10² I).\nNUTS reference (full data): mean (%.3f, %.3f, %.3f), sd (%.4f, %.4f, "
      "%.4f).\n",
      ref.mean()[0], ref.mean()[1], ref.mean()[2], ref_sd[0], ref_sd[1], ref_sd[2]);
  const double h = 0.002, c = 20.0;
  const std::uint64_t steps = o.quick ? 50000 : 400000;
  std::printf(
      "SGHMC h = %g, C = %g, m = 1 (V̂ limit 2C/h = %g), %llu steps after 10 000 burn-in, from "
      "the NUTS mean;\nerrors are max over coordinates, in reference sd. Batches: epochs "
      "(MinibatchSampler: disjoint within\nan epoch) or independent (a fresh uniform subset "
      "every step).\n\n",
      h, c, 2 * c / h, static_cast<unsigned long long>(steps));
  Table t = make_table("batch n", Table::Align::Right,
                       {"batches", "V̂", "max |mean err| / sd", "sd / ref sd (min–max)",
                        "V (mean, per coord.)", "√(1 + hV/(2C))", "clipped steps"});
  std::uint64_t seed = o.seed + 2000;
  for (std::size_t n : {10u, 30u, 100u, 300u, 1000u}) {
    for (int variant = 0; variant < 4; ++variant) {
      const bool with_vhat = variant % 2 == 1;
      const bool independent = variant >= 2;
      if (n == 1000 && variant > 0) continue;  // the full batch has no gradient noise
      static std::uint32_t order[Cap];
      sgmcmc::MinibatchSampler<Cap> batches(order, data.rows, n);
      sgmcmc::GradientNoiseEstimator<double, D> est;
      sgmcmc::NoiseTrackingGradient<sgmcmc::LogisticRegression<double, D>, Cap, double, D> model(
          full, data.rows, &est);
      sgmcmc::SGHMC<double, D> s({h, c, 1.0});
      Rng rng(++seed, 0);
      Rng data_rng(seed, 1);
      auto z = s.start(ref.mean());
      BatchHook<sgmcmc::SGHMC<double, D>, decltype(model), Cap> hook{&batches, &model, &data_rng};
      hook.independent = independent;
      hook.order = order;
      if (with_vhat) {
        hook.sampler = &s;
        hook.estimator = &est;
      }
      sgmcmc::Welford<double, D> w;
      sgmcmc::StreamingSink<sgmcmc::Welford<double, D>> sink(w);
      const auto r = sgmcmc::run(s, z, model, rng, sgmcmc::RunPlan{10000, steps, 1}, sink, hook);
      std::vector<std::string> cells = {format("%zu", n), independent ? "independent" : "epochs",
                                        with_vhat ? "estimated" : "0"};
      if (!r.status) {
        cells.push_back(format("failed: %s", r.status.message()));
      } else {
        const Vector<double, D> ratio = w.variance().cwiseSqrt().cwiseQuotient(ref_sd);
        cells.push_back(
            format("%.2f", ((w.mean() - ref.mean()).cwiseAbs().cwiseQuotient(ref_sd)).maxCoeff()));
        cells.push_back(format("%.2f–%.2f", ratio.minCoeff(), ratio.maxCoeff()));
        const double v = n < data.rows ? est.estimate().mean() : 0.0;
        cells.push_back(format("%.0f", v));
        cells.push_back(format("%.2f", std::sqrt(1.0 + h * v / (2 * c))));
        cells.push_back(with_vhat ? format("%llu of %llu",
                                           static_cast<unsigned long long>(est.limited_steps()),
                                           static_cast<unsigned long long>(est.applied()))
                                  : "—");
      }
      emit_row(t, cells);
    }
  }
  std::printf("%s\n", t.markdown().c_str());
}

// ------------------------------------------------------------------------------------ SGRHMC

/// A constant diagonal G⁻¹ = diag(λ).
struct ConstantInverseMetric {
  Vector<double, 2> lambda{0.5, 10.0};
  template <class T, int N>
  Vector<T, N> operator()(const Vector<T, N>&) const {
    Vector<T, N> out;
    for (int i = 0; i < N; ++i) out[i] = T(lambda[i]);
    return out;
  }
};

/// The largest stable h on N(0, 1/k) for one coordinate with friction λ and S = √λ (the
/// spectral radius of the linear map below 1): kick–drift 2hλ + h²λk < 4; explicit Euler hk < 1
/// and 2hλ − h²λk < 4 (the second only binds when λ ≥ 4k).
double stable_bound(bool kick_drift, double lambda, double k) {
  if (kick_drift) return (-lambda + std::sqrt(lambda * lambda + 4 * lambda * k)) / (lambda * k);
  double h = 1.0 / k;
  if (lambda >= 4 * k)
    h = std::min(h, (lambda - std::sqrt(lambda * lambda - 4 * lambda * k)) / (lambda * k));
  return h;
}

/// SGRHMC with G⁻¹ = diag(0.5, 10) (the friction on r is G⁻¹, so 2/λmax = 0.2) on a Gaussian
/// with precision diag(1, k): h at fractions of the predicted bound, kick–drift and explicit Euler.
void section_sgrhmc(const Options& o) {
  using Metric = sgmcmc::InverseMetric<sgmcmc::DiagonalShape, ConstantInverseMetric>;
  const std::uint64_t steps = o.quick ? 20000 : 200000;
  const double lambda = 10.0;
  std::printf(
      "SGRHMC, G⁻¹ = diag(0.5, 10) (2/λmax(G⁻¹) = 0.2), on N(0, diag(1, 1/k)), exact "
      "gradient,\n%llu steps after 10%% burn-in from θ₀ = (1, 1), r₀ = 0. Predicted "
      "bound h* (coordinate 2,\nS = √λ): kick–drift 2hλ + h²λk < 4; explicit Euler hk < 1 "
      "and 2hλ − h²λk < 4.\n\n",
      static_cast<unsigned long long>(steps));
  Table t = make_table("integrator", Table::Align::Left,
                       {"k", "h*", "h*·λmax/2", "h / h*", "h", "result", "Var θ₂ · k (1)"});
  std::uint64_t seed = o.seed + 3000;
  auto row = [&](auto sampler, const char* name, double k, double bound) {
    Gaussian<2> model;
    model.precision = Vector<double, 2>(1.0, k);
    Rng rng(++seed, 0);
    auto z = sampler.start(Vector<double, 2>(1.0, 1.0));
    sgmcmc::Welford<double, 2> w;
    sgmcmc::StreamingSink<sgmcmc::Welford<double, 2>> sink(w);
    const auto r = sgmcmc::run(sampler, z, model, rng, sgmcmc::RunPlan{steps / 10, steps, 1}, sink);
    const double h = sampler.step_size();
    std::vector<std::string> cells = {name,
                                      format("%g", k),
                                      format("%.4f", bound),
                                      format("%.3f", bound * lambda / 2),
                                      format("%.2f", h / bound),
                                      format("%.4f", h)};
    const double v = w.variance()[1] * k;
    if (!r.status) {
      cells.push_back(format("diverged: %s at step %llu", r.status.message(),
                             static_cast<unsigned long long>(r.failed_at)));
      cells.push_back("—");
    } else {
      cells.push_back("ok");
      cells.push_back(format("%.3f", v));
    }
    emit_row(t, cells);
  };
  for (double k : {1.0, 25.0}) {
    for (bool kick_drift : {true, false}) {
      const double bound = stable_bound(kick_drift, lambda, k);
      for (double f : {0.25, 0.5, 0.9, 0.98, 1.02, 1.1}) {
        const double h = f * bound;
        if (kick_drift) {
          sgmcmc::SGRHMC<double, 2, Metric, sgmcmc::AutoGamma, sgmcmc::KickDrift> s({h, {}, {}});
          row(s, "kick–drift", k, bound);
        } else {
          sgmcmc::SGRHMC<double, 2, Metric, sgmcmc::AutoGamma, sgmcmc::ExplicitEuler> s(
              {h, {}, {}});
          row(s, "explicit Euler", k, bound);
        }
      }
      t.add_rule();
    }
  }
  std::printf("%s\n", t.markdown().c_str());
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  sgmcmc::common::Args args(argc, argv, "sgmcmc_tuning", kUsage);
  while (args.next()) {
    if (args.is("--quick")) {
      o.quick = true;
    } else if (args.text("--section", o.section)) {
    } else if (args.count("--seed", o.seed)) {
    } else {
      args.unknown();
    }
  }
  if (args.status() != 0) return args.status() == 1 ? 0 : 2;
  const bool all = o.section == "all";
  if (all || o.section == "sgmgt" || o.section == "sgmgtd") section_sgmgt(o);
  if (all || o.section == "sghmc") section_sghmc(o);
  if (all || o.section == "batch") section_batch(o);
  if (all || o.section == "sgrhmc") section_sgrhmc(o);
  return 0;
}
