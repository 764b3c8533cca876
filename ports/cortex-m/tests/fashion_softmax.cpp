// SPDX-License-Identifier: MIT
// Issue 11, part 5: a Bayesian softmax layer sampled by SGHMC on the Cortex-M4F. The host
// computed k = 32 standardised PCA scores of FashionMNIST images (tests/fashion_features.py,
// generated into the build); the firmware samples the 10 × (k + 1) weights (bias included) from
// their posterior given 2000 training images, minibatches of 50 (1500 steps: 37.5 epochs), state in
// static RAM, and scores the posterior predictive (the mean of the sampled softmax probabilities)
// on 1000 held-out test images. Checks: every step succeeds; the predictive accuracy is far above
// chance; the same chain trained on permuted labels (the negative control) stays at chance. Prints
// instructions per SGHMC step (gradient included) under -icount shift=0.
#include <cmath>
#include <cstdint>

#include "fashion_features.hpp"
#include "sgmcmc/cortex_m/check.hpp"
#include "sgmcmc/cortex_m/clock.hpp"
#include "sgmcmc/cortex_m/console.hpp"
#include "sgmcmc/cortex_m/rng.hpp"
#include "sgmcmc/data/minibatch.hpp"
#include "sgmcmc/samplers/sghmc.hpp"

using sgmcmc::cortex_m::Line;

namespace {

constexpr int kClasses = 10;
constexpr int kInputs = fashion_data::kFeatures + 1;  // the scores and a constant 1 (bias)
constexpr int kDim = kClasses * kInputs;              // 330 weights, class-major
constexpr int kBatch = 50;
constexpr long kSteps = 1500;
constexpr long kBurnIn = 250;
constexpr long kThin = 10;  // 125 kept samples

using Sampler = sgmcmc::SGHMC<float, kDim>;

/// p = softmax(W x̃) of one image (x̃ = (x, 1)); the exponent is clamped at −80 so that expf
/// never underflows (newlib's expf would set errno).
void softmax(const float* w, const float* x, float (&p)[kClasses]) noexcept {
  float top = -1e30f;
  for (int c = 0; c < kClasses; ++c) {
    const float* wc = w + c * kInputs;
    float z = wc[kInputs - 1];
    for (int j = 0; j < kInputs - 1; ++j) z += wc[j] * x[j];
    p[c] = z;
    top = z > top ? z : top;
  }
  float sum = 0.0f;
  for (float& v : p) {
    const float d = v - top;
    v = std::exp(d < -80.0f ? -80.0f : d);
    sum += v;
  }
  for (float& v : p) v /= sum;
}

/// U(W) = −Σ_i log softmax(W x̃_i)_{y_i} + ‖W‖²/2 (N(0, 1) prior on every weight); the gradient
/// on the batch the caller drew: W + (N/n) Σ_{i∈B} (p_i − e_{y_i}) x̃_iᵀ.
struct SoftmaxModel {
  const std::uint8_t* labels;
  const sgmcmc::IndexBatch<kBatch>* batch;
  template <class Theta, class Grad>
  void gradient(const Theta& theta, Grad& g) const noexcept {
    const float* w = theta.data();
    for (int i = 0; i < kDim; ++i) g[i] = w[i];
    const float scale = float(fashion_data::kTrain) / float(batch->size);
    for (const std::uint32_t row : *batch) {
      const float* x = fashion_data::kTrainX + row * fashion_data::kFeatures;
      float p[kClasses];
      softmax(w, x, p);
      p[labels[row]] -= 1.0f;
      for (int c = 0; c < kClasses; ++c) {
        const float a = scale * p[c];
        float* gc = g.data() + c * kInputs;
        for (int j = 0; j < kInputs - 1; ++j) gc[j] += a * x[j];
        gc[kInputs - 1] += a;
      }
    }
  }
};

// Everything d- or data-sized is static: the chain's state, the batch indices, the labels it
// trains on and the predictive sums.
Sampler::State g_state;
std::uint32_t g_order[fashion_data::kTrain];
std::uint8_t g_labels[fashion_data::kTrain];
float g_predictive[fashion_data::kTest * kClasses];

struct Outcome {
  long failures = 0;
  long samples = 0;
  float accuracy = 0.0f;
  float nll = 0.0f;
  std::uint64_t step_ticks = 0;
};

/// One chain on g_labels: kSteps SGHMC steps, every kThin-th after burn-in added to the
/// posterior predictive of the test images.
Outcome run_chain(std::uint64_t seed) {
  Sampler::Params p;
  p.step_size = 0.01f;
  p.friction = 10.0f;
  const Sampler sampler(p);
  sgmcmc::cortex_m::Rng rng(seed);
  sgmcmc::MinibatchSampler<kBatch> batches(g_order, fashion_data::kTrain, kBatch);
  sgmcmc::IndexBatch<kBatch> batch;
  const SoftmaxModel model{g_labels, &batch};
  Outcome out;
  if (!sampler.start(g_state, sgmcmc::Vector<float, kDim>::Zero())) {
    out.failures = 1;
    return out;
  }
  for (float& v : g_predictive) v = 0.0f;
  for (long t = 0; t < kSteps; ++t) {
    batches.next(rng, batch);
    const std::uint64_t t0 = sgmcmc::cortex_m::Clock::ticks();
    out.failures += sampler.step(g_state, model, rng) ? 0 : 1;
    out.step_ticks += sgmcmc::cortex_m::Clock::ticks() - t0;
    if (t >= kBurnIn && (t - kBurnIn + 1) % kThin == 0) {
      const float* w = g_state.position().data();
      for (int i = 0; i < fashion_data::kTest; ++i) {
        float q[kClasses];
        softmax(w, fashion_data::kTestX + i * fashion_data::kFeatures, q);
        for (int c = 0; c < kClasses; ++c) g_predictive[i * kClasses + c] += q[c];
      }
      ++out.samples;
    }
  }
  int correct = 0;
  double nll = 0.0;
  for (int i = 0; i < fashion_data::kTest; ++i) {
    const float* q = g_predictive + i * kClasses;
    int best = 0;
    for (int c = 1; c < kClasses; ++c) best = q[c] > q[best] ? c : best;
    correct += best == fashion_data::kTestY[i] ? 1 : 0;
    nll -= std::log(double(q[fashion_data::kTestY[i]]) / double(out.samples));
  }
  out.accuracy = float(correct) / float(fashion_data::kTest);
  out.nll = float(nll / fashion_data::kTest);
  return out;
}

void report(const char* what, const Outcome& o) {
  // -icount shift=0: one instruction per virtual ns, 40 per 25 MHz SysTick tick.
  const std::uint64_t per_step = (o.step_ticks * 40u + kSteps / 2) / kSteps;
  Line().decimals(4) << what << ": posterior-predictive test accuracy " << o.accuracy << ", NLL "
                     << o.nll << " (" << o.samples << " samples, " << o.failures
                     << " failed steps); instructions/step "
                     << static_cast<unsigned long long>(per_step) << '\n';
}

}  // namespace

int main() {
  Line() << "Bayesian softmax layer on FashionMNIST PCA scores, SGHMC (h = 0.01, C = 10) on "
            "Cortex-M4F: "
         << kDim << " weights (10 x " << kInputs << "), " << fashion_data::kTrain
         << " training images, batches of " << kBatch << ", " << kSteps << " steps, "
         << fashion_data::kTest << " held-out test images; state "
         << static_cast<unsigned long>(sizeof(Sampler::State)) << " B of static RAM\n";
  for (int i = 0; i < fashion_data::kTrain; ++i) g_labels[i] = fashion_data::kTrainY[i];
  const Outcome real = run_chain(20140601);
  report("labels", real);

  // Negative control: the same chain on a uniformly random permutation of the labels.
  sgmcmc::cortex_m::Rng shuffle(7);
  for (std::uint32_t i = fashion_data::kTrain; i > 1; --i) {
    std::uint32_t j = 0;
    SGMCMC_CHECK(sgmcmc::uniform_below(shuffle, i, j) == sgmcmc::StatusCode::Ok);
    const std::uint8_t tmp = g_labels[i - 1];
    g_labels[i - 1] = g_labels[j];
    g_labels[j] = tmp;
  }
  const Outcome control = run_chain(20140601);
  report("permuted labels (negative control)", control);

  // Thresholds. Chance is 0.1 (the 1000 test images hold 86–114 of each class). This chain gives
  // 0.793 (0.786 with twice the steps; a numpy prototype in double 0.787), so 0.70 is far above
  // chance and clearly below a working run. Trained on permuted labels the layer has learned
  // nothing about the true ones: measured 0.061; 0.16 leaves room for the chance agreement of a
  // random classifier (a binomial(1000, 0.1) proportion has sd 0.0095; the learned random function
  // correlates the images' errors, so allow more) while any real signal would exceed it.
  SGMCMC_CHECK(real.failures == 0);
  SGMCMC_CHECK(control.failures == 0);
  SGMCMC_CHECK(real.samples == (kSteps - kBurnIn) / kThin);
  SGMCMC_CHECK(real.accuracy > 0.70f);
  SGMCMC_CHECK(real.nll < 1.0f);  // chance: log 10 = 2.30
  SGMCMC_CHECK(control.accuracy < 0.16f);
  SGMCMC_CHECK(control.nll > 2.0f);
  SGMCMC_CHECK(g_state.all_finite());
  return sgmcmc::cortex_m::check::finish();
}
