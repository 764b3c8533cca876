// SPDX-License-Identifier: MIT
// Chains across threads (parallel/chains.hpp): every chain and the summary bit for bit the same
// for 1 and 2 threads, a reversed serial order and oneTBB; a chain equals the single sampler on
// its stream; a failed chain is isolated; R̂ and the pooled mean with a negative control.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>

#include "same_chains.hpp"
#include "sgmcmc/host/rng.hpp"
#include "sgmcmc/host/streams.hpp"
#include "sgmcmc/parallel/chains.hpp"
#include "sgmcmc/sgmcmc.hpp"
#if SGMCMC_TEST_TBB
#include "sgmcmc/parallel/tbb.hpp"
#endif

using namespace sgmcmc;

namespace {

constexpr std::uint64_t kSeed = 20261125;
constexpr int K = 4;
constexpr int D = 3;
using Sampler = SGHMC<double, D>;
using Run = Chains<Sampler, K, host::Rng>;

/// U = ‖θ − μ‖²/2 + θ₀⁴/40 (non-Gaussian in θ₀); nan: every gradient is NaN.
struct Target {
  double shift = 0;
  bool nan = false;
  template <class Theta, class Grad>
  void gradient(const Theta& theta, Grad& g) const noexcept {
    for (int i = 0; i < D; ++i) g[i] = theta[i] - shift;
    g[0] += theta[0] * theta[0] * theta[0] / 10;
    if (nan) g[1] = std::numeric_limits<double>::quiet_NaN();
  }
};

Sampler make_sampler() {
  Sampler::Params p;
  p.step_size = 0.1;
  p.friction = 1.0;
  return Sampler(p);
}

/// Chain k starts at (2k − 3)·(1, −1, 0.5): dispersed, as R̂ wants.
Vector<double, D> start_of(int k) {
  return double(2 * k - 3) * Vector<double, D>(1.0, -1.0, 0.5);
}

std::unique_ptr<Run> started() {
  auto run = std::make_unique<Run>(host::chain_streams<K>(kSeed));
  const Sampler s = make_sampler();
  for (int k = 0; k < K; ++k) {
    REQUIRE(s.start(run->state[k], start_of(k)));
  }
  return run;
}

bool identical(const Run& a, const Run& b) {
  return sgmcmc_test::same_chains(a, b);
}

/// One chain after another, last first: a schedule no thread team would pick.
struct Reversed {
  template <class F>
  void operator()(int begin, int end, const F& f) const noexcept {
    for (int k = end - 1; k >= begin; --k) f(k);
  }
};

}  // namespace

TEST_CASE("the chains and their summary do not depend on the thread count or the executor") {
#if defined(_OPENMP)
  MESSAGE("OpenMP " << _OPENMP << ", up to " << omp_get_max_threads() << " threads");
#else
  MESSAGE("no OpenMP: the chains run one after the other");
#endif
  const Sampler s = make_sampler();
  auto one = started();
  one->run(s, Target{}, 100, 2000, 1);
  auto two = started();
  two->run(s, Target{}, 100, 2000, 2);
  auto rev = started();
  rev->run_with(Reversed{}, s, Target{}, 100, 2000);
  CHECK(identical(*one, *two));
  CHECK(identical(*one, *rev));
#if SGMCMC_TEST_TBB
  auto tbb2 = started();
  tbb2->run_with(TbbExecutor{2}, s, Target{}, 100, 2000);
  CHECK(identical(*one, *tbb2));
#endif
  // Negative control: the comparison sees one step more on one chain.
  auto off = started();
  off->run(s, Target{}, 101, 2000, 2);
  CHECK_FALSE(identical(*one, *off));
  // Chain 2 is the plain single-chain loop on stream Rng(seed, 2).
  Sampler::State z;
  REQUIRE(s.start(z, start_of(2)));
  host::Rng r(kSeed, 2);
  for (int t = 0; t < 2100; ++t) REQUIRE(s.step(z, Target{}, r));
  CHECK(z == one->state[2]);
  for (int k = 0; k < K; ++k) CHECK(one->status[k]);
}

TEST_CASE("a failed chain stops with its status and state; the others are untouched") {
  const Sampler s = make_sampler();
  Target models[K];
  models[1].nan = true;
  auto clean = started();
  clean->run(s, Target{}, 50, 400, 2);
  auto faulty = started();
  const Sampler::State before = faulty->state[1];
  faulty->run(s, per_chain(models), 50, 400, 2);
  CHECK(faulty->status[1] == StatusCode::NonFiniteGradient);
  CHECK(faulty->state[1] == before);
  for (int k : {0, 2, 3}) {
    CHECK(faulty->status[k]);
    CHECK(faulty->state[k] == clean->state[k]);
  }
  const auto sum = faulty->summary();
  CHECK(sum.failed == 1);
  CHECK(sum.chains == 3);
  CHECK(sum.draws == 3u * 400u);
  CHECK(std::isfinite(sum.rhat[0]));
}

namespace {

/// R̂ and the mean of θ₁ and θ₂ (exactly 0 by symmetry for the shared target) from a run of
/// K chains with chain k's target shifted by k·spread.
ChainsSummary<D> summary_for(double spread) {
  const Sampler s = make_sampler();
  Target models[K];
  for (int k = 0; k < K; ++k) models[k].shift = spread * k;
  auto run = started();
  run->run(s, per_chain(models), 500, 20000, 2);
  for (int k = 0; k < K; ++k) REQUIRE(run->status[k]);
  return run->summary();
}

}  // namespace

TEST_CASE("R̂ near 1 and the pooled mean within 5 SE; chains on shifted targets fail both") {
  // Tolerances: 8 half-chains of 10000 draws with a pooled ESS of several thousand put R̂ − 1
  // well below 0.01 (its spread is O(1/ESS per half)); 1.02 leaves room. The mean of θ₁, θ₂ is 0
  // exactly (U symmetric in them); its standard error is sd/√ESS, 5 SE false-fails below 1e-5.
  const auto good = summary_for(0.0);
  MESSAGE("R̂ " << good.rhat.transpose() << "  ESS " << good.ess.transpose());
  for (int i = 0; i < D; ++i) CHECK(good.rhat[i] < 1.02);
  for (int i = 1; i < D; ++i)
    CHECK(std::abs(good.mean[i]) < 5 * good.sd[i] / std::sqrt(good.ess[i]));
  CHECK(good.draws == std::uint64_t(K) * 20000u);
  // Negative control: the chains sample targets 0.5 apart, which R̂ must flag (> 1.1) and which
  // moves the pooled mean of θ₁ to 0.75, far outside 5 SE.
  const auto bad = summary_for(0.5);
  MESSAGE("shifted: R̂ " << bad.rhat.transpose() << "  mean " << bad.mean.transpose());
  CHECK(bad.rhat[1] > 1.1);
  CHECK(std::abs(bad.mean[1]) > 5 * bad.sd[1] / std::sqrt(bad.ess[1]));
}
