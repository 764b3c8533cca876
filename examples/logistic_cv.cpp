// Bayesian logistic regression by SGHMC-CV without a step-size sweep: control-variate minibatch
// gradients (with the per-row cache), the Laplace approximation as a constant preconditioner, and
// one step size for four chains from the warm-up's pooled configurational temperature
// (docs/control-variates.md, docs/adaptation.md). Synthetic data, so the program runs anywhere;
// it checks its own result and returns 1 if the chains did not sample.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include <Eigen/Dense>

#include "sgmcmc/adapt/sg_step_size.hpp"
#include "sgmcmc/adapt/sg_warmup.hpp"
#include "sgmcmc/data/control_variate.hpp"
#include "sgmcmc/data/minibatch.hpp"
#include "sgmcmc/host/rng.hpp"
#include "sgmcmc/models/logistic.hpp"
#include "sgmcmc/models/preconditioned.hpp"
#include "sgmcmc/samplers/sghmc.hpp"

constexpr int D = 5;        // intercept + 4 features
constexpr int kBatch = 64;  // minibatch size (and the adaptor's capacity)
using Vec = sgmcmc::Vector<double, D>;
using Mat = sgmcmc::Matrix<double, D, D>;
using LR = sgmcmc::LogisticRegression<double, D>;
using CV = sgmcmc::OwnedControlVariateGradient<LR, kBatch, double, D>;
using Pre = sgmcmc::OwnedPreconditioned<CV, double, D, true>;
using Sampler = sgmcmc::SGHMC<double, D>;

/// One chain: its stream, minibatches, CV gradient with its row cache, the preconditioner over
/// it (η-coordinates: θ = θ̂ + Lη), a temperature probe, the sampler and its state.
struct Chain {
  Chain(const LR& model, std::uint64_t stream, double h, double alpha)
      : rng(7, stream),
        order(model.rows()),
        batches(order.data(), model.rows(), kBatch),
        cv(model, model.rows()),
        cache(cv.row_cache_size()),
        pm(cv),
        probe(pm, &temp),
        sampler({h, alpha / h, 1.0}),
        z(sampler.start(Vec::Zero().eval())) {}
  sgmcmc::host::Rng rng;
  std::vector<std::uint32_t> order;
  sgmcmc::MinibatchSampler<kBatch> batches;
  CV cv;
  std::vector<double> cache;
  Pre pm;
  sgmcmc::ConfigurationalTemperature<double, D> temp;
  sgmcmc::TemperatureProbe<Pre, double, D> probe;
  Sampler sampler;
  Sampler::State z;

  bool step() {
    batches.next(rng, cv.batch());
    return bool(sampler.step(z, probe, rng));
  }
};

int fail(const char* what) {
  std::printf("%s\n", what);
  return 1;
}

int main() {
  // Data: N rows, x = (1, N(0, 1)⁴), y ~ Bernoulli(σ(xᵀβ)).
  const std::size_t n_rows = 2000;
  const Vec beta(-0.5, 1.0, -1.0, 0.5, 0.25);
  std::vector<double> x(n_rows * D);
  std::vector<int> y(n_rows);
  sgmcmc::host::Rng data_rng(1);
  for (std::size_t i = 0; i < n_rows; ++i) {
    Vec xi;
    data_rng.fill_normal(xi);
    xi[0] = 1.0;
    Eigen::Map<Vec>(x.data() + i * D) = xi;
    const double u = double(data_rng() >> 11) * 0x1.0p-53;
    y[i] = u < sgmcmc::sigmoid(xi.dot(beta)) ? 1 : 0;
  }
  const LR model(x.data(), y.data(), n_rows, 10.0);

  // The reference point θ̂ and the Laplace approximation: Newton's method on the full data.
  Vec map = Vec::Zero();
  Mat hess;
  for (int it = 0; it < 25; ++it) {
    Vec g;
    model.gradient(map, g);
    hess = Mat::Identity() * model.prior_precision();
    for (std::size_t i = 0; i < n_rows; ++i) {
      const double p = model.probability(i, map);
      hess += p * (1.0 - p) * model.row(i) * model.row(i).transpose();
    }
    map -= hess.ldlt().solve(g);
  }
  const Vec laplace_sd = hess.inverse().diagonal().cwiseSqrt();

  // Four chains; h starts at the rule's value for standardised coordinates (λ ≈ 1).
  sgmcmc::SGStepSizeParams<double> rule;
  rule.tolerance = 0.1;  // excess temperature aimed at: sd inflated by about 5 %
  rule.decay = 0.1;      // α = hC
  const double h0 = sgmcmc::sghmc_initial_step(1.0, rule);
  Chain chains[4]{{model, 1, h0, rule.decay},
                  {model, 2, h0, rule.decay},
                  {model, 3, h0, rule.decay},
                  {model, 4, h0, rule.decay}};
  for (Chain& c : chains) {
    if (!c.cv.set_row_cache(c.cache.data(), c.cache.size()) || !c.cv.set_reference(map) ||
        !c.pm.set_precision(map, hess) || !c.batches.valid()) {
      return fail("setup failed");
    }
  }

  // Warm-up: doubling windows; after each, one h for all chains from their pooled temperature.
  sgmcmc::SGStepSizeWarmup<double> warm(4000, 250, h0, 2.0, rule);
  while (!warm.done()) {
    double pooled = 0.0;
    for (Chain& c : chains) {
      c.temp.clear();
      for (std::size_t t = 0; t < warm.window_length(); ++t) {
        if (!c.step()) return fail("a warm-up step failed");
      }
      pooled += c.temp.mean_temperature() / 4.0;
    }
    const double h = warm.end_window(pooled);
    for (Chain& c : chains) {
      if (!c.sampler.set_params({h, rule.decay / h, 1.0})) return fail("the adapted h was refused");
    }
  }

  // Sampling at the frozen h: posterior means and variances of θ over all chains.
  Vec sum = Vec::Zero(), sum_sq = Vec::Zero();
  double temperature = 0.0;
  const int steps = 20000;
  for (Chain& c : chains) {
    c.temp.clear();
    for (int t = 0; t < steps; ++t) {
      if (!c.step()) return fail("a step failed");
      const Vec theta = c.pm.position(c.z.position());
      sum += theta;
      sum_sq += theta.cwiseAbs2();
    }
    temperature += c.temp.mean_temperature() / 4.0;
  }
  const Vec mean = sum / (4.0 * steps);
  const Vec sd = (sum_sq / (4.0 * steps) - mean.cwiseAbs2()).cwiseSqrt();
  std::printf("h = %.3f (from %.3f), configurational temperature %.3f\n", warm.step_size(), h0,
              temperature);
  std::printf("coef   true     MAP   posterior mean (sd)   Laplace sd\n");
  for (int j = 0; j < D; ++j) {
    std::printf("%4d %6.3f  %6.3f   %6.3f (%.3f)        %.3f\n", j, beta[j], map[j], mean[j], sd[j],
                laplace_sd[j]);
  }
  // On a posterior this close to Gaussian the mean sits near the MAP and the sd near the Laplace
  // sd; the step size keeps the excess temperature near 0.1. A failed adaptation breaks these.
  const bool ok = temperature > 0.95 && temperature < 1.3 &&
                  ((mean - map).cwiseQuotient(laplace_sd).cwiseAbs().maxCoeff() < 0.3) &&
                  ((sd.cwiseQuotient(laplace_sd) - Vec::Ones()).cwiseAbs().maxCoeff() < 0.2);
  std::printf("%s\n", ok ? "ok" : "the chains did not sample the posterior");
  return ok ? 0 : 1;
}
