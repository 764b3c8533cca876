// SPDX-License-Identifier: MIT
// Minibatch sampler (coverage, no repeats, uniformity) and the minibatch gradient adaptor
// (unbiasedness, the MATH.md §5.3(b) variance, negative controls, no allocation).

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

#include <Eigen/Core>
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "alloc_counter.hpp"
#include "local_rng.hpp"
#include "sgmcmc/core/noise.hpp"
#include "sgmcmc/data/minibatch.hpp"

using sgmcmc::IndexBatch;
using sgmcmc::MinibatchSampler;
using sgmcmc_test::LocalRng;
using Vec2 = sgmcmc::Vector<double, 2>;

namespace {

// Quantile of the chi-square distribution with k degrees of freedom at the standard-normal
// quantile z, by the Wilson-Hilferty cube approximation (relative error < 1% for k >= 10).
double chi2_quantile(double k, double z) {
  const double a = 2.0 / (9.0 * k);
  const double c = 1.0 - a + z * std::sqrt(a);
  return k * c * c * c;
}
constexpr double kZ999 = 3.090232306167813;  // standard-normal 0.999 quantile

// Pearson statistic for counts of N categories when each of T independent trials draws a
// uniformly random m-subset: E c_i = T p, p = m / N, and Cov(c) = T p (1-p) N/(N-1) (I - 11'/N),
// so X2 = (N-1) / (N T p (1-p)) sum_i (c_i - T p)^2 ~ chi2(N - 1) (m = 1: the usual Pearson X2).
double subset_chi2(const std::vector<double>& counts, double trials, double m) {
  const double n = double(counts.size());
  const double p = m / n;
  double ss = 0;
  for (double c : counts) ss += (c - trials * p) * (c - trials * p);
  return (n - 1) * ss / (n * trials * p * (1 - p));
}

// One uniform_below draw that must succeed (a good RNG never reaches the cap).
std::uint32_t draw_below(LocalRng& rng, std::uint32_t bound) {
  std::uint32_t v = bound;
  REQUIRE(sgmcmc::uniform_below(rng, bound, v) == sgmcmc::StatusCode::Ok);
  return v;
}

void check_chi2(double x2, double dof) {
  INFO("X2 = ", x2, " with ", dof, " dof");
  CHECK(x2 > chi2_quantile(dof, -kZ999));
  CHECK(x2 < chi2_quantile(dof, kZ999));
}

}  // namespace

TEST_CASE("uniform_below is in range and has no modulo bias") {
  LocalRng rng(1);
  for (int i = 0; i < 100; ++i) CHECK(draw_below(rng, 1) == 0u);
  // bound = 3 * 2^30: taking 32 bits modulo bound would give P(v < 2^30) = 1/2; unbiased is 1/3.
  const std::uint32_t bound = 3u << 30;
  const int draws = 200000;
  int low = 0;
  for (int i = 0; i < draws; ++i) {
    const std::uint32_t v = draw_below(rng, bound);
    CHECK(v < bound);
    low += v < (1u << 30) ? 1 : 0;
  }
  const double se = std::sqrt((1.0 / 3) * (2.0 / 3) / draws);
  CHECK(std::abs(low / double(draws) - 1.0 / 3) < 5 * se);
  // Small bound: Pearson chi-square over the 7 values.
  std::vector<double> counts(7, 0.0);
  for (int i = 0; i < 70000; ++i) counts[draw_below(rng, 7)] += 1;
  // chi2(6) quantiles 0.001 / 0.999: 0.381 and 22.46 (tables; Wilson-Hilferty is poor at k = 6).
  const double x2 = subset_chi2(counts, 70000, 1);
  CHECK(x2 > 0.381);
  CHECK(x2 < 22.46);
}

namespace {

// A failed RNG: returns the same word forever, and counts how many it was asked for.
struct StuckRng {
  using result_type = std::uint64_t;
  static constexpr result_type min() noexcept { return 0; }
  static constexpr result_type max() noexcept { return ~result_type(0); }
  std::uint64_t word;
  long calls = 0;
  result_type operator()() noexcept {
    ++calls;
    return word;
  }
};

}  // namespace

TEST_CASE("uniform_below reports a stuck RNG after a bounded number of words") {
  // All-zero words are rejected for every bound that is not a power of two: the loop used to
  // spin forever. Now the draw fails after 1 + kMaxIndexRejections words and leaves out alone.
  for (const std::uint32_t bound : {3u, 7u, 1000u, (1u << 31) + 1u, 0xffffffffu}) {
    StuckRng zeros{0};
    std::uint32_t out = 12345;
    CHECK(sgmcmc::uniform_below(zeros, bound, out) == sgmcmc::StatusCode::CapReached);
    CHECK(out == 12345u);
    CHECK(zeros.calls == 1 + sgmcmc::kMaxIndexRejections);
  }
  // A power-of-two bound never rejects, so the same stream gives a value (a single draw cannot
  // tell), and bound = 0 has no value at all.
  StuckRng zeros{0};
  std::uint32_t out = 1;
  CHECK(sgmcmc::uniform_below(zeros, 8, out) == sgmcmc::StatusCode::Ok);
  CHECK(out == 0u);
  LocalRng rng(9);
  out = 77;
  CHECK(sgmcmc::uniform_below(rng, 0, out) == sgmcmc::StatusCode::InvalidParameter);
  CHECK(out == 77u);
}

TEST_CASE("MinibatchSampler::next fails on a stuck RNG and leaves the sampler unchanged") {
  constexpr std::size_t N = 10;
  // Reference: the batches a fresh sampler draws from a good stream.
  std::array<std::uint32_t, N> ref_buffer{};
  MinibatchSampler<4> ref(ref_buffer.data(), N, 3);
  LocalRng ref_rng(10);
  IndexBatch<4> expected[5];
  for (auto& b : expected) REQUIRE(ref.next(ref_rng, b) == sgmcmc::StatusCode::Ok);

  for (const std::uint64_t word : {std::uint64_t(0), ~std::uint64_t(0), std::uint64_t(0x5a5a)}) {
    CAPTURE(word);
    std::array<std::uint32_t, N> buffer{};
    MinibatchSampler<4> sampler(buffer.data(), N, 3);
    LocalRng rng(10);
    IndexBatch<4> batch;
    // Two good batches, then the stuck RNG: every call fails, whatever the word (all zeros hit
    // the rejection cap, any constant repeats a word), within a bounded number of words.
    REQUIRE(sampler.next(rng, batch) == sgmcmc::StatusCode::Ok);
    REQUIRE(sampler.next(rng, batch) == sgmcmc::StatusCode::Ok);
    const auto before = buffer;
    StuckRng stuck{word};
    for (int t = 0; t < 3; ++t) {
      CHECK(sampler.next(stuck, batch) == sgmcmc::StatusCode::CapReached);
      CHECK(batch.size == 0);
      CHECK(sampler.next(stuck).size == 0);
    }
    CHECK(stuck.calls <= 6 * (1 + sgmcmc::kMaxIndexRejections));
    CHECK(buffer == before);
    CHECK(sampler.epoch() == 0);
    // Back on the good stream, the sampler continues exactly as if the failures never happened.
    for (int b = 2; b < 5; ++b) {
      REQUIRE(sampler.next(rng, batch) == sgmcmc::StatusCode::Ok);
      CHECK(batch.size == expected[b].size);
      CHECK(batch.index == expected[b].index);
    }
    CHECK(sampler.epoch() == ref.epoch());
  }
}

TEST_CASE("a one-row batch catches a constant RNG at its second word") {
  // Batch size 1 draws one word per call: the repetition test works across calls.
  std::array<std::uint32_t, 6> buffer{};
  MinibatchSampler<1> sampler(buffer.data(), buffer.size(), 1);
  StuckRng ones{~std::uint64_t(0)};
  IndexBatch<1> batch;
  CHECK(sampler.next(ones, batch) == sgmcmc::StatusCode::Ok);  // one word: nothing to compare
  CHECK(sampler.next(ones, batch) == sgmcmc::StatusCode::CapReached);
  CHECK(ones.calls == 2);
  // An invalid sampler says so.
  MinibatchSampler<1> invalid(buffer.data(), 0, 1);
  CHECK(invalid.next(ones, batch) == sgmcmc::StatusCode::InvalidParameter);
  CHECK(batch.size == 0);
}

TEST_CASE("every row appears exactly once per epoch when the batch size divides N") {
  constexpr std::size_t N = 100;
  std::array<std::uint32_t, N> buffer{};
  MinibatchSampler<16> sampler(buffer.data(), N, 10);
  REQUIRE(sampler.valid());
  CHECK(sampler.scale<double>() == 10.0);
  LocalRng rng(2);
  IndexBatch<16> batch;
  for (int epoch = 0; epoch < 5; ++epoch) {
    std::array<int, N> seen{};
    for (int b = 0; b < 10; ++b) {
      REQUIRE(sampler.next(rng, batch) == sgmcmc::StatusCode::Ok);
      REQUIRE(batch.size == 10);
      CHECK(sampler.epoch() == std::uint64_t(epoch));
      for (std::uint32_t i : batch) {
        REQUIRE(i < N);
        ++seen[i];
      }
    }
    for (int s : seen) CHECK(s == 1);
  }
}

TEST_CASE("batches never repeat a row; epochs are disjoint batches when n does not divide N") {
  constexpr std::size_t N = 103;
  std::vector<std::uint32_t> buffer(N);
  MinibatchSampler<32> sampler(buffer.data(), N, 10);
  LocalRng rng(3);
  for (int epoch = 0; epoch < 20; ++epoch) {
    std::array<int, N> seen{};
    for (int b = 0; b < 10; ++b) {
      const auto batch = sampler.next(rng);
      REQUIRE(batch.size == 10);
      CHECK(sampler.epoch() == std::uint64_t(epoch));
      std::array<int, N> in_batch{};
      for (std::uint32_t i : batch) {
        REQUIRE(i < N);
        CHECK(++in_batch[i] == 1);
        ++seen[i];
      }
    }
    int unused = 0;
    for (int s : seen) {
      CHECK(s <= 1);
      unused += s == 0 ? 1 : 0;
    }
    CHECK(unused == 3);
  }
  // n = N: every batch is a permutation of all rows.
  std::array<std::uint32_t, 8> small{};
  MinibatchSampler<8> whole(small.data(), 8, 8);
  for (int b = 0; b < 50; ++b) {
    const auto batch = whole.next(rng);
    std::array<int, 8> seen{};
    for (std::uint32_t i : batch) ++seen[i];
    for (int s : seen) CHECK(s == 1);
  }
}

TEST_CASE("row frequencies are uniform (chi-square, fixed seed)") {
  // With N = 50 and n = 7, each epoch is 7 disjoint batches and 1 left-over row. Epochs are
  // independent (a Fisher-Yates pass gives a uniform permutation from any start), so
  //  (a) the first batch of each epoch is an independent uniform 7-subset, and
  //  (b) the row frequencies over all batches are T - (left-over counts), the left-over rows
  //      being independent uniform draws: both statistics are chi2(49) under the null.
  constexpr std::size_t N = 50;
  constexpr int epochs = 20000;
  std::array<std::uint32_t, N> buffer{};
  MinibatchSampler<8> sampler(buffer.data(), N, 7);
  LocalRng rng(4);
  std::vector<double> first(N, 0.0);
  std::vector<double> all(N, 0.0);
  for (int e = 0; e < epochs; ++e) {
    for (int b = 0; b < 7; ++b) {
      const auto batch = sampler.next(rng);
      for (std::uint32_t i : batch) {
        all[i] += 1;
        if (b == 0) first[i] += 1;
      }
    }
  }
  CHECK(sampler.epoch() == std::uint64_t(epochs - 1));
  check_chi2(subset_chi2(first, epochs, 7), N - 1);
  std::vector<double> left_over(N);
  for (std::size_t i = 0; i < N; ++i) left_over[i] = epochs - all[i];
  check_chi2(subset_chi2(left_over, epochs, 1), N - 1);
}

TEST_CASE("invalid arguments give an invalid sampler, empty batches and a NaN gradient") {
  std::array<std::uint32_t, 10> buffer{};
  LocalRng rng(5);
  CHECK_FALSE(MinibatchSampler<4>(nullptr, 10, 2).valid());
  CHECK_FALSE(MinibatchSampler<4>(buffer.data(), 0, 1).valid());
  CHECK_FALSE(MinibatchSampler<4>(buffer.data(), 10, 0).valid());
  CHECK_FALSE(MinibatchSampler<4>(buffer.data(), 10, 5).valid());  // above Capacity
  CHECK_FALSE(MinibatchSampler<16>(buffer.data(), 3, 4).valid());  // above N
  MinibatchSampler<4> bad(buffer.data(), 10, 5);
  CHECK(bad.next(rng).size == 0);
}

namespace {

// Linear-Gaussian regression, y_i = x_i' theta + N(0, 1), prior theta ~ N(0, 100 I):
//   -grad log p(y_i | theta) = x_i (x_i' theta - y_i),   -grad log p(theta) = theta / 100,
//   grad U(theta) = sum_i x_i (x_i' theta - y_i) + theta / 100   (the exact full gradient).
// With g_i the per-example terms, g_bar their mean and a_i = g_i - g_bar (sum a_i = 0),
//   grad U~ = (N/n) sum_{i in S} g_i + theta/100 = grad U + (N/n) sum_{i in S} a_i.
// For S a uniform n-subset, P(i in S) = n/N, so E sum_S a_i = (n/N) sum_i a_i = 0: unbiased.
// The finite-population variance of a without-replacement sum, n (N-n)/(N-1) (1/N) sum a_i a_i',
// times (N/n)^2, gives Cov grad U~ = N (N-n) / (n (N-1)) sum_i a_i a_i'   (MATH.md §5.3(b)).
struct LinearGaussian {
  static constexpr std::size_t N = 41;
  std::array<Vec2, N> x;
  std::array<double, N> y;

  explicit LinearGaussian(LocalRng& rng) {
    for (std::size_t i = 0; i < N; ++i) {
      const double t = 4.0 * (double(i) - 20.0) / double(N) + 0.3 * sgmcmc::normal<double>(rng);
      x[i] = Vec2(1.0, t);
      y[i] = 0.5 + 1.5 * t + sgmcmc::normal<double>(rng);
    }
    x[N - 1] = Vec2(1.0, 6.0);  // an outlier row, so the off-by-one control has a clear bias
    y[N - 1] = -4.0;
  }

  Vec2 example(std::size_t i, const Vec2& th) const { return x[i] * (x[i].dot(th) - y[i]); }

  void add_gradient(std::uint32_t i, const Vec2& th, Vec2& acc) const noexcept {
    acc += x[i] * (x[i].dot(th) - y[i]);
  }
  void add_prior_gradient(const Vec2& th, Vec2& acc) const noexcept { acc += th / 100.0; }

  Vec2 full_gradient(const Vec2& th) const {
    Vec2 g = th / 100.0;
    for (std::size_t i = 0; i < N; ++i) g += example(i, th);
    return g;
  }

  // Covariance of grad U~ for batch size n, as a 2x2 matrix.
  Eigen::Matrix2d batch_covariance(const Vec2& th, std::size_t n) const {
    Vec2 mean = Vec2::Zero();
    for (std::size_t i = 0; i < N; ++i) mean += example(i, th) / double(N);
    Eigen::Matrix2d s = Eigen::Matrix2d::Zero();
    for (std::size_t i = 0; i < N; ++i) {
      const Vec2 a = example(i, th) - mean;
      s += a * a.transpose();
    }
    return s * (double(N) * double(N - n) / (double(n) * double(N - 1)));
  }
};

constexpr std::size_t kBatch = 4;
constexpr int kDraws = 20000;

// Sample moments of draws of grad U~ projected on u: mean, variance and central 4th moment.
struct Projected {
  double mean = 0, var = 0, m4 = 0;
};

template <class Draw>
std::array<Projected, 3> project(Draw&& draw) {
  const Vec2 dirs[3] = {Vec2(1, 0), Vec2(0, 1), Vec2(1, 1)};
  std::vector<Vec2> g(kDraws);
  for (auto& v : g) v = draw();
  std::array<Projected, 3> out;
  for (int k = 0; k < 3; ++k) {
    double s = 0;
    for (const auto& v : g) s += dirs[k].dot(v);
    const double mean = s / kDraws;
    double s2 = 0, s4 = 0;
    for (const auto& v : g) {
      const double d = dirs[k].dot(v) - mean;
      s2 += d * d;
      s4 += d * d * d * d;
    }
    out[k] = {mean, s2 / (kDraws - 1), s4 / kDraws};
  }
  return out;
}

// Largest |mean - exact| in Monte-Carlo standard errors sqrt(u' V u / kDraws), V the exact
// covariance, over the directions (1,0), (0,1), (1,1). Valid for independent draws.
double bias_in_standard_errors(const std::array<Projected, 3>& p, const Vec2& exact,
                               const Eigen::Matrix2d& cov) {
  const Vec2 dirs[3] = {Vec2(1, 0), Vec2(0, 1), Vec2(1, 1)};
  double worst = 0;
  for (int k = 0; k < 3; ++k) {
    const double se = std::sqrt(dirs[k].dot(cov * dirs[k]) / kDraws);
    worst = std::max(worst, std::abs(p[k].mean - dirs[k].dot(exact)) / se);
  }
  return worst;
}

}  // namespace

TEST_CASE("the minibatch gradient is unbiased and has the §5.3(b) covariance") {
  LocalRng rng(6);
  const LinearGaussian model(rng);
  const Vec2 theta(0.2, -0.3);
  const Vec2 exact = model.full_gradient(theta);
  const Eigen::Matrix2d cov = model.batch_covariance(theta, kBatch);
  constexpr std::size_t N = LinearGaussian::N;

  std::array<std::uint32_t, N> buffer{};
  sgmcmc::MinibatchGradient<LinearGaussian, 8> adaptor(model, N);

  SUBCASE("independent batches: mean within 5 standard errors, variance within 5 of its own") {
    // A fresh sampler per draw makes each batch an independent uniform n-subset.
    const auto p = project([&] {
      MinibatchSampler<8> sampler(buffer.data(), N, kBatch);
      REQUIRE(sampler.next(rng, adaptor.batch()) == sgmcmc::StatusCode::Ok);
      Vec2 g;
      adaptor.gradient(theta, g);
      return g;
    });
    CHECK(bias_in_standard_errors(p, exact, cov) < 5.0);
    // Sample variance vs u' V u; its standard error is sqrt((m4 - var^2) / draws).
    const Vec2 dirs[3] = {Vec2(1, 0), Vec2(0, 1), Vec2(1, 1)};
    for (int k = 0; k < 3; ++k) {
      const double expected = dirs[k].dot(cov * dirs[k]);
      const double se = std::sqrt((p[k].m4 - p[k].var * p[k].var) / kDraws);
      INFO("direction ", k, ": sample variance ", p[k].var, " vs formula ", expected);
      CHECK(std::abs(p[k].var - expected) < 5 * se);
    }
  }

  SUBCASE("the sampler's own stream of batches is unbiased too") {
    // Batches within an epoch are disjoint, hence negatively correlated: the mean's error is
    // smaller than for independent draws and the 5-standard-error bound is conservative.
    MinibatchSampler<8> sampler(buffer.data(), N, kBatch);
    const auto p = project([&] {
      REQUIRE(sampler.next(rng, adaptor.batch()) == sgmcmc::StatusCode::Ok);
      Vec2 g;
      adaptor.gradient(theta, g);
      return g;
    });
    CHECK(bias_in_standard_errors(p, exact, cov) < 5.0);
  }

  SUBCASE("negative control: a missing N/n factor fails the same check") {
    const auto p = project([&] {
      MinibatchSampler<8> sampler(buffer.data(), N, kBatch);
      REQUIRE(sampler.next(rng, adaptor.batch()) == sgmcmc::StatusCode::Ok);
      Vec2 g = Vec2::Zero();
      for (std::uint32_t i : adaptor.batch()) model.add_gradient(i, theta, g);
      model.add_prior_gradient(theta, g);
      return g;
    });
    CHECK(bias_in_standard_errors(p, exact, cov) > 5.0);
  }

  SUBCASE("negative control: a batch that can never hold the last row fails the same check") {
    // Off-by-one Fisher-Yates over the first N-1 rows. Its expectation is
    // N/(N-1) (sum_{i<N-1} g_i) + prior, biased by -N a_{N-1} / (N-1).
    const Vec2 bias = -(model.example(N - 1, theta) - (exact - theta / 100.0) / double(N)) *
                      (double(N) / double(N - 1));
    const double bias_se = std::abs(bias[1]) / std::sqrt(cov(1, 1) / kDraws);
    INFO("analytic bias of coordinate 1: ", bias_se, " standard errors");
    REQUIRE(bias_se > 10.0);  // the control is meaningful at this sample size
    const auto p = project([&] {
      std::array<std::uint32_t, N> order{};
      for (std::size_t i = 0; i < N; ++i) order[i] = std::uint32_t(i);
      auto& batch = adaptor.batch();
      for (std::size_t k = 0; k < kBatch; ++k) {
        const std::size_t j = k + draw_below(rng, std::uint32_t(N - 1 - k));  // bug
        std::swap(order[k], order[j]);
        batch.index[k] = order[k];
      }
      batch.size = kBatch;
      Vec2 g;
      adaptor.gradient(theta, g);
      return g;
    });
    CHECK(bias_in_standard_errors(p, exact, cov) > 5.0);
  }
}

TEST_CASE("the adaptor computes (N/n) sum + prior exactly, and NaN for an empty batch") {
  LocalRng rng(7);
  const LinearGaussian model(rng);
  const Vec2 theta(-1.0, 0.5);
  sgmcmc::MinibatchGradient<LinearGaussian, 4> adaptor(model, LinearGaussian::N);
  adaptor.batch().index = {3, 17, 40, 0};
  adaptor.batch().size = 3;
  Vec2 g;
  adaptor.gradient(theta, g);
  const Vec2 expected =
      (model.example(3, theta) + model.example(17, theta) + model.example(40, theta)) *
          (double(LinearGaussian::N) / 3.0) +
      theta / 100.0;
  CHECK((g - expected).norm() < 1e-12 * expected.norm());
  adaptor.batch().size = 0;
  adaptor.gradient(theta, g);
  CHECK(std::isnan(g[0]));
  CHECK(std::isnan(g[1]));
}

TEST_CASE("drawing a batch and the adaptor's gradient do not allocate") {
  LocalRng rng(8);
  const LinearGaussian model(rng);
  std::array<std::uint32_t, LinearGaussian::N> buffer{};
  MinibatchSampler<8> sampler(buffer.data(), LinearGaussian::N, 5);
  sgmcmc::MinibatchGradient<LinearGaussian, 8> adaptor(model, LinearGaussian::N);
  const Vec2 theta(0.1, 0.2);
  Vec2 g;

  g_eigen_assert_failed = false;
  long allocations = -1;
  bool all_ok = true;
  {
    const sgmcmc_test::AllocationScope scope;  // also counts malloc and operator new
    Eigen::internal::set_is_malloc_allowed(false);
    for (int i = 0; i < 100; ++i) {
      all_ok = sampler.next(rng, adaptor.batch()) == sgmcmc::StatusCode::Ok && all_ok;
      adaptor.gradient(theta, g);
    }
    Eigen::internal::set_is_malloc_allowed(true);
    allocations = scope.count();
  }
  CHECK(allocations == 0);
  CHECK(all_ok);
  CHECK_FALSE(g_eigen_assert_failed);
  CHECK(std::isfinite(g[0]));

  // Positive control: the guard does fire on a dynamic allocation.
  Eigen::internal::set_is_malloc_allowed(false);
  Eigen::VectorXd dynamic(16);
  Eigen::internal::set_is_malloc_allowed(true);
  CHECK(g_eigen_assert_failed);
  dynamic.setZero();
  CHECK(dynamic.size() == 16);
}

TEST_CASE("an excluding sampler draws only the other rows, each once per epoch") {
  // N = 40 with 4 rows excluded (a census): the 36 others in batches of 9, four per epoch.
  constexpr std::size_t N = 40;
  const std::array<std::uint32_t, 4> census{0, 7, 8, 39};
  std::array<std::uint32_t, N - 4> buffer{};
  MinibatchSampler<16> sampler(buffer.data(), N, 9, census.data(), census.size());
  REQUIRE(sampler.valid());
  CHECK(sampler.rows() == N - 4);
  CHECK(sampler.scale<double>() == 4.0);
  LocalRng rng(5);
  IndexBatch<16> batch;
  for (int epoch = 0; epoch < 3; ++epoch) {
    std::array<int, N> seen{};
    for (int b = 0; b < 4; ++b) {
      REQUIRE(sampler.next(rng, batch) == sgmcmc::StatusCode::Ok);
      for (std::uint32_t i : batch) {
        REQUIRE(i < N);
        ++seen[i];
      }
    }
    for (std::size_t i = 0; i < N; ++i) {
      const bool excluded = i == 0 || i == 7 || i == 8 || i == 39;
      CHECK(seen[i] == (excluded ? 0 : 1));
    }
  }
  // Refused: unsorted, repeated or out-of-range lists, all rows excluded, a batch larger than
  // the rows left, a null list with a count.
  const std::array<std::uint32_t, 3> unsorted{3, 1, 5}, repeated{1, 1, 5}, outside{1, 5, 40};
  CHECK_FALSE(MinibatchSampler<16>(buffer.data(), N, 9, unsorted.data(), 3).valid());
  CHECK_FALSE(MinibatchSampler<16>(buffer.data(), N, 9, repeated.data(), 3).valid());
  CHECK_FALSE(MinibatchSampler<16>(buffer.data(), N, 9, outside.data(), 3).valid());
  CHECK_FALSE(MinibatchSampler<16>(buffer.data(), 3, 1, unsorted.data(), 3).valid());
  CHECK_FALSE(MinibatchSampler<16>(buffer.data(), 11, 9, census.data(), 3).valid());  // 8 left
  CHECK(MinibatchSampler<16>(buffer.data(), 12, 9, census.data(), 3).valid());        // 9 left
  CHECK_FALSE(MinibatchSampler<16>(buffer.data(), N, 9, nullptr, 2).valid());
  std::array<std::uint32_t, N> every{};  // no row excluded: the buffer holds all N
  CHECK(MinibatchSampler<16>(every.data(), N, 9, nullptr, 0).valid());
}

TEST_CASE("largest_rows picks the top scores in index order and refuses bad input") {
  const std::array<double, 8> score{0.5, 3.0, -1.0, 3.0, 7.0, 0.5, 2.0, 0.5};
  std::array<std::uint32_t, 8> out{};
  REQUIRE(sgmcmc::largest_rows(score.data(), 8, 3, out.data()));
  CHECK(out[0] == 1);  // scores 7, 3, 3: rows 4, 1, 3
  CHECK(out[1] == 3);
  CHECK(out[2] == 4);
  REQUIRE(sgmcmc::largest_rows(score.data(), 8, 5, out.data()));     // + 2.0 (row 6), then the
  CHECK(std::vector<std::uint32_t>(out.begin(), out.begin() + 5) ==  // first 0.5 (row 0)
        std::vector<std::uint32_t>{0, 1, 3, 4, 6});
  REQUIRE(sgmcmc::largest_rows(score.data(), 8, 8, out.data()));
  for (std::uint32_t i = 0; i < 8; ++i) CHECK(out[i] == i);
  // Against a full sort on 1000 random scores.
  LocalRng rng(9);
  std::vector<double> many(1000);
  for (double& v : many) v = sgmcmc::uniform_open01<double>(rng);
  std::vector<std::uint32_t> top(37), rank(1000);
  REQUIRE(sgmcmc::largest_rows(many.data(), many.size(), top.size(), top.data()));
  for (std::uint32_t i = 0; i < 1000; ++i) rank[i] = i;
  std::sort(rank.begin(), rank.end(),
            [&](std::uint32_t a, std::uint32_t b) { return many[a] > many[b]; });
  std::vector<std::uint32_t> expect(rank.begin(), rank.begin() + 37);
  std::sort(expect.begin(), expect.end());
  CHECK(top == expect);
  // Refusals leave `out` untouched.
  const std::array<std::uint32_t, 8> before = out;
  std::array<double, 8> nan_score = score;
  nan_score[5] = std::numeric_limits<double>::quiet_NaN();
  CHECK_FALSE(sgmcmc::largest_rows(nan_score.data(), 8, 3, out.data()));
  CHECK_FALSE(sgmcmc::largest_rows(score.data(), 8, 0, out.data()));
  CHECK_FALSE(sgmcmc::largest_rows(score.data(), 8, 9, out.data()));
  CHECK_FALSE(sgmcmc::largest_rows<double>(nullptr, 8, 3, out.data()));
  CHECK(out == before);
}
