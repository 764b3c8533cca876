// SPDX-License-Identifier: MIT
// The Bayesian-neural-network experiment on FashionMNIST (issue 11, docs/experiments/fashion.md):
// the 784-100-10 network of models/mlp.hpp trained or sampled by seven methods at one gradient
// budget, scored on a test set by the posterior predictive. Shared by sgmcmc_fashion and
// tests/fashion.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace sgmcmc::fashion {

/// The methods, in the order the experiment runs them.
enum class Method : int {
  SGHMC,         ///< SGHMC (kick–drift), V̂ = 0
  SGLD,          ///< SGLD
  SGD,           ///< SGD (a point estimate)
  SGDMomentum,   ///< SGD with momentum (a point estimate)
  SGHMCNoise,    ///< SGHMC with the online V̂ (the seed's "noisiness" extension)
  SGHMCLearned,  ///< SGHMC with the U-turn-learned momentum refresh
  SGNUTSSeed,    ///< the seed's SGNUTS: a biased control
};
inline constexpr int kMethods = 7;

/// Display name ("SGHMC, online V̂") and command-line key ("sghmc-noise").
const char* method_name(Method m);
const char* method_key(Method m);
/// Samplers are scored by the posterior predictive, optimisers by their point estimate.
bool is_sampler(Method m);
/// The method with this key; false if none.
bool parse_method(const std::string& key, Method& out);

/// The images and labels the experiment reads (caller-owned, 784 bytes an image).
struct Data {
  const std::uint8_t* train_pixels = nullptr;
  const std::uint8_t* train_labels = nullptr;
  std::size_t n_train = 0;
  const std::uint8_t* test_pixels = nullptr;
  const std::uint8_t* test_labels = nullptr;
  std::size_t n_test = 0;
};

/// Settings. Learning rates are in the SGHMC paper's (η, α) form: for SGHMC h = √η, C = α/√η
/// (SGHMCParams::from_momentum_sgd); SGLD's h is η; SGD's learning rate is η.
struct Settings {
  std::uint64_t epochs = 100;           ///< gradient budget of every method, in epochs
  std::uint64_t batch = 500;            ///< images per minibatch (≤ 500)
  std::uint64_t burn_in_epochs = 20;    ///< samplers: no samples kept before this epoch
  std::uint64_t samples_per_epoch = 4;  ///< samplers: kept samples per epoch after burn-in
  std::uint64_t seed = 20140601;        ///< every random number of a run
  double init_sd = 0.01;                ///< θ₀ ~ N(0, init_sd²) (the SGHMC authors' init_sigma)
  // Step sizes: each the lowest validation NLL of its grid (scripts/fashion-tune; the SGHMC
  // paper's η = 2e-6 is also its grid's best).
  double sghmc_eta = 2e-6;                 ///< SGHMC, SGHMC with V̂ and learned refresh: η
  double sghmc_alpha = 0.01;               ///< ... and α
  double sgld_eta = 1.2e-4;                ///< SGLD: h
  double sgd_eta = 2e-5;                   ///< SGD: learning rate
  double momentum_eta = 2e-7;              ///< SGD with momentum: η
  double momentum_alpha = 0.01;            ///< ... and α (momentum 1 − α)
  std::uint64_t noise_subbatches = 5;      ///< SGHMC with V̂: sub-batches per batch (K)
  double noise_smoothing = 0.02;           ///< ... and the estimator's λ
  std::uint64_t learned_max_length = 200;  ///< learned refresh: cap on a learned length
  double nuts_eta = 2e-6;                  ///< the seed's SGNUTS: η
  double nuts_alpha = 0.01;                ///< ... α
  std::uint64_t nuts_resample = 50;        ///< ... momentum resampling period (iterations)
  int ece_bins = 15;                       ///< equal-width confidence bins of the ECE
  bool shuffle_labels = false;             ///< negative control: train on permuted labels
  bool progress = false;                   ///< a progress bar on stderr
};

/// Scores of predictive probabilities on the test set.
struct Metrics {
  double accuracy = 0;  ///< fraction of images whose most probable class is the label
  double nll = 0;       ///< mean −log p(label)
  double ece = 0;       ///< expected calibration error (max-probability confidence, equal bins)
};

/// One point of a curve: after `epoch` epochs of gradients.
struct Point {
  double epoch = 0;
  Metrics metrics;
  std::uint64_t samples = 0;  ///< samples in the average (0: the current θ alone)
};

/// What one method did.
struct Result {
  Method method = Method::SGHMC;
  bool ok = false;
  std::string status;           ///< "ok" or the failed step's status
  std::vector<Point> curve;     ///< one point per epoch
  Metrics final_metrics;        ///< the last point
  std::uint64_t gradients = 0;  ///< minibatch gradient evaluations (batch-sized passes)
  std::uint64_t steps = 0;      ///< sampler steps (SGNUTS: iterations)
  std::uint64_t samples = 0;    ///< samples averaged at the end
  double train_cpu = 0;         ///< process CPU seconds in steps and batch draws
  double eval_cpu = 0;          ///< process CPU seconds in test-set predictions
  std::string notes;            ///< method-specific diagnostics
};

/// Runs one method. The sampler state lives in this library's static memory, so one run at a
/// time (not thread-safe).
Result run(Method m, const Data& data, const Settings& settings);

/// Scores the mean predictive probabilities sums[10 i + c] / weight of n images.
Metrics score(const double* sums, double weight, const std::uint8_t* labels, std::size_t n,
              int ece_bins);

/// Process CPU time in seconds.
double cpu_seconds();

}  // namespace sgmcmc::fashion
