// SPDX-License-Identifier: MIT
// K chains in one call (batch/batch.hpp): every chain bit for bit the single-chain sampler on its
// own stream (interleaved and per-chain layouts, batch hook and per-chain models, every V̂ path),
// failures isolated per chain with the failed chain byte-identical, no heap, a stack that does not
// grow with d, and a statistical check of the pooled chains with a negative control.
#include <doctest/doctest.h>

#include <pthread.h>
#include <unistd.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <utility>
#include <vector>

#include "alloc_counter.hpp"
#include "fill_only.hpp"
#include "sgmcmc/batch/batch.hpp"
#include "sgmcmc/host/rng.hpp"
#include "sgmcmc/host/streams.hpp"
#include "sgmcmc/sgmcmc.hpp"

using namespace sgmcmc;

namespace {

constexpr std::uint64_t kSeed = 20240611;

/// U = Σ θ_i²/2 + θ_i⁴/40 + 0.2 θ_i θ_{i+1}: coupled and non-quadratic, so a chain's gradient
/// depends on all its coordinates. The batch hook computes the very same arithmetic per chain.
struct Coupled {
  template <class S>
  static S partial(const S* th, int i, int d) noexcept {
    S g = th[i] + S(0.1) * th[i] * th[i] * th[i];
    if (i > 0) g += S(0.2) * th[i - 1];
    if (i + 1 < d) g += S(0.2) * th[i + 1];
    return g;
  }
  template <class Theta, class Grad>
  void gradient(const Theta& theta, Grad& g) const noexcept {
    using S = typename Theta::Scalar;
    const int d = int(theta.size());
    for (int i = 0; i < d; ++i) g[i] = partial<S>(theta.data(), i, d);
  }
  template <class Theta>
  typename Theta::Scalar potential(const Theta& theta) const noexcept {
    using S = typename Theta::Scalar;
    S u = 0;
    for (Index i = 0; i < theta.size(); ++i) {
      u += theta[i] * theta[i] / S(2) + theta[i] * theta[i] * theta[i] * theta[i] / S(40);
      if (i + 1 < theta.size()) u += S(0.2) * theta[i] * theta[i + 1];
    }
    return u;
  }
};
/// The same model with the batch hook (row k of the K × d maps is chain k).
struct CoupledBatched : Coupled {
  template <class Theta, class Grad>
  void batch_gradient(const Theta& theta, Grad& g) const noexcept {
    using S = typename Theta::Scalar;
    const int d = int(theta.cols());
    for (Index k = 0; k < theta.rows(); ++k) {
      S row[512];
      for (int i = 0; i < d; ++i) row[i] = theta(k, i);
      for (int i = 0; i < d; ++i) g(k, i) = partial<S>(row, i, d);
    }
  }
};

/// A start that differs per chain: θ0_i = 0.3 + 0.1 k − 0.05 i.
template <class S, int D>
Vector<S, D> start_of(int k) {
  Vector<S, D> v;
  for (int i = 0; i < D; ++i) v[i] = S(0.3) + S(0.1) * S(k) - S(0.05) * S(i);
  return v;
}

using sgmcmc_test::FillOnly;  // the interleaved batch then copies normals into a tile

/// chain_streams<K>(seed, first) as K RNGs of type Rng (host::Rng or FillOnly).
template <class Rng, int K, std::size_t... I>
std::array<Rng, K> streams_as(std::uint64_t first, std::index_sequence<I...>) {
  const auto s = host::chain_streams<K>(kSeed, first);
  return {Rng{s[I]}...};
}

/// Runs K chains through a Batch and K single-chain samplers on streams first..first+K−1 with the
/// same model, and checks every step's statuses and, at the end, every chain bit for bit.
template <class Sampler, int K, BatchLayout L = BatchLayout::Auto, class Rng = host::Rng,
          class Model>
void check_identical(const Sampler& sampler, const Model& model, int steps, std::uint64_t first = 0,
                     bool expect_fused = true) {
  using B = Batch<Sampler, K, L>;
  constexpr int d = Sampler::dim;
  const B batch(sampler);
  auto z = std::make_unique<typename B::State>();
  auto single = std::make_unique<typename Sampler::State[]>(K);
  for (int k = 0; k < K; ++k) {
    REQUIRE(batch.start(*z, k, start_of<typename Sampler::Scalar, d>(k)));
    REQUIRE(sampler.start(single[k], start_of<typename Sampler::Scalar, d>(k)));
  }
  CHECK(batch.fused() == (B::interleaved && expect_fused));
  auto rngs = streams_as<Rng, K>(first, std::make_index_sequence<K>{});
  auto refs = host::chain_streams<K>(kSeed, first);
  int mismatched_status = 0;
  for (int t = 0; t < steps; ++t) {
    const BatchStatus<K> s = batch.step(*z, model, rngs);
    for (int k = 0; k < K; ++k) {
      const Status r = sampler.step(single[k], model, refs[k]);
      mismatched_status += s[k].code == r.code ? 0 : 1;
    }
  }
  CHECK(mismatched_status == 0);
  for (int k = 0; k < K; ++k) {
    typename Sampler::State c;
    z->get(k, c);
    CHECK_MESSAGE(c == single[k], "chain " << k);
  }
  // The streams are left where the single chains left theirs.
  for (int k = 0; k < K; ++k) CHECK(rngs[k]() == refs[k]());
}

}  // namespace

TEST_CASE("chain_streams<K>(seed, first)[k] draws exactly as Rng(seed, first + k)") {
  const auto streams = host::chain_streams<4>(kSeed, 6);
  int mismatches = 0, neighbour_matches = 0;
  for (int k = 0; k < 4; ++k) {
    host::Rng a = streams[std::size_t(k)];
    host::Rng b(kSeed, std::uint64_t(6 + k));
    host::Rng c(kSeed, std::uint64_t(7 + k));  // negative control: the next stream
    for (int t = 0; t < 100; ++t) {
      const std::uint64_t x = a();
      mismatches += x == b() ? 0 : 1;
      neighbour_matches += x == c() ? 1 : 0;
    }
  }
  CHECK(mismatches == 0);
  CHECK(neighbour_matches == 0);
}

TEST_CASE("interleaved chains are bit for bit the single-chain sampler on their own stream") {
  SGHMC<float, 2>::Params p;
  p.step_size = 0.05f;
  p.friction = 1.5f;
  SUBCASE("SGHMC float d=2, K=8, batch hook") {
    check_identical<SGHMC<float, 2>, 8>(SGHMC<float, 2>(p), CoupledBatched{}, 300);
  }
  SUBCASE("SGHMC float d=8 and double d=4, K=8, an RNG without take_normals") {
    check_identical<SGHMC<float, 8>, 8, BatchLayout::Auto, FillOnly>(SGHMC<float, 8>(), Coupled{},
                                                                     300);
    check_identical<SGHMC<double, 4>, 8, BatchLayout::Auto, FillOnly>(SGHMC<double, 4>(),
                                                                      CoupledBatched{}, 300);
  }
  SUBCASE("SGHMC float d=2, K=3, per-chain gradient") {
    check_identical<SGHMC<float, 2>, 3>(SGHMC<float, 2>(p), Coupled{}, 300);
  }
  SUBCASE("chains 5..7 in a batch of 3 equal chains 5..7 run alone") {
    check_identical<SGHMC<float, 2>, 3>(SGHMC<float, 2>(p), Coupled{}, 100, 5);
  }
  SUBCASE("SGHMC float d=50, K=7: several chunks of 128 lanes") {
    SGHMC<float, 50>::Params q;
    q.step_size = 0.05f;
    check_identical<SGHMC<float, 50>, 7>(SGHMC<float, 50>(q), CoupledBatched{}, 60);
    check_identical<SGHMC<float, 50>, 7>(SGHMC<float, 50>(q), Coupled{}, 60);
  }
  SUBCASE("SGHMC double d=8, K=4") {
    SGHMC<double, 8>::Params q;
    q.step_size = 0.05;
    check_identical<SGHMC<double, 8>, 4>(SGHMC<double, 8>(q), CoupledBatched{}, 200);
  }
  SUBCASE("other integrators: explicit Euler, drift-kick, BAOAB") {
    SGHMC<double, 3, ExplicitEuler>::Params q;
    q.step_size = 0.05;
    check_identical<SGHMC<double, 3, ExplicitEuler>, 5>(SGHMC<double, 3, ExplicitEuler>(q),
                                                        Coupled{}, 200);
    check_identical<SGHMC<double, 3, DriftKick>, 5>(SGHMC<double, 3, DriftKick>(q), Coupled{}, 200);
    check_identical<SGHMC<float, 3, BAOAB>, 6>(SGHMC<float, 3, BAOAB>(p), CoupledBatched{}, 200);
  }
  SUBCASE("SGLD, SGD, SGD with momentum") {
    SGLD<float, 3>::Params q;
    q.step_size = 0.01f;
    check_identical<SGLD<float, 3>, 8>(SGLD<float, 3>(q), CoupledBatched{}, 200);
    check_identical<SGD<double, 4>, 4>(SGD<double, 4>{}, Coupled{}, 100);
    check_identical<SGDMomentum<float, 5>, 8>(SGDMomentum<float, 5>{}, CoupledBatched{}, 100);
  }
  SUBCASE("temperature and gradient noise V̂ are mirrored") {
    SGHMC<float, 4> s(p);
    REQUIRE(s.set_temperature(0.7f));
    REQUIRE(s.set_gradient_noise(2.0f));  // uniform: one σ for every lane
    check_identical<SGHMC<float, 4>, 8>(s, CoupledBatched{}, 150);
    REQUIRE(s.set_temperature(0.0f));  // no noise drawn at all
    check_identical<SGHMC<float, 4>, 8>(s, CoupledBatched{}, 50);
    // A non-uniform V̂, replicated chain by chain (double: see the float case below).
    SGHMC<double, 4>::Params q;
    q.step_size = 0.05;
    SGHMC<double, 4> sd(q);
    REQUIRE(sd.set_temperature(0.7));
    REQUIRE(sd.set_gradient_noise(Vector<double, 4>(0.5, 1.0, 2.0, 4.0)));
    check_identical<SGHMC<double, 4>, 8>(sd, CoupledBatched{}, 150);
  }
  SUBCASE("a V̂ too large to replicate: chains step through a single-chain copy") {
    using S = SGHMC<double, 300>;
    S::Params q;
    q.step_size = 0.02;
    S s(q);
    Vector<double, 300> v;
    for (int i = 0; i < 300; ++i) v[i] = 1.0 + 0.01 * i;
    REQUIRE(s.set_gradient_noise(v));
    check_identical<S, 8>(s, CoupledBatched{}, 20, 0, /*expect_fused=*/false);
  }
}

// A non-uniform V̂ in float: σ_i must be the same bits whether the chain is stepped alone or as
// lanes of a batch (the engine once took σ from Eigen's approximate float packet sqrt, 1–2 ulp
// off std::sqrt on the coordinates that fell on aligned packets).
TEST_CASE("float, non-uniform V̂ replicated chain by chain") {
  SGHMC<float, 4>::Params p;
  p.step_size = 0.05f;
  p.friction = 1.5f;
  SGHMC<float, 4> s(p);
  REQUIRE(s.set_temperature(0.7f));
  REQUIRE(s.set_gradient_noise(Vector<float, 4>(0.5f, 1.0f, 2.0f, 4.0f)));
  check_identical<SGHMC<float, 4>, 8>(s, CoupledBatched{}, 150);
}

TEST_CASE("per-chain layout: samplers that cannot be interleaved step chain by chain") {
  SGNHT<float, 4>::Params p;
  p.step_size = 0.05f;
  static_assert(!Batch<SGNHT<float, 4>, 4>::interleaved, "SGNHT's ξ sums over a chain");
  check_identical<SGNHT<float, 4>, 4>(SGNHT<float, 4>(p), Coupled{}, 200);
  HMC<double, 3>::Params h;
  h.step_size = 0.2;
  h.steps = 5;
  static_assert(!Batch<HMC<double, 3>, 3>::interleaved, "HMC accepts per chain");
  check_identical<HMC<double, 3>, 3>(HMC<double, 3>(h), Coupled{}, 100);
  SGHMC<float, 2>::Params q;
  check_identical<SGHMC<float, 2>, 4, BatchLayout::PerChain>(SGHMC<float, 2>(q), Coupled{}, 100);
}

namespace {

/// Chain-dependent failures while *armed: chain `nan_chain`'s gradient is NaN; chain
/// `flat_chain`'s is zero (finite whatever θ, so that an overflowing state is the only failure).
struct Trap : Coupled {
  const bool* armed = nullptr;
  int nan_chain = -1;
  int flat_chain = -1;
  int self = 0;
  template <class Theta, class Grad>
  void gradient(const Theta& theta, Grad& g) const noexcept {
    Coupled::gradient(theta, g);
    if (*armed && self == nan_chain)
      g[0] = std::numeric_limits<typename Theta::Scalar>::quiet_NaN();
    if (*armed && self == flat_chain) g.setZero();
  }
};

template <class State>
bool same_bytes(const State& a, const State& b) {
  return a == b;  // bit for bit (memcmp) over z and the bookkeeping
}

/// Steps a batch and single chains with per-chain Trap models: chain 2's gradient fails at step
/// `when`; chain 5 is pushed to overflow at the same step. Checks the statuses, that the failed
/// chains are byte-identical to before the step, that the others advanced, and that every chain
/// still matches the single chain afterwards.
template <class Sampler, int K>
void check_isolation(const Sampler& sampler) {
  using B = Batch<Sampler, K>;
  using Scalar = typename Sampler::Scalar;
  constexpr int d = Sampler::dim;
  const B batch(sampler);
  auto z = std::make_unique<typename B::State>();
  auto single = std::make_unique<typename Sampler::State[]>(K);
  bool armed = false;
  Trap models[K];
  for (int k = 0; k < K; ++k) {
    models[k].armed = &armed;
    models[k].nan_chain = 2;
    models[k].flat_chain = 5;
    models[k].self = k;
    REQUIRE(batch.start(*z, k, start_of<Scalar, d>(k)));
    REQUIRE(sampler.start(single[k], start_of<Scalar, d>(k)));
  }
  auto rngs = host::chain_streams<K>(kSeed);
  auto refs = host::chain_streams<K>(kSeed);
  const int when = 7;
  for (int t = 0; t < 12; ++t) {
    armed = t == when;
    if (t == when) {
      // Chain 5: θ and r so large that the step overflows (NonFiniteState).
      typename Sampler::State c;
      z->get(5, c);
      c.momentum()[0] = std::numeric_limits<Scalar>::max();
      c.position()[0] = std::numeric_limits<Scalar>::max();
      z->set(5, c);
      single[5] = c;
    }
    typename Sampler::State before[K];
    for (int k = 0; k < K; ++k) z->get(k, before[k]);
    const BatchStatus<K> s = batch.step(*z, per_chain(models), rngs);
    for (int k = 0; k < K; ++k) {
      const Status r = sampler.step(single[k], models[k], refs[k]);
      CHECK(s[k].code == r.code);
      typename Sampler::State after;
      z->get(k, after);
      if (s[k]) {
        CHECK(!same_bytes(after, before[k]));
      } else {
        CHECK(same_bytes(after, before[k]));
      }
      CHECK(same_bytes(after, single[k]));
    }
    if (t == when) {
      CHECK(s[2] == StatusCode::NonFiniteGradient);
      CHECK(s[5] == StatusCode::NonFiniteState);
      CHECK(s.failures() == 2);
      CHECK(!s);
      // Chain 5 stays stuck at its overflowing values: restart it.
      REQUIRE(batch.start(*z, 5, start_of<Scalar, d>(5)));
      REQUIRE(sampler.start(single[5], start_of<Scalar, d>(5)));
    } else {
      CHECK(s.ok());
    }
  }
}

}  // namespace

TEST_CASE("a failed chain keeps its values byte for byte; the others advance") {
  SGHMC<float, 3>::Params p;
  p.step_size = 0.05f;
  SUBCASE("interleaved, one pass") {
    check_isolation<SGHMC<float, 3>, 8>(SGHMC<float, 3>(p));
  }
  SUBCASE("interleaved, BAOAB (two gradients per step)") {
    check_isolation<SGHMC<float, 3, BAOAB>, 6>(SGHMC<float, 3, BAOAB>(p));
  }
  SUBCASE("per-chain layout") {
    SGNHT<double, 3>::Params q;
    q.step_size = 0.05;
    check_isolation<SGNHT<double, 3>, 6>(SGNHT<double, 3>(q));
  }
  SUBCASE("an invalid sampler: every chain gets its status and nothing is drawn") {
    SGHMC<float, 3>::Params bad = p;
    bad.friction = -1.0f;
    const SGHMC<float, 3> s(bad);
    REQUIRE(!s.status());
    const Batch<SGHMC<float, 3>, 4> batch(s);
    auto z = std::make_unique<Batch<SGHMC<float, 3>, 4>::State>();
    CHECK(batch.start(*z, 0, start_of<float, 3>(0)) == s.status().code);
    auto rngs = host::chain_streams<4>(kSeed);
    auto fresh = host::chain_streams<4>(kSeed);
    const BatchStatus<4> st = batch.step(*z, Coupled{}, rngs);
    for (int k = 0; k < 4; ++k) CHECK(st[k].code == s.status().code);
    float a = 0, b = 0;
    fill_normal(rngs[1], &a, 1);
    fill_normal(fresh[1], &b, 1);
    CHECK(detail::same_bits_of(a, b));
    CHECK(batch.start(*z, 4, start_of<float, 3>(0)) == StatusCode::InvalidParameter);
  }
}

namespace {
struct Allocating : Coupled {
  template <class Theta, class Grad>
  void gradient(const Theta& theta, Grad& g) const {
    std::vector<double> v(4, 0.0);
    Coupled::gradient(theta, g);
    g[0] += v[0];
  }
};
}  // namespace

TEST_CASE("a batch step allocates nothing") {
  SGHMC<double, 6>::Params p;
  p.step_size = 0.05;
  const Batch<SGHMC<double, 6>, 8> interleaved{SGHMC<double, 6>(p)};
  auto zi = std::make_unique<Batch<SGHMC<double, 6>, 8>::State>();
  REQUIRE(interleaved.start(*zi, start_of<double, 6>(0)));
  SGNHT<double, 6>::Params q;
  const Batch<SGNHT<double, 6>, 8> chainwise{SGNHT<double, 6>(q)};
  auto zc = std::make_unique<Batch<SGNHT<double, 6>, 8>::State>();
  REQUIRE(chainwise.start(*zc, start_of<double, 6>(0)));
  auto rngs = host::chain_streams<8>(kSeed);
  bool armed = false;
  Trap models[8];
  for (auto& m : models) m.armed = &armed;
  long allocations = 0;
  {
    sgmcmc_test::AllocationScope scope;
    for (int t = 0; t < 50; ++t) {
      armed = t == 20;
      models[3].nan_chain = 3;
      models[3].self = 3;
      static_cast<void>(interleaved.step(*zi, CoupledBatched{}, rngs));
      static_cast<void>(interleaved.step(*zi, per_chain(models), rngs));  // a failure at t = 20
      static_cast<void>(chainwise.step(*zc, Coupled{}, rngs));
    }
    allocations = scope.count();
  }
  CHECK(allocations == 0);
  // Positive control: the counter sees a model that allocates.
  sgmcmc_test::AllocationScope scope;
  static_cast<void>(interleaved.step(*zi, Allocating{}, rngs));
  CHECK(scope.count() > 0);
}

namespace {

constexpr int kBigD = 4096;
using BigSampler = SGHMC<float, kBigD>;
using BigBatch = Batch<BigSampler, 8, BatchLayout::Interleaved>;

struct BigRun {
  const BigBatch* batch;
  BigBatch::State* z;
  std::array<host::Rng, 8>* rngs;
  bool ok = false;
};

void* big_step(void* arg) {
  auto* run = static_cast<BigRun*>(arg);
  run->ok = run->batch->step(*run->z, Coupled{}, *run->rngs).ok();  // per-chain gradients
  return nullptr;
}

}  // namespace

TEST_CASE("the stack of a batch step does not grow with d (K·d = 32768 on a 64 KiB stack)") {
  // K·d = 32768 floats per block (128 KiB): a step that kept a block of the batch on its stack
  // would overflow the thread's 64 KiB, and one that kept a chain's copy (16 KiB) would use a
  // quarter of it. Where threads need more (AArch64 Linux: PTHREAD_STACK_MIN = 128 KiB), the
  // platform's minimum, which a 128 KiB block plus the step's frames still overflows.
  const long least = sysconf(_SC_THREAD_STACK_MIN);
  const std::size_t stack = std::size_t(least > 64 * 1024 ? least : 64 * 1024);
  MESSAGE("thread stack " << stack / 1024 << " KiB");
  static BigBatch batch{BigSampler{}};
  static BigBatch::State z;
  REQUIRE(batch.start(z, Vector<float, kBigD>::Constant(0.1f)));
  static auto rngs = host::chain_streams<8>(kSeed);
  BigRun run{&batch, &z, &rngs};
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  REQUIRE(pthread_attr_setstacksize(&attr, stack) == 0);
  pthread_t thread;
  REQUIRE(pthread_create(&thread, &attr, big_step, &run) == 0);
  pthread_join(thread, nullptr);
  pthread_attr_destroy(&attr);
  CHECK(run.ok);
  CHECK(batch.fused());
}

namespace {

/// The exact stationary covariance of kick–drift SGHMC (m = 1, V̂ = 0) on U = θ²/(2s²): the
/// update is linear, x' = A x + b ζ with x = (θ, r), so Σ = A Σ Aᵀ + b bᵀ (fixed point).
/// Returns Var θ. No discretisation bias: the check below compares with this exactly.
double exact_theta_variance(double h, double c, double s2, double t) {
  const double a11 = 1 - h * h / s2, a12 = h * (1 - h * c), a21 = -h / s2, a22 = 1 - h * c;
  const double sigma = std::sqrt(2 * c * h * t);
  const double b1 = h * sigma, b2 = sigma;
  double s11 = 0, s12 = 0, s22 = 0;
  for (int it = 0; it < 20000; ++it) {
    const double n11 = a11 * a11 * s11 + 2 * a11 * a12 * s12 + a12 * a12 * s22 + b1 * b1;
    const double n12 = a11 * a21 * s11 + (a11 * a22 + a12 * a21) * s12 + a12 * a22 * s22 + b1 * b2;
    const double n22 = a21 * a21 * s11 + 2 * a21 * a22 * s12 + a22 * a22 * s22 + b2 * b2;
    s11 = n11;
    s12 = n12;
    s22 = n22;
  }
  return s11;
}

struct Gauss2 {  // U = θ₀²/2 + θ₁²/8: N(0, diag(1, 4))
  template <class Theta, class Grad>
  void gradient(const Theta& th, Grad& g) const noexcept {
    g[0] = th[0];
    g[1] = th[1] / 4;
  }
};

/// Whether the pooled draws of 8 batched chains match the exact stationary law: for each
/// coordinate, |mean| and |mean of θ² − Var θ| within 5 standard errors, the errors from the
/// pooled Geyer ESS of θ and of θ² (ess_geyer, per chain, summed). 5 SE: a false failure has
/// probability below 1e-5 per statistic.
bool pooled_moments_match(double temperature, double* worst_z) {
  constexpr int K = 8, n = 20000, burn = 500;
  const double h = 0.2, c = 1.5;
  SGHMC<double, 2>::Params p;
  p.step_size = h;
  p.friction = c;
  SGHMC<double, 2> s(p);
  REQUIRE(s.set_temperature(temperature));
  const Batch<SGHMC<double, 2>, K> batch(s);
  auto z = std::make_unique<Batch<SGHMC<double, 2>, K>::State>();
  REQUIRE(batch.start(*z, Vector<double, 2>(1.0, -1.0)));
  auto rngs = host::chain_streams<K>(kSeed);
  std::vector<double> x(std::size_t(2) * K * n);  // [coordinate][chain][t]
  for (int t = 0; t < burn + n; ++t) {
    REQUIRE(batch.step(*z, Gauss2{}, rngs).ok());
    if (t < burn) continue;
    for (int k = 0; k < K; ++k) {
      for (int i = 0; i < 2; ++i) x[(std::size_t(i) * K + k) * n + (t - burn)] = z->position(k)[i];
    }
  }
  bool ok = true;
  *worst_z = 0;
  for (int i = 0; i < 2; ++i) {
    const double var = exact_theta_variance(h, c, i == 0 ? 1.0 : 4.0, 1.0);
    double sum = 0, sum2 = 0, ess = 0, ess2 = 0;
    std::vector<double> sq(n);
    for (int k = 0; k < K; ++k) {
      const double* xk = &x[(std::size_t(i) * K + k) * n];
      for (int t = 0; t < n; ++t) {
        sum += xk[t];
        sum2 += xk[t] * xk[t];
        sq[std::size_t(t)] = xk[t] * xk[t];
      }
      ess += ess_geyer(xk, n).ess;
      ess2 += ess_geyer(sq.data(), n).ess;
    }
    const double total = double(K) * n;
    const double mean = sum / total, m2 = sum2 / total;
    const double z_mean = std::abs(mean) / std::sqrt(var / ess);
    const double z_var = std::abs(m2 - var) / (std::sqrt(2.0) * var / std::sqrt(ess2));
    *worst_z = std::max(*worst_z, std::max(z_mean, z_var));
    ok = ok && z_mean < 5 && z_var < 5;
  }
  return ok;
}

}  // namespace

TEST_CASE("pooled batched chains reach the exact stationary law; a wrong temperature does not") {
  double z1 = 0, z2 = 0;
  CHECK(pooled_moments_match(1.0, &z1));
  MESSAGE("largest standardised error at T = 1: " << z1);
  // Negative control: noise scaled by √0.8 (what a batch that mis-scaled its lanes' noise would
  // do) gives Var θ 20% low, far outside 5 standard errors.
  CHECK_FALSE(pooled_moments_match(0.8, &z2));
  MESSAGE("largest standardised error at T = 0.8: " << z2);
}
