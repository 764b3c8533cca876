// SPDX-License-Identifier: MIT
// The FashionMNIST experiment's code (src/experiments/fashion_core.cpp) at CI size: the first
// 4000 training and 1000 test images of Debian's dataset-fashion-mnist, two epochs. SGHMC's
// posterior predictive and SGD with momentum's point estimate must be far above chance; trained
// on permuted labels (the negative control) the same SGHMC must stay at chance. Skipped, with a
// message, when the data package is absent. About 2 s of CPU.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "data/idx.hpp"
#include "experiments/fashion_core.hpp"

namespace fx = sgmcmc::fashion;

namespace {

struct Loaded {
  bool ok = false;
  sgmcmc::data::IdxPairResult train, test;
  fx::Data data;
};

const Loaded& loaded() {
  static Loaded l = [] {
    Loaded x;
    x.train = sgmcmc::data::load_fashion_mnist(sgmcmc::data::kFashionMnistDir, true);
    x.test = sgmcmc::data::load_fashion_mnist(sgmcmc::data::kFashionMnistDir, false);
    x.ok = x.train.ok && x.test.ok;
    if (x.ok) {
      x.data.train_pixels = x.train.images.pixels.data();
      x.data.train_labels = x.train.labels.labels.data();
      x.data.n_train = 4000;
      x.data.test_pixels = x.test.images.pixels.data();
      x.data.test_labels = x.test.labels.labels.data();
      x.data.n_test = 1000;
    }
    return x;
  }();
  return l;
}

/// Two epochs of batches of 100 on 4000 images. With N = 4000 the likelihood term is 15 times
/// smaller than on the full set, so η is larger than the full run's, and α = 0.1 (momentum 0.9)
/// forgets the start within these 80 steps.
fx::Settings ci_settings() {
  fx::Settings s;
  s.epochs = 2;
  s.batch = 100;
  s.burn_in_epochs = 1;
  s.samples_per_epoch = 10;
  s.sghmc_eta = 6e-5;
  s.sghmc_alpha = 0.1;
  s.momentum_eta = 6e-5;
  s.momentum_alpha = 0.1;
  return s;
}

}  // namespace

TEST_CASE("CI-sized FashionMNIST: far above chance; permuted labels stay at chance") {
  const Loaded& l = loaded();
  if (!l.ok) {
    MESSAGE("skipped: FashionMNIST is absent (Debian package dataset-fashion-mnist): "
            << (l.train.ok ? l.test.error : l.train.error));
    return;
  }
  // Chance is 0.1 (the first 1000 test images hold 86–114 of each class). Thresholds: trained
  // on 4000 images for two epochs the network reaches 0.78 (SGHMC's posterior predictive) and
  // 0.74 (SGD with momentum) here, so 0.6 is far above chance and clearly below what a working
  // run gives. Trained on permuted labels the network learns nothing about the true labels
  // (measured 0.084): 0.15 is 5 sd of a binomial(1000, 0.1) proportion above chance, a margin for
  // the chance agreement of a random classifier that a real signal would exceed.
  const fx::Settings s = ci_settings();
  const fx::Result sghmc = fx::run(fx::Method::SGHMC, l.data, s);
  REQUIRE(sghmc.ok);
  CHECK(sghmc.gradients == 80);
  CHECK(sghmc.curve.size() == 2);
  CHECK(sghmc.samples == 10);  // the second epoch's samples
  MESSAGE("SGHMC: accuracy " << sghmc.final_metrics.accuracy << ", NLL " << sghmc.final_metrics.nll
                             << ", ECE " << sghmc.final_metrics.ece);
  CHECK(sghmc.final_metrics.accuracy > 0.6);
  CHECK(sghmc.final_metrics.nll < 1.0);  // chance: log 10 = 2.30

  const fx::Result momentum = fx::run(fx::Method::SGDMomentum, l.data, s);
  REQUIRE(momentum.ok);
  MESSAGE("SGD with momentum: accuracy " << momentum.final_metrics.accuracy);
  CHECK(momentum.final_metrics.accuracy > 0.6);
  CHECK(momentum.samples == 0);  // an optimiser: its point estimate is scored

  fx::Settings shuffled = s;
  shuffled.shuffle_labels = true;
  const fx::Result control = fx::run(fx::Method::SGHMC, l.data, shuffled);
  REQUIRE(control.ok);
  MESSAGE("SGHMC on permuted labels: accuracy " << control.final_metrics.accuracy);
  CHECK(control.final_metrics.accuracy < 0.15);
  CHECK(control.final_metrics.nll > 2.0);
}

TEST_CASE("The experiment's scores: accuracy, NLL and ECE by hand") {
  // Three images, two samples averaged (weight 2): probabilities sums / 2.
  const std::uint8_t labels[3] = {0, 1, 2};
  double sums[30] = {};
  sums[0] = 1.8;  // image 0: p(0) = 0.9 → correct, confidence 0.9
  sums[1] = 0.2;
  sums[10] = 1.2;  // image 1: p(0) = 0.6, p(1) = 0.4 → wrong, confidence 0.6
  sums[11] = 0.8;
  sums[22] = 1.0;  // image 2: p(2) = 0.5, p(3) = 0.5 → class 2 wins the tie (first), correct
  sums[23] = 1.0;
  const fx::Metrics m = fx::score(sums, 2.0, labels, 3, 10);
  CHECK(m.accuracy == doctest::Approx(2.0 / 3.0));
  CHECK(m.nll == doctest::Approx(-(std::log(0.9) + std::log(0.4) + std::log(0.5)) / 3));
  // Bins of width 0.1: 0.9 → bin 9 (acc 1), 0.6 → bin 6 (acc 0), 0.5 → bin 5 (acc 1).
  CHECK(m.ece == doctest::Approx((0.1 + 0.6 + 0.5) / 3));
  // A label with probability 0 counts as 1e-30.
  const std::uint8_t wrong[1] = {5};
  CHECK(fx::score(sums, 2.0, wrong, 1, 10).nll == doctest::Approx(-std::log(1e-30)));
}
