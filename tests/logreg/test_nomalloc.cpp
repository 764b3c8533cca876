// SPDX-License-Identifier: MIT
// Zero heap in the logistic-regression step path: minibatch draw, LR gradient, V̂ update and
// hand-over, SGLD / SGHMC / SGNHT steps, full-data HMC (and NUTS when present) on the LR model.

// Eigen's runtime allocation guard, made to record instead of abort, and active in Release.
namespace {
bool g_eigen_assert_failed = false;
}
#define EIGEN_RUNTIME_NO_MALLOC
#define eigen_assert(x)                     \
  do {                                      \
    if (!(x)) g_eigen_assert_failed = true; \
  } while (false)

#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "alloc_counter.hpp"
#include "fixtures.hpp"
#include "sgmcmc/data/gradient_noise.hpp"
#include "sgmcmc/data/minibatch.hpp"
#include "sgmcmc/host/rng.hpp"
#include "sgmcmc/models/logistic.hpp"
#include "sgmcmc/sgmcmc.hpp"
#if __has_include("sgmcmc/samplers/nuts.hpp")
#include "sgmcmc/samplers/nuts.hpp"
#define HAVE_NUTS 1
#endif

namespace {

constexpr int kD = 14;  // Heart's dimension
constexpr int kCap = 32;
using LR = sgmcmc::LogisticRegression<double, kD>;
using Vec = sgmcmc::Vector<double, kD>;

/// Runs f() with allocation counting and Eigen's guard on; returns the number of allocations.
template <class F>
long allocations(F&& f) {
  g_eigen_assert_failed = false;
  sgmcmc_test::AllocationScope scope;
  Eigen::internal::set_is_malloc_allowed(false);
  f();
  Eigen::internal::set_is_malloc_allowed(true);
  return scope.count();
}

}  // namespace

TEST_CASE("SG steps on the LR model with minibatches and V̂ allocate nothing") {
  const sgmcmc_test::SyntheticLR<kD> data(216, 4);
  const LR model = data.model();
  std::vector<std::uint32_t> order(data.rows);  // caller-owned, allocated before counting
  sgmcmc::MinibatchSampler<kCap> batches(order.data(), data.rows, 32);
  sgmcmc::host::Rng rng(5);

  sgmcmc::MinibatchGradient<LR, kCap> plain(model, data.rows);
  sgmcmc::GradientNoiseEstimator<double, kD> est;
  sgmcmc::NoiseTrackingGradient<LR, kCap, double, kD> tracked(model, data.rows, &est);

  sgmcmc::SGLD<double, kD> sgld({1e-3, {}});
  sgmcmc::SGHMC<double, kD>::Params hp;
  hp.step_size = 0.02;
  hp.friction = 5.0;
  sgmcmc::SGHMC<double, kD> sghmc(hp);
  sgmcmc::SGNHT<double, kD> sgnht({0.02, 5.0});
  const Vec limit_h = sgmcmc::gradient_noise_limit(sghmc);
  const Vec limit_n = sgmcmc::gradient_noise_limit(sgnht);
  auto z1 = sgld.start(Vec::Zero());
  auto z2 = sghmc.start(Vec::Zero());
  auto z3 = sgnht.start(Vec::Zero());
  bool ok = true;
  const long count = allocations([&] {
    for (int t = 0; t < 200; ++t) {
      batches.next(rng, plain.batch());
      ok = ok && static_cast<bool>(sgld.step(z1, plain, rng));
      ok = ok && static_cast<bool>(est.apply(sghmc, limit_h));
      batches.next(rng, tracked.batch());
      ok = ok && static_cast<bool>(sghmc.step(z2, tracked, rng));
      ok = ok && static_cast<bool>(est.apply(sgnht, limit_n));
      batches.next(rng, tracked.batch());
      ok = ok && static_cast<bool>(sgnht.step(z3, tracked, rng));
    }
  });
  CHECK(ok);
  CHECK(est.batches() == 400);
  CHECK(count == 0);
  CHECK_FALSE(g_eigen_assert_failed);
}

TEST_CASE("full-data HMC and NUTS steps on the LR model allocate nothing") {
  const sgmcmc_test::SyntheticLR<kD> data(100, 8);
  const LR model = data.model();
  sgmcmc::host::Rng rng(6);
  sgmcmc::HMC<double, kD>::Params hp;
  hp.step_size = 0.05;
  hp.steps = 5;
  sgmcmc::HMC<double, kD> hmc(hp);
  auto z = hmc.start(Vec::Zero());
  bool ok = true;
  long count = allocations([&] {
    for (int t = 0; t < 20; ++t) ok = ok && static_cast<bool>(hmc.step(z, model, rng));
  });
  CHECK(ok);
  CHECK(count == 0);
#ifdef HAVE_NUTS
  sgmcmc::NUTS<double, kD>::Params np;
  np.step_size = 0.05;
  sgmcmc::NUTS<double, kD> nuts(np);
  auto w = nuts.start(Vec::Zero());
  count = allocations([&] {
    for (int t = 0; t < 20; ++t) ok = ok && static_cast<bool>(nuts.step(w, model, rng));
  });
  CHECK(ok);
  CHECK(count == 0);
#endif
  CHECK_FALSE(g_eigen_assert_failed);
}

TEST_CASE("negative control: the counter sees a std::vector made inside the scope") {
  const long count = allocations([] {
    std::vector<double> v(16, 1.0);
    CHECK(v.size() == 16);
  });
  CHECK(count >= 1);
}
