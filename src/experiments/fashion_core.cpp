// SPDX-License-Identifier: MIT
// The FashionMNIST experiment's runs (fashion_core.hpp): one function per method family on the
// library's samplers and run driver, the sampler state in static memory (a StateMap over one
// static arena: 79 510 weights do not fit an Eigen fixed-size object), posterior-predictive
// scoring.
#include "experiments/fashion_core.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <memory>
#include <numeric>

#include "sgmcmc/data/gradient_noise.hpp"
#include "sgmcmc/data/minibatch.hpp"
#include "sgmcmc/host/progress.hpp"
#include "sgmcmc/host/rng.hpp"
#include "sgmcmc/models/mlp.hpp"
#include "sgmcmc/run/driver.hpp"
#include "sgmcmc/samplers/sgd.hpp"
#include "sgmcmc/samplers/sghmc.hpp"
#include "sgmcmc/samplers/sghmc_learned.hpp"
#include "sgmcmc/samplers/sgld.hpp"
#include "sgmcmc/samplers/sgnuts_seed.hpp"

namespace sgmcmc::fashion {

namespace {

constexpr int kCapacity = 500;
using Net = BayesianMLP<float, kCapacity>;
constexpr int kDim = Net::Dim;
constexpr int kClasses = Net::Classes;
using Map = VectorMap<float, kDim>;
using CMap = ConstVectorMap<float, kDim>;

using SGHMCSampler = SGHMC<float, kDim>;
using SGLDSampler = SGLD<float, kDim>;
using SGDSampler = SGD<float, kDim>;
using SGDMomentumSampler = SGDMomentum<float, kDim>;
using LearnedSampler = SGHMCLearnedRefresh<float, kDim, 16>;
using NUTSSampler = SGNUTSSeed<float, kDim, 10>;
using NoiseEstimator = GradientNoiseEstimatorMap<float, kDim>;

constexpr int kMaxStorage =
    std::max({SGHMCSampler::StateMap::storage_size, SGLDSampler::StateMap::storage_size,
              SGDSampler::StateMap::storage_size, SGDMomentumSampler::StateMap::storage_size,
              LearnedSampler::StateMap::storage_size, NUTSSampler::StateMap::storage_size});

// Caller-owned static memory: the state of whichever sampler runs (SGNUTS's is the largest, about
// 15 MB), the network's scratch, θ₀, the V̂ estimator and a sub-batch gradient.
alignas(kAlignBytes) float g_state[kMaxStorage];
alignas(kAlignBytes) float g_theta0[kDim];
alignas(kAlignBytes) float g_noise[NoiseEstimator::storage_size];
alignas(kAlignBytes) float g_sub_gradient[kDim];
alignas(64) Net::Workspace g_workspace;
alignas(64) float g_probs[kCapacity * kClasses];

/// The network as the samplers see it: the gradient on the batch drawn before the step, and (for
/// the seed's SGNUTS) the minibatch potential Ũ_S in the same pass.
struct BatchModel {
  Net* net;
  template <class Theta, class Grad>
  void gradient(const Theta& theta, Grad& g) const noexcept {
    net->gradient(theta, g);
  }
  template <class Theta>
  float potential(const Theta& theta) const noexcept {
    return net->batch_potential(theta);
  }
  template <class Theta, class Grad>
  float potential_and_gradient(const Theta& theta, Grad& g) const noexcept {
    return net->batch_potential_and_gradient(theta, g);
  }
};

/// The batch gradient as the mean of K sub-batch gradients (same work as one pass over the
/// batch), each fed to the V̂ estimator (GradientNoiseEstimatorMap::end_subbatches).
struct SubbatchNoiseModel {
  Net* net;
  NoiseEstimator* estimator;
  std::size_t parts;
  template <class Theta, class Grad>
  void gradient(const Theta& theta, Grad& g) const noexcept {
    const Net::Batch full = net->batch();
    const std::size_t m = full.size / parts;
    Map sub(g_sub_gradient);
    estimator->begin_batch();
    g.setZero();
    for (std::size_t k = 0; k < parts; ++k) {
      Net::Batch& b = net->batch();
      b.size = m;
      for (std::size_t i = 0; i < m; ++i) b.index[i] = full.index[k * m + i];
      net->gradient(theta, sub);
      estimator->add(sub);
      g += sub;
    }
    g *= 1.0f / float(parts);
    net->batch() = full;
    static_cast<void>(estimator->end_subbatches(net->rows(), m));
  }
};

/// Test-set predictions: the running posterior-predictive sum and one-off point scores.
class Evaluator {
 public:
  Evaluator(const Net& net, const Data& d, int bins)
      : net_(net),
        d_(d),
        bins_(bins),
        sums_(d.n_test * kClasses, 0.0),
        scratch_(d.n_test * kClasses, 0.0) {}

  /// Adds p(· | x, θ) of every test image to the posterior-predictive sum.
  void add(const float* theta) {
    accumulate(theta, sums_);
    ++samples_;
  }
  std::uint64_t samples() const { return samples_; }
  /// Scores of the average over the samples added so far.
  Metrics predictive() const {
    return score(sums_.data(), double(samples_), d_.test_labels, d_.n_test, bins_);
  }
  /// Scores of θ alone.
  Metrics point(const float* theta) {
    std::fill(scratch_.begin(), scratch_.end(), 0.0);
    accumulate(theta, scratch_);
    return score(scratch_.data(), 1.0, d_.test_labels, d_.n_test, bins_);
  }

 private:
  void accumulate(const float* theta, std::vector<double>& sums) {
    const CMap th(theta);
    for (std::size_t first = 0; first < d_.n_test; first += kCapacity) {
      const std::size_t count = std::min<std::size_t>(kCapacity, d_.n_test - first);
      if (!net_.predict(th, d_.test_pixels, first, count, g_probs)) continue;
      double* s = sums.data() + first * kClasses;
      for (std::size_t i = 0; i < count * kClasses; ++i) s[i] += double(g_probs[i]);
    }
  }

  const Net& net_;
  const Data& d_;
  int bins_;
  std::vector<double> sums_;
  std::vector<double> scratch_;
  std::uint64_t samples_ = 0;
};

/// Everything a run shares across methods.
struct Context {
  const Data& data;
  const Settings& s;
  Net& net;
  MinibatchSampler<kCapacity>& batches;
  host::Rng& batch_rng;
  Evaluator& eval;
  Result& result;
  std::uint64_t steps_per_epoch;
  std::uint64_t budget;  // gradient passes
};

/// The run driver's hooks: draw the batch (and run `before`) before each step; after it count
/// the step's gradient passes, keep samples and score the epochs by gradient count, and stop at
/// the budget. Policy: cost(z) (gradient passes of the step just taken) and may_keep(z).
template <class Policy, class Before>
struct Hooks {
  Context& c;
  Policy& policy;
  Before before;
  host::ProgressBar* bar;  // null: no progress bar
  std::uint64_t gradients = 0;
  std::uint64_t next_sample = 0;
  std::uint64_t next_epoch = 0;
  std::uint64_t sample_every = 1;
  double eval_cpu = 0;

  void before_step(std::uint64_t) {
    c.batches.next(c.batch_rng, c.net.batch());
    before();
  }
  template <class St>
  bool after_step(std::uint64_t, const St& z) {
    const std::uint64_t before_step = gradients;
    gradients += policy.cost(z);
    const std::uint64_t burn = c.s.burn_in_epochs * c.steps_per_epoch;
    const bool sampler = is_sampler(c.result.method);
    bool keep = false;
    while (gradients >= next_sample) {  // one sample however many marks a step crossed
      keep = keep || next_sample > burn;
      next_sample += sample_every;
    }
    if (keep && sampler && policy.may_keep(z)) {
      const double t0 = cpu_seconds();
      c.eval.add(z.position().data());
      eval_cpu += cpu_seconds() - t0;
    }
    while (gradients >= next_epoch) {
      const double t0 = cpu_seconds();
      Point p;
      p.epoch = double(next_epoch) / double(c.steps_per_epoch);
      if (sampler && c.eval.samples() > 0) {
        p.metrics = c.eval.predictive();
        p.samples = c.eval.samples();
      } else {
        p.metrics = c.eval.point(z.position().data());
      }
      c.result.curve.push_back(p);
      eval_cpu += cpu_seconds() - t0;
      next_epoch += c.steps_per_epoch;
    }
    if (bar != nullptr) {  // the bar counts gradient passes (an SGNUTS iteration makes many)
      for (std::uint64_t g = before_step; g < std::min(gradients, c.budget); ++g) {
        bar->after_step(g, z);
      }
    }
    return gradients < c.budget;
  }
};

/// One gradient pass per step; every state may be kept.
struct FixedCost {
  std::uint64_t per_step = 1;
  template <class St>
  std::uint64_t cost(const St&) const {
    return per_step;
  }
  template <class St>
  bool may_keep(const St&) const {
    return true;
  }
};

/// The learned refresh: warm-up iterates are not samples.
struct LearnedCost {
  std::uint64_t warmup_gradients = 0;
  template <class St>
  std::uint64_t cost(const St& z) {
    if (!z.extra().lengths.full()) ++warmup_gradients;
    return 1;
  }
  template <class St>
  bool may_keep(const St& z) const {
    return z.extra().lengths.full();
  }
};

/// The seed's SGNUTS: a variable number of passes per iteration, with its tree statistics.
struct NUTSCost {
  std::uint64_t iterations = 0;
  std::uint64_t turned = 0;
  std::uint64_t diverging = 0;
  std::uint64_t depth_sum = 0;
  std::uint64_t max_leaves = 0;
  template <class St>
  std::uint64_t cost(const St& z) {
    const auto e = z.extra();
    ++iterations;
    turned += e.turned ? 1 : 0;
    diverging += e.diverging ? 1 : 0;
    depth_sum += std::uint64_t(e.depth);
    max_leaves = std::max<std::uint64_t>(max_leaves, std::uint64_t(e.leaves));
    return std::uint64_t(e.leaves);
  }
  template <class St>
  bool may_keep(const St&) const {
    return true;
  }
};

/// Runs sampler from θ₀ until the budget is spent.
template <class Sampler, class Model, class Policy, class Before>
void drive(Context& c, const Sampler& sampler, const Model& model, Policy& policy, Before before) {
  typename Sampler::StateMap z(g_state);
  Result& r = c.result;
  if (Status s = sampler.start(z, CMap(g_theta0)); !s) {
    r.status = s.message();
    return;
  }
  host::Rng rng(c.s.seed, 1);
  host::ProgressBar bar = host::progress_bar(c.budget, method_name(r.method));
  Hooks<Policy, Before> hooks{c, policy, before, c.s.progress ? &bar : nullptr};
  hooks.sample_every = std::max<std::uint64_t>(
      1, c.steps_per_epoch / std::max<std::uint64_t>(1, c.s.samples_per_epoch));
  hooks.next_sample = hooks.sample_every;
  hooks.next_epoch = c.steps_per_epoch;
  RunPlan plan;
  plan.samples = c.budget;  // an upper bound: the hooks stop the run at the gradient budget
  const double t0 = cpu_seconds();
  const RunResult rr = sgmcmc::run(sampler, z, model, rng, plan, DiscardSink{}, hooks);
  const double total = cpu_seconds() - t0;
  r.ok = bool(rr.status);
  r.status = rr.status ? "ok" : rr.status.message();
  r.steps = rr.steps;
  r.gradients = hooks.gradients;
  r.eval_cpu = hooks.eval_cpu;
  r.train_cpu = total - hooks.eval_cpu;
  r.samples = c.eval.samples();
  if (!r.curve.empty()) r.final_metrics = r.curve.back().metrics;
}

/// drive() with one gradient pass per step and nothing before it.
template <class Sampler>
void drive_plain(Context& c, const Sampler& sampler, const BatchModel& model) {
  FixedCost cost;
  drive(c, sampler, model, cost, [] {});
}

std::string format(const char* fmt, double a, double b = 0, double c = 0, double d = 0) {
  char buf[256];
  std::snprintf(buf, sizeof buf, fmt, a, b, c, d);
  return buf;
}

}  // namespace

const char* method_name(Method m) {
  switch (m) {
    case Method::SGHMC:
      return "SGHMC";
    case Method::SGLD:
      return "SGLD";
    case Method::SGD:
      return "SGD";
    case Method::SGDMomentum:
      return "SGD with momentum";
    case Method::SGHMCNoise:
      return "SGHMC, online V̂";
    case Method::SGHMCLearned:
      return "SGHMC, learned refresh";
    case Method::SGNUTSSeed:
      return "seed's SGNUTS (biased control)";
  }
  return "?";
}

const char* method_key(Method m) {
  switch (m) {
    case Method::SGHMC:
      return "sghmc";
    case Method::SGLD:
      return "sgld";
    case Method::SGD:
      return "sgd";
    case Method::SGDMomentum:
      return "sgd-momentum";
    case Method::SGHMCNoise:
      return "sghmc-noise";
    case Method::SGHMCLearned:
      return "sghmc-learned";
    case Method::SGNUTSSeed:
      return "sgnuts-seed";
  }
  return "?";
}

bool is_sampler(Method m) {
  return m != Method::SGD && m != Method::SGDMomentum;
}

bool parse_method(const std::string& key, Method& out) {
  for (int i = 0; i < kMethods; ++i) {
    if (key == method_key(Method(i))) {
      out = Method(i);
      return true;
    }
  }
  return false;
}

double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

Metrics score(const double* sums, double weight, const std::uint8_t* labels, std::size_t n,
              int ece_bins) {
  Metrics m;
  if (n == 0 || !(weight > 0)) return m;
  const int bins = std::max(1, ece_bins);
  std::vector<double> conf(std::size_t(bins), 0.0);
  std::vector<double> hits(std::size_t(bins), 0.0);
  std::vector<double> count(std::size_t(bins), 0.0);
  std::size_t correct = 0;
  double nll = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double* p = sums + i * kClasses;
    int best = 0;
    for (int c = 1; c < kClasses; ++c) best = p[c] > p[best] ? c : best;
    const double top = p[best] / weight;
    const bool hit = best == labels[i];
    correct += hit ? 1 : 0;
    // A probability that underflowed to 0 in float counts as 1e-30 (−log = 69).
    nll -= std::log(std::max(p[labels[i]] / weight, 1e-30));
    const int b = std::min(bins - 1, int(top * bins));
    conf[std::size_t(b)] += top;
    hits[std::size_t(b)] += hit ? 1.0 : 0.0;
    count[std::size_t(b)] += 1.0;
  }
  m.accuracy = double(correct) / double(n);
  m.nll = nll / double(n);
  for (int b = 0; b < bins; ++b) m.ece += std::fabs(hits[std::size_t(b)] - conf[std::size_t(b)]);
  m.ece /= double(n);
  return m;
}

Result run(Method m, const Data& data, const Settings& s) {
  Result r;
  r.method = m;
  if (s.batch < 2 || s.batch > std::uint64_t(kCapacity) || s.batch > data.n_train ||
      data.n_test == 0 || s.epochs == 0) {
    r.status = "bad settings: batch must be 2..500 and at most the training rows, epochs > 0";
    return r;
  }
  if (m == Method::SGHMCNoise && (s.noise_subbatches < 2 || s.batch % s.noise_subbatches != 0)) {
    r.status = "bad settings: the batch must split into noise_subbatches >= 2 equal parts";
    return r;
  }
  if (m == Method::SGHMCLearned &&
      (s.learned_max_length < 1 || s.learned_max_length > std::uint64_t(1) << 30)) {
    r.status = "bad settings: learned_max_length must be 1..2^30";
    return r;
  }
  // The labels the network trains on (a permutation of them for the negative control).
  std::vector<std::uint8_t> labels(data.train_labels, data.train_labels + data.n_train);
  host::Rng setup_rng(s.seed, 0);
  if (s.shuffle_labels) {
    for (std::size_t i = labels.size(); i > 1; --i) {
      std::uint32_t j = 0;
      if (uniform_below(setup_rng, std::uint32_t(i), j) != StatusCode::Ok) {
        r.status = "label shuffle: the RNG reached its rejection cap";
        return r;
      }
      std::swap(labels[i - 1], labels[j]);
    }
  }
  Net net(data.train_pixels, labels.data(), data.n_train, g_workspace);
  if (!net.valid()) {
    r.status = "invalid network data";
    return r;
  }
  // θ₀ ~ N(0, init_sd²), the same for every method.
  host::Rng init_rng(s.seed, 2);
  fill_normal(init_rng, g_theta0, kDim);
  for (float& v : g_theta0) v *= float(s.init_sd);

  std::vector<std::uint32_t> order(data.n_train);
  MinibatchSampler<kCapacity> batches(order.data(), data.n_train, s.batch);
  host::Rng batch_rng(s.seed, 3);
  Evaluator eval(net, data, s.ece_bins);
  const std::uint64_t steps_per_epoch = data.n_train / s.batch;
  Context c{data, s, net, batches, batch_rng, eval, r, steps_per_epoch, s.epochs * steps_per_epoch};
  const BatchModel model{&net};
  const float eta = float(s.sghmc_eta);
  const float alpha = float(s.sghmc_alpha);

  switch (m) {
    case Method::SGHMC:
      drive_plain(c, SGHMCSampler(SGHMCParams<float>::from_momentum_sgd(eta, alpha)), model);
      break;
    case Method::SGLD:
      drive_plain(c, SGLDSampler({float(s.sgld_eta), Scaled<float>{1.0f}}), model);
      break;
    case Method::SGD:
      drive_plain(c, SGDSampler({float(s.sgd_eta), Scaled<float>{1.0f}}), model);
      break;
    case Method::SGDMomentum:
      drive_plain(c, SGDMomentumSampler({float(s.momentum_eta), float(s.momentum_alpha)}), model);
      break;
    case Method::SGHMCNoise: {
      NoiseEstimator::Params ep;
      ep.smoothing = float(s.noise_smoothing);
      NoiseEstimator estimator(g_noise, ep);
      SGHMCSampler sampler(SGHMCParams<float>::from_momentum_sgd(eta, alpha));
      const float limit = momentum_noise_limit(sampler.step_size(), sampler.params().friction);
      const SubbatchNoiseModel noisy{&net, &estimator, std::size_t(s.noise_subbatches)};
      FixedCost cost;
      Status applied;
      drive(c, sampler, noisy, cost, [&] {
        const Status st = estimator.apply(sampler, limit);
        if (!st) applied = st;
      });
      // V̂ against the limit 2C/h at the end: how much of the gradient noise the step could
      // remove (a clipped coordinate gets no injected noise at all).
      const auto v = estimator.estimate();
      double mean = 0;
      std::uint64_t over = 0;
      for (int i = 0; i < kDim; ++i) {
        mean += double(v[i]);
        over += v[i] > limit ? 1 : 0;
      }
      r.notes = format(
          "V̂ mean %.3g, limit 2C/h = %.3g; %.1f%% of coordinates clipped at the end, "
          "%.1f%% over the run",
          mean / kDim, double(limit), 100.0 * double(over) / kDim,
          estimator.applied() > 0 ? 100.0 * double(estimator.limited_coordinates()) /
                                        (double(estimator.applied()) * kDim)
                                  : 0.0);
      if (!applied) r.notes += std::string("; set_gradient_noise failed: ") + applied.message();
      break;
    }
    case Method::SGHMCLearned: {
      LearnedSampler::Params p;
      const SGHMCParams<float> q = SGHMCParams<float>::from_momentum_sgd(eta, alpha);
      p.step_size = q.step_size;
      p.friction = q.friction;
      p.mass = 1.0f;
      p.max_length = std::uint32_t(s.learned_max_length);
      const LearnedSampler sampler(p);
      LearnedCost cost;
      drive(c, sampler, model, cost, [] {});
      const LearnedSampler::StateMap z(g_state);
      const auto lengths = z.extra().lengths;
      r.notes = format("%.0f lengths learned, mean %.1f steps; warm-up %.1f epochs",
                       double(lengths.count), lengths.mean(),
                       double(cost.warmup_gradients) / double(steps_per_epoch));
      break;
    }
    case Method::SGNUTSSeed: {
      NUTSSampler::Params p;
      p.learning_rate = float(s.nuts_eta);
      p.momentum_decay = float(s.nuts_alpha);
      p.resample_every = std::uint32_t(s.nuts_resample);
      const NUTSSampler sampler(p);
      NUTSCost cost;
      drive(c, sampler, model, cost, [] {});
      const double it = double(std::max<std::uint64_t>(1, cost.iterations));
      r.notes = format("%.0f iterations, %.1f gradients and %.2f doublings each (max %.0f); ",
                       double(cost.iterations), double(r.gradients) / it,
                       double(cost.depth_sum) / it, double(cost.max_leaves)) +
                format("%.0f%% stopped by a U-turn, %.0f%% kept a diverging subtree",
                       100.0 * double(cost.turned) / it, 100.0 * double(cost.diverging) / it);
      break;
    }
  }
  return r;
}

}  // namespace sgmcmc::fashion
