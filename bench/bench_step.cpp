// SPDX-License-Identifier: MIT
// ns/step of every sampler against an independent floor (DESIGN §7): the floor draws the step's
// normals from the bench's own SIMD generator (floor.c, no library code) and makes one fused
// multiply-add pass over a state-sized vector. Each row also times, in the same run, the
// library's normal fill and std::normal_distribution per variate. HMC is timed per leapfrog
// step against a bare HMC loop written here. docs/PERFORMANCE.md shows the table.

// GCC 12 with -march=native on AVX-512 warns inside its own intrinsic headers when Eigen uses
// _mm512_undefined_* (GCC bug 105593, a false positive); with -Werror that fails the build.
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ == 12
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include <time.h>

#if defined(__SSE__) || defined(__x86_64__)
#include <xmmintrin.h>
#endif

#include "floor.h"
#include "sgmcmc/host/rng.hpp"
#include "sgmcmc/sgmcmc.hpp"

namespace {

/// CPU time of the calling thread in ns: on a shared machine it leaves out the time the thread
/// was descheduled, which wall time would charge to whichever loop happened to be running.
std::int64_t thread_ns() noexcept {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<std::int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec;
}

/// U = θᵀθ/2: the cheapest gradient a sampler can be given (g = θ, inlined), so that the timing
/// is the sampler's own work. The noisy chains stay near N(0, I); the optimisers converge to 0.
struct Quadratic {
  template <class Theta, class Grad>
  void gradient(const Theta& theta, Grad& g) const noexcept {
    g = theta;
  }
  template <class Theta>
  typename Theta::Scalar potential(const Theta& theta) const noexcept {
    return theta.squaredNorm() / typename Theta::Scalar(2);
  }
};

/// Aligned heap storage for the bench's own vectors (allocated before timing).
template <class T>
struct Buffer {
  explicit Buffer(std::size_t n)
      : p(static_cast<T*>(::operator new[](n * sizeof(T), std::align_val_t(64)))), n(n) {
    for (std::size_t i = 0; i < n; ++i) p[i] = T(0);
  }
  ~Buffer() { ::operator delete[](p, std::align_val_t(64)); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  T* p;
  std::size_t n;
};

/// U = θᵀθ/2 + |Xθ|²/2 with X a fixed N × d matrix, N = 100 rows: the posterior of a Bayesian
/// linear regression with a standard-normal prior, whose gradient θ + Xᵀ(Xθ) costs 2Nd
/// multiply-adds, as a small data set's would. The HMC and NUTS rows "-rows" run it to show how
/// much of a leapfrog step the sampler's own work is once the gradient costs what a model's does;
/// the library and the bare loops call it alike (it is the user's model, written here, with
/// Eigen's coefficient-wise products: its matrix-vector kernel trips GCC 12's
/// -Waggressive-loop-optimizations in the portable -Werror build). X's entries are fixed in
/// [−0.05, 0.05); H's curvature is within [1, 1.3] at d = 10 and [1, 3.7] at d = 100, where
/// the leapfrog steps h = 0.1 and 0.2 are stable.
template <class Scalar, int D>
struct Rows {
  static constexpr int N = 100;
  using X = Eigen::Map<const Eigen::Matrix<Scalar, N, D>, Eigen::Aligned16>;
  Buffer<Scalar> x{std::size_t(N) * D};
  Rows() {
    for (int i = 0; i < N * D; ++i) x.p[i] = Scalar((i * 7919) % 1000 - 500) / Scalar(10000);
  }
  template <class Theta, class Grad>
  void gradient(const Theta& theta, Grad& g) const noexcept {
    const Eigen::Matrix<Scalar, N, 1> y = X(x.p).lazyProduct(theta);
    g = theta + X(x.p).transpose().lazyProduct(y);
  }
  template <class Theta>
  Scalar potential(const Theta& theta) const noexcept {
    return (X(x.p).lazyProduct(theta).squaredNorm() + theta.squaredNorm()) / Scalar(2);
  }
};

void floor_normals(FloorRng* r, float* out, int n) {
  floor_normals_f(r, out, n);
}
void floor_normals(FloorRng* r, double* out, int n) {
  floor_normals_d(r, out, n);
}
void floor_step(FloorRng* r, float* x, const float* g, int n, int m, float a, float b) {
  floor_step_f(r, x, g, n, m, a, b);
}
void floor_step(FloorRng* r, double* x, const double* g, int n, int m, double a, double b) {
  floor_step_d(r, x, g, n, m, a, b);
}

/// How a recipe sampler is benchmarked: one step per iteration; the floor draws noise_dim normals
/// and makes one pass over the whole state.
template <class S>
struct RecipeRow {
  using Scalar = typename S::Scalar;
  static constexpr int dim = S::dim;
  static constexpr int state_size = S::State::size;
  static constexpr int normals = S::noise_dim;
  static typename S::Params params() noexcept { return typename S::Params{}; }
};

/// Steps in a loop of their own, as a user's loop would run them. noinline keeps the harness out
/// of the step's code; flatten inlines the whole step into the loop (docs/PERFORMANCE.md).
template <class S, class St, class Model, class Rng>
[[gnu::noinline, gnu::flatten]] std::int64_t run_steps(const S& sampler, St& z, const Model& model,
                                                       Rng& rng, std::int64_t count) noexcept {
  benchmark::DoNotOptimize(count);
  std::int64_t failures = 0;
  for (std::int64_t i = 0; i < count; ++i) failures += sampler.step(z, model, rng) ? 0 : 1;
  return failures;
}

template <class Scalar>
[[gnu::noinline]] void run_floor(FloorRng* r, Scalar* x, const Scalar* g, int n, int m,
                                 std::int64_t count) noexcept {
  benchmark::DoNotOptimize(count);
  for (std::int64_t i = 0; i < count; ++i) {
    floor_step(r, x, g, n, m, Scalar(-1e-3), Scalar(0.0447));
    benchmark::DoNotOptimize(x);
  }
}

template <class Scalar>
[[gnu::noinline]] void run_fill(sgmcmc::host::Rng& rng, Scalar* z, int m,
                                std::int64_t count) noexcept {
  benchmark::DoNotOptimize(count);
  for (std::int64_t i = 0; i < count; ++i) {
    rng.fill_normal(z, static_cast<std::size_t>(m));
    benchmark::DoNotOptimize(z);
  }
}

template <class Scalar>
[[gnu::noinline]] void run_std(std::mt19937_64& gen, std::normal_distribution<Scalar>& dist,
                               Scalar* z, int m, std::int64_t count) noexcept {
  benchmark::DoNotOptimize(count);
  for (std::int64_t i = 0; i < count; ++i) {
    for (int j = 0; j < m; ++j) z[j] = dist(gen);
    benchmark::DoNotOptimize(z);
  }
}

/// Steps per call of run_steps: amortises the call.
constexpr std::int64_t kBatch = 16;

template <class F>
std::int64_t timed(F&& f) {
  const std::int64_t t0 = thread_ns();
  f();
  return thread_ns() - t0;
}

/// A fresh state for the sampler, started at θ = 0.5 in every coordinate.
template <class S>
std::unique_ptr<typename S::State> started(const S& sampler) {
  auto z = std::make_unique<typename S::State>();
  static_cast<void>(sampler.start(*z, sgmcmc::Vector<typename S::Scalar, S::dim>::Constant(0.5)));
  return z;
}

/// The rows' three counters: ns per unit of the library and of its floor (or bare or plain
/// loop), and their ratio.
void set_ratio(benchmark::State& state, std::int64_t lib_time, double lib_units,
               std::int64_t floor_time, double floor_units) {
  const double lib_ns = static_cast<double>(lib_time) / lib_units;
  const double floor_ns = static_cast<double>(floor_time) / floor_units;
  state.counters["step_ns"] = lib_ns;
  state.counters["floor_ns"] = floor_ns;
  state.counters["ratio"] = lib_ns / floor_ns;
}

/// Times the step and, in the same benchmark, the floor (half before and half after, so that
/// slow drifts of the machine hit both alike), the library's fill and std::normal_distribution.
/// Counters: step_ns, floor_ns, ratio = step/floor, fill_ns and std_ns per variate, speedup.
template <class S>
void BM_Step(benchmark::State& state) {
  using Row = RecipeRow<S>;
  using Scalar = typename Row::Scalar;
  constexpr int m = Row::normals;
  constexpr int n = Row::state_size;

  const S sampler(Row::params());
  if (!sampler.status()) {
    state.SkipWithError(sampler.status().message());
    return;
  }
  const Quadratic model;
  sgmcmc::host::Rng rng(20240611u);
  sgmcmc::host::Rng fill_rng(20240611u, 1);
  auto z = started(sampler);

  FloorRng floor_rng;
  floor_rng_init(&floor_rng, 20240611u);
  Buffer<Scalar> x(n), g(n), zeta(m > 0 ? m : 1);
  for (int i = 0; i < n; ++i) {
    x.p[i] = Scalar(0.5);
    g.p[i] = Scalar(i % 7) / Scalar(7) - Scalar(0.5);
  }
  std::mt19937_64 gen(7);
  std::normal_distribution<Scalar> dist;

  const std::int64_t first = state.max_iterations / 2;
  std::int64_t floor_time = timed([&] { run_floor(&floor_rng, x.p, g.p, n, m, first); });
  std::int64_t fill_time = m > 0 ? timed([&] { run_fill(fill_rng, zeta.p, m, first); }) : 0;

  std::int64_t failures = 0;
  const std::int64_t t0 = thread_ns();
  while (state.KeepRunningBatch(kBatch)) failures += run_steps(sampler, *z, model, rng, kBatch);
  const std::int64_t step_time = thread_ns() - t0;
  benchmark::DoNotOptimize(z->data());

  const std::int64_t iters = static_cast<std::int64_t>(state.iterations());
  floor_time += timed([&] { run_floor(&floor_rng, x.p, g.p, n, m, iters - first); });
  if (m > 0) fill_time += timed([&] { run_fill(fill_rng, zeta.p, m, iters - first); });
  const std::int64_t std_iters = iters / 8 > 0 ? iters / 8 : 1;
  const std::int64_t std_time =
      m > 0 ? timed([&] { run_std(gen, dist, zeta.p, m, std_iters); }) : 0;

  if (failures != 0) {
    state.SkipWithError("a step failed");
    return;
  }
  const double units = static_cast<double>(iters);
  set_ratio(state, step_time, units, floor_time, units);
  if (m > 0) {
    const double fill_ns = static_cast<double>(fill_time) / (units * m);
    const double std_ns = static_cast<double>(std_time) / (static_cast<double>(std_iters) * m);
    state.counters["fill_ns"] = fill_ns;
    state.counters["std_ns"] = std_ns;
    state.counters["speedup"] = std_ns / fill_ns;
  }
}

/// A plain SGNHT step written here (Ding et al. 2014, the library's order: momentum, position,
/// thermostat): d floor normals, then one loop r_i += h(−g_i − ξ r_i) + √(2Ah) ζ_i, θ_i += h r_i
/// with g = θ, summing r_i² in 64 bytes' worth of partial sums, then ξ += h(Σ r_i² / d − 1). The
/// same arithmetic as the library's SGNHT step with the floor's generator: what the thermostat's
/// recurrence costs any implementation, beside the library's step.
template <class Scalar, int D>
struct PlainSGNHT {
  static constexpr int W = 64 / int(sizeof(Scalar));
  Buffer<Scalar> theta{D}, r{D}, zeta{D};
  FloorRng rng;
  Scalar xi = Scalar(1);
  Scalar h = Scalar(1e-2);
  Scalar sigma = std::sqrt(Scalar(2) * Scalar(1e-2));

  PlainSGNHT() {
    floor_rng_init(&rng, 96);
    for (int i = 0; i < D; ++i) theta.p[i] = Scalar(0.5);
  }
  [[gnu::noinline]] void steps(std::int64_t count) noexcept {
    benchmark::DoNotOptimize(count);
    Scalar* __restrict th = theta.p;
    Scalar* __restrict mom = r.p;
    Scalar* __restrict z = zeta.p;  // every access to the normals through z
    for (std::int64_t c = 0; c < count; ++c) {
      floor_normals(&rng, z, D);
      Scalar part[W] = {};
      const Scalar x = xi;
      int i = 0;
      for (; i + W <= D; i += W) {
        for (int l = 0; l < W; ++l) {
          const Scalar v = mom[i + l] + h * (-th[i + l] - x * mom[i + l]) + sigma * z[i + l];
          mom[i + l] = v;
          th[i + l] += h * v;
          part[l] += v * v;
        }
      }
      for (; i < D; ++i) {
        const Scalar v = mom[i] + h * (-th[i] - x * mom[i]) + sigma * z[i];
        mom[i] = v;
        th[i] += h * v;
        part[0] += v * v;
      }
      Scalar sum = 0;
      for (int l = 0; l < W; ++l) sum += part[l];
      xi = x + h * (sum / Scalar(D) - Scalar(1));
    }
    benchmark::DoNotOptimize(theta.p);
    benchmark::DoNotOptimize(xi);
  }
};

/// SGNHT (default parameters) per step against the plain SGNHT above.
template <class Scalar, int D>
void BM_SGNHT_PLAIN(benchmark::State& state) {
  using S = sgmcmc::SGNHT<Scalar, D>;
  const S sampler{typename S::Params{}};
  const Quadratic model;
  sgmcmc::host::Rng rng(20240611u);
  auto z = started(sampler);
  PlainSGNHT<Scalar, D> plain;
  const std::int64_t first = state.max_iterations / 2;
  std::int64_t plain_time = timed([&] { plain.steps(first); });
  std::int64_t failures = 0;
  const std::int64_t t0 = thread_ns();
  while (state.KeepRunningBatch(kBatch)) failures += run_steps(sampler, *z, model, rng, kBatch);
  const std::int64_t lib_time = thread_ns() - t0;
  const std::int64_t iters = static_cast<std::int64_t>(state.iterations());
  plain_time += timed([&] { plain.steps(iters - first); });
  if (failures != 0) {
    state.SkipWithError("a step failed");
    return;
  }
  const double units = static_cast<double>(iters);
  set_ratio(state, lib_time, units, plain_time, units);
}

/// A uniform in (0, 1) for the bare loops' Metropolis tests and leaf choices, written here
/// (splitmix64; shares nothing with the library's generators).
struct BareUniform {
  std::uint64_t s = 0x2545F4914F6CDD1DULL;
  template <class Scalar>
  Scalar next() noexcept {
    std::uint64_t z = (s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    return (static_cast<Scalar>(z >> 11) + Scalar(0.5)) * Scalar(1.0 / 9007199254740992.0);
  }
};

/// A bare HMC transition written here as a user would write it: the floor's generator for the
/// refresh, the potential, L leapfrog steps with Eigen, the exact Metropolis test (std::exp).
/// Two spellings, both timed, the faster one the floor: fixed-size vectors in local variables
/// (Local: the compiler may keep them in registers for the whole trajectory, fastest at small d)
/// and maps over heap buffers (which can be faster where the locals spill). What the library's
/// HMC is compared with.
template <class Scalar, int D, bool Local, class Model>
struct BareHMC {
  using Vec = Eigen::Matrix<Scalar, D, 1>;
  using Map = Eigen::Map<Vec, Eigen::Aligned16>;
  Buffer<Scalar> theta{D}, r{D}, g{D}, theta1{D};
  FloorRng rng;
  BareUniform uniform;
  Scalar h = Scalar(0.1);
  int steps = 10;
  std::int64_t accepted = 0;
  const Model& model;

  explicit BareHMC(const Model& m) : model(m) {
    floor_rng_init(&rng, 99);
    Map(theta.p).setConstant(Scalar(0.5));
  }
  template <class V>
  Scalar trajectory(V& th1, V& mom, V& grad) const noexcept {
    model.gradient(th1, grad);
    const Scalar h0 = model.potential(th1) + mom.squaredNorm() / 2;
    for (int l = 0; l < steps; ++l) {
      mom -= (h / 2) * grad;
      th1 += h * mom;
      model.gradient(th1, grad);
      mom -= (h / 2) * grad;
    }
    return model.potential(th1) + mom.squaredNorm() / 2 - h0;
  }
  [[gnu::noinline, gnu::flatten]] void transitions(std::int64_t count) noexcept {
    benchmark::DoNotOptimize(count);
    if constexpr (Local) {
      alignas(64) Vec th = Map(theta.p);
      for (std::int64_t c = 0; c < count; ++c) {
        floor_normals(&rng, r.p, D);
        alignas(64) Vec mom = Map(r.p);
        alignas(64) Vec th1 = th;
        alignas(64) Vec grad;
        const Scalar dh = trajectory(th1, mom, grad);
        if (uniform.next<Scalar>() < std::exp(-dh)) {
          th = th1;
          ++accepted;
        }
      }
      Map(theta.p) = th;
    } else {
      Map th(theta.p), th1(theta1.p), mom(r.p), grad(g.p);
      for (std::int64_t c = 0; c < count; ++c) {
        floor_normals(&rng, r.p, D);
        th1 = th;
        const Scalar dh = trajectory(th1, mom, grad);
        if (uniform.next<Scalar>() < std::exp(-dh)) {
          th = th1;
          ++accepted;
        }
      }
    }
    benchmark::DoNotOptimize(theta.p);
  }
};

/// The bare loop's time for `count` units, the faster of its two spellings, each timed in two
/// halves around the library's run (before: `first` units, after: the rest).
struct BareTimes {
  std::int64_t local = 0;
  std::int64_t mapped = 0;
  std::int64_t best() const noexcept { return local < mapped ? local : mapped; }
};

/// HMC per leapfrog step (L = 10, h = 0.1) against the bare loop, in one benchmark.
template <class Scalar, int D, class Model>
void BM_HMC(benchmark::State& state) {
  using S = sgmcmc::HMC<Scalar, D>;
  typename S::Params p;
  p.step_size = Scalar(0.1);
  p.steps = 10;
  const S sampler(p);
  const Model model;
  sgmcmc::host::Rng rng(5);
  auto z = started(sampler);
  BareHMC<Scalar, D, true, Model> bare_local(model);
  BareHMC<Scalar, D, false, Model> bare_mapped(model);
  const std::int64_t first = state.max_iterations / 2;
  BareTimes bare;
  bare.local += timed([&] { bare_local.transitions(first); });
  bare.mapped += timed([&] { bare_mapped.transitions(first); });
  std::int64_t failures = 0;
  const std::int64_t t0 = thread_ns();
  while (state.KeepRunningBatch(1)) failures += run_steps(sampler, *z, model, rng, 1);
  const std::int64_t lib_time = thread_ns() - t0;
  const std::int64_t iters = static_cast<std::int64_t>(state.iterations());
  bare.local += timed([&] { bare_local.transitions(iters - first); });
  bare.mapped += timed([&] { bare_mapped.transitions(iters - first); });
  const std::int64_t bare_time = bare.best();
  if (failures != 0) {
    state.SkipWithError("a step failed");
    return;
  }
  const double leapfrogs = static_cast<double>(iters) * p.steps;
  set_ratio(state, lib_time, leapfrogs, bare_time, leapfrogs);
}

/// A bare NUTS leaf written here: one leapfrog step plus what every NUTS leaf needs (U and K at
/// the new point, the leaf's weight e^{H₀ − H}, one uniform and the streaming multinomial choice),
/// in the same two spellings as BareHMC. What the library's NUTS is compared with per leapfrog
/// step.
template <class Scalar, int D, bool Local, class Model>
struct BareLeaves {
  using Vec = Eigen::Matrix<Scalar, D, 1>;
  using Map = Eigen::Map<Vec, Eigen::Aligned16>;
  Buffer<Scalar> theta{D}, r{D}, g{D}, pick{D};
  FloorRng rng;
  BareUniform uniform;
  Scalar h = Scalar(0.1);
  Scalar weight = Scalar(0);
  const Model& model;

  explicit BareLeaves(const Model& m) : model(m) {
    floor_rng_init(&rng, 98);
    Map(theta.p).setConstant(Scalar(0.5));
  }
  template <class V>
  void run(std::int64_t count, V& th, V& mom, V& grad, V& chosen) noexcept {
    model.gradient(th, grad);
    const Scalar h0 = model.potential(th) + mom.squaredNorm() / 2;
    for (std::int64_t c = 0; c < count; ++c) {
      mom -= (h / 2) * grad;
      th += h * mom;
      model.gradient(th, grad);
      mom -= (h / 2) * grad;
      const Scalar w = std::exp(h0 - model.potential(th) - mom.squaredNorm() / 2);
      weight += w;
      if (uniform.next<Scalar>() * weight < w) chosen = th;
    }
  }
  [[gnu::noinline, gnu::flatten]] void leaves(std::int64_t count) noexcept {
    benchmark::DoNotOptimize(count);
    floor_normals(&rng, r.p, D);
    if constexpr (Local) {
      Vec th = Map(theta.p), mom = Map(r.p), grad, chosen = th;
      run(count, th, mom, grad, chosen);
      Map(pick.p) = chosen;
    } else {
      Map th(theta.p), mom(r.p), grad(g.p), chosen(pick.p);
      run(count, th, mom, grad, chosen);
    }
    benchmark::DoNotOptimize(pick.p);
    benchmark::DoNotOptimize(weight);
  }
};

/// A plain NUTS written here as Stan's documentation describes it (recursive doubling,
/// multinomial sampling with log-sum-exp weights, biased progressive sampling between doublings,
/// and the generalised U-turn criterion on every merged subtree plus the two checks across each
/// merge), on fixed-size Eigen vectors, the floor's normals and the bench's uniforms. Shares no
/// code with the library's NUTS: it shows how much of NUTS's cost per leapfrog step over the bare
/// leaves is the algorithm's own (tree bookkeeping, U-turn dot products) rather than the library's.
template <class Scalar, int D>
struct PlainNUTS {
  using Vec = Eigen::Matrix<Scalar, D, 1>;
  using Map = Eigen::Map<Vec, Eigen::Aligned16>;
  struct Point {
    Vec theta, r, g;
  };
  Buffer<Scalar> theta{D}, r{D};
  FloorRng rng;
  BareUniform uniform;
  Scalar h = Scalar(0.2);
  int max_depth = 10;
  std::int64_t leapfrogs = 0;

  PlainNUTS() {
    floor_rng_init(&rng, 97);
    Map(theta.p).setConstant(Scalar(0.5));
  }
  static Scalar log_sum_exp(Scalar a, Scalar b) noexcept {
    const Scalar m = a > b ? a : b;
    if (m == -std::numeric_limits<Scalar>::infinity()) return m;
    return m + std::log(std::exp(a - m) + std::exp(b - m));
  }
  static bool no_turn(const Vec& a, const Vec& b, const Vec& rho) noexcept {
    return a.dot(rho) > 0 && b.dot(rho) > 0;
  }
  Scalar energy(const Point& z) const noexcept {
    return z.theta.squaredNorm() / 2 + z.r.squaredNorm() / 2;
  }
  /// 2^depth leapfrog steps from z (moved to the new end) in direction `sign`: the proposed θ, the
  /// first and last momenta, the momentum sum and the log-sum of the weights; false on a U-turn
  /// inside or a divergence.
  bool build(int depth, Point& z, Scalar sign, Scalar h0, Vec& proposal, Vec& p_begin, Vec& p_end,
             Vec& rho, Scalar& log_weight) noexcept {
    if (depth == 0) {
      ++leapfrogs;
      const Scalar step = sign * h;
      z.r -= (step / 2) * z.g;
      z.theta += step * z.r;
      z.g = z.theta;
      z.r -= (step / 2) * z.g;
      const Scalar delta = energy(z) - h0;
      if (!(delta <= Scalar(1000))) return false;
      log_weight = log_sum_exp(log_weight, -delta);
      proposal = z.theta;
      p_begin = z.r;
      p_end = z.r;
      rho += z.r;
      return true;
    }
    Vec p_init_end, rho_init = Vec::Zero();
    Scalar w_init = -std::numeric_limits<Scalar>::infinity();
    if (!build(depth - 1, z, sign, h0, proposal, p_begin, p_init_end, rho_init, w_init)) {
      return false;
    }
    Vec proposal_final;
    Vec p_final_begin, rho_final = Vec::Zero();
    Scalar w_final = -std::numeric_limits<Scalar>::infinity();
    if (!build(depth - 1, z, sign, h0, proposal_final, p_final_begin, p_end, rho_final, w_final)) {
      return false;
    }
    const Scalar w_subtree = log_sum_exp(w_init, w_final);
    log_weight = log_sum_exp(log_weight, w_subtree);
    if (w_final > w_subtree || uniform.next<Scalar>() < std::exp(w_final - w_subtree)) {
      proposal = proposal_final;
    }
    const Vec rho_subtree = rho_init + rho_final;
    rho += rho_subtree;
    return no_turn(p_begin, p_end, rho_subtree) &&
           no_turn(p_begin, p_final_begin, Vec(rho_init + p_final_begin)) &&
           no_turn(p_init_end, p_end, Vec(rho_final + p_init_end));
  }
  [[gnu::noinline, gnu::flatten]] void transitions(std::int64_t count) noexcept {
    benchmark::DoNotOptimize(count);
    Vec th = Map(theta.p);
    for (std::int64_t c = 0; c < count; ++c) {
      floor_normals(&rng, r.p, D);
      Point fwd{th, Map(r.p), th};  // g = θ for U = θᵀθ/2
      Point bck = fwd;
      Vec sample = th;
      const Scalar h0 = energy(fwd);
      Vec p_fwd_fwd = fwd.r, p_bck_bck = fwd.r;  // the momenta at the two ends
      Vec rho = fwd.r;
      Scalar log_weight = 0;
      for (int depth = 0; depth < max_depth; ++depth) {
        Vec proposal;
        Vec rho_new = Vec::Zero();
        Scalar w_new = -std::numeric_limits<Scalar>::infinity();
        const Vec rho_old = rho;
        bool valid;
        Vec p_old_near, p_old_far, p_new_near, p_new_far;
        if (uniform.next<Scalar>() < Scalar(0.5)) {
          p_old_far = p_bck_bck;
          p_old_near = p_fwd_fwd;
          valid = build(depth, fwd, Scalar(1), h0, proposal, p_new_near, p_new_far, rho_new, w_new);
          p_fwd_fwd = p_new_far;
        } else {
          p_old_far = p_fwd_fwd;
          p_old_near = p_bck_bck;
          valid =
              build(depth, bck, Scalar(-1), h0, proposal, p_new_near, p_new_far, rho_new, w_new);
          p_bck_bck = p_new_far;
        }
        if (!valid) break;
        if (w_new > log_weight || uniform.next<Scalar>() < std::exp(w_new - log_weight)) {
          sample = proposal;
        }
        log_weight = log_sum_exp(log_weight, w_new);
        rho = rho_old + rho_new;
        if (!(no_turn(p_old_far, p_new_far, rho) &&
              no_turn(p_old_far, p_new_near, Vec(rho_old + p_new_near)) &&
              no_turn(p_old_near, p_new_far, Vec(rho_new + p_old_near)))) {
          break;
        }
      }
      th = sample;
    }
    Map(theta.p) = th;
    benchmark::DoNotOptimize(theta.p);
  }
};

/// The library's NUTS (h = 0.2 on N(0, I), MaxDepth 10) timed over the benchmark's iterations,
/// one transition each, counting its leapfrog steps; around(count) times a comparison in two
/// halves around it (half the iterations before, the rest after). G: the sampler's
/// StartGradient (Keep: the start's ∇U kept from the last transition).
struct NUTSRun {
  std::int64_t time = 0;
  std::int64_t leapfrogs = 0;
  bool failed = false;
};
template <class Scalar, int D, sgmcmc::StartGradient G = sgmcmc::StartGradient::Evaluate,
          class Model, class Around>
NUTSRun run_nuts(benchmark::State& state, const Model& model, Around&& around) {
  using S = sgmcmc::NUTS<Scalar, D, 10, G>;
  typename S::Params p;
  p.step_size = Scalar(0.2);
  const S sampler(p);
  sgmcmc::host::Rng rng(6);
  auto z = started(sampler);
  const std::int64_t first = state.max_iterations / 2;
  around(first);
  NUTSRun out;
  std::int64_t failures = 0;
  const std::int64_t t0 = thread_ns();
  while (state.KeepRunningBatch(1)) {
    failures += run_steps(sampler, *z, model, rng, 1);
    out.leapfrogs += z->extra().leapfrog_steps;
  }
  out.time = thread_ns() - t0;
  around(static_cast<std::int64_t>(state.iterations()) - first);
  out.failed = failures != 0 || out.leapfrogs == 0;
  return out;
}

/// NUTS per leapfrog step against the bare leaves (as many leaves as NUTS took leapfrog steps).
template <class Scalar, int D, class Model,
          sgmcmc::StartGradient G = sgmcmc::StartGradient::Evaluate>
void BM_NUTS(benchmark::State& state) {
  const Model model;
  const NUTSRun lib = run_nuts<Scalar, D, G>(state, model, [](std::int64_t) {});
  BareLeaves<Scalar, D, true, Model> bare_local(model);
  BareLeaves<Scalar, D, false, Model> bare_mapped(model);
  BareTimes bare;
  bare.local = timed([&] { bare_local.leaves(lib.leapfrogs); });
  bare.mapped = timed([&] { bare_mapped.leaves(lib.leapfrogs); });
  if (lib.failed) {
    state.SkipWithError("a step failed");
    return;
  }
  const auto leapfrogs = static_cast<double>(lib.leapfrogs);
  set_ratio(state, lib.time, leapfrogs, bare.best(), leapfrogs);
}

/// NUTS per leapfrog step against the plain NUTS above (the same h, target and depth limit; each
/// counts its own leapfrog steps; the plain one timed in halves around the library's).
template <class Scalar, int D>
void BM_NUTS_PLAIN(benchmark::State& state) {
  PlainNUTS<Scalar, D> plain;
  std::int64_t plain_time = 0;
  const NUTSRun lib = run_nuts<Scalar, D>(state, Quadratic{}, [&](std::int64_t n) {
    plain_time += timed([&] { plain.transitions(n); });
  });
  if (lib.failed || plain.leapfrogs == 0) {
    state.SkipWithError("a step failed");
    return;
  }
  set_ratio(state, lib.time, static_cast<double>(lib.leapfrogs), plain_time,
            static_cast<double>(plain.leapfrogs));
}

/// Console output as usual, then one markdown table of the per-row medians (or single runs).
class TableReporter : public benchmark::ConsoleReporter {
 public:
  TableReporter() : ConsoleReporter(OO_Tabular) {}

  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& r : runs) {
      const bool single = r.run_type == Run::RT_Iteration && r.repetitions <= 1;
      const bool median = r.run_type == Run::RT_Aggregate && r.aggregate_name == "median";
      if (r.error_occurred || !(single || median)) continue;
      Row row;
      row.name = r.run_name.function_name;
      for (const char* key : {"step_ns", "floor_ns", "ratio", "fill_ns", "std_ns", "speedup"}) {
        row.values.push_back(value(r, key));
      }
      rows_.push_back(row);
    }
  }

  void Finalize() override {
    ConsoleReporter::Finalize();
    if (rows_.empty()) return;
    std::FILE* out = stdout;
    std::fflush(out);
    std::fprintf(out,
                 "\n| sampler | scalar | d | ns/step | floor ns | step/floor | fill ns/variate | "
                 "std ns/variate | fill speed-up |\n"
                 "|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
    for (const Row& row : rows_) {
      std::string fields[3];
      std::size_t f = 0;
      for (char c : row.name) {
        if (c == '/' && f < 2) {
          ++f;
        } else {
          fields[f] += c;
        }
      }
      const auto& v = row.values;
      if (v[3] > 0) {
        std::fprintf(out, "| %s | %s | %s | %.1f | %.1f | %.2f | %.3f | %.2f | %.1fx |\n",
                     fields[0].c_str(), fields[1].c_str(), fields[2].c_str(), v[0], v[1], v[2],
                     v[3], v[4], v[5]);
      } else {
        std::fprintf(out, "| %s | %s | %s | %.1f | %.1f | %.2f | | | |\n", fields[0].c_str(),
                     fields[1].c_str(), fields[2].c_str(), v[0], v[1], v[2]);
      }
    }
    std::fflush(out);
  }

 private:
  struct Row {
    std::string name;
    std::vector<double> values;
  };
  static double value(const Run& r, const char* key) {
    const auto it = r.counters.find(key);
    return it == r.counters.end() ? 0.0 : static_cast<double>(it->second);
  }
  std::vector<Row> rows_;
};

}  // namespace

#define SGMCMC_BENCH_CAT2(a, b) a##b
#define SGMCMC_BENCH_CAT(a, b) SGMCMC_BENCH_CAT2(a, b)

/// Registers one row: SGMCMC_BENCH(SGLD, float, 32) times sgmcmc::SGLD<float, 32> as
/// "SGLD/float/32". Any sampler class template <Scalar, Dim> with default-valid Params works.
#define SGMCMC_BENCH(Sampler, Scalar, Dim)                                                      \
  static ::benchmark::internal::Benchmark* SGMCMC_BENCH_CAT(sgmcmc_bench_, __COUNTER__)         \
      BENCHMARK_UNUSED = ::benchmark::RegisterBenchmark(#Sampler "/" #Scalar "/" #Dim,          \
                                                        &BM_Step<sgmcmc::Sampler<Scalar, Dim>>) \
                             ->Unit(benchmark::kNanosecond)

/// Every row of one sampler: d in {2, 8, 32, 100, 104, 128, 1024, 100000}, float and double.
#define SGMCMC_BENCH_SCALAR(Sampler, Scalar) \
  SGMCMC_BENCH(Sampler, Scalar, 2);          \
  SGMCMC_BENCH(Sampler, Scalar, 8);          \
  SGMCMC_BENCH(Sampler, Scalar, 32);         \
  SGMCMC_BENCH(Sampler, Scalar, 100);        \
  SGMCMC_BENCH(Sampler, Scalar, 104);        \
  SGMCMC_BENCH(Sampler, Scalar, 128);        \
  SGMCMC_BENCH(Sampler, Scalar, 1024);       \
  SGMCMC_BENCH(Sampler, Scalar, 100000)
#define SGMCMC_BENCH_SAMPLER(Sampler)  \
  SGMCMC_BENCH_SCALAR(Sampler, float); \
  SGMCMC_BENCH_SCALAR(Sampler, double)

SGMCMC_BENCH_SAMPLER(SGLD);
SGMCMC_BENCH_SAMPLER(SGHMC);
SGMCMC_BENCH_SAMPLER(SGNHT);
#define SGMCMC_BENCH_SGNHT_PLAIN(Scalar, Dim)                                               \
  static ::benchmark::internal::Benchmark* SGMCMC_BENCH_CAT(sgmcmc_bench_, __COUNTER__)     \
      BENCHMARK_UNUSED = ::benchmark::RegisterBenchmark("SGNHT-vs-plain/" #Scalar "/" #Dim, \
                                                        &BM_SGNHT_PLAIN<Scalar, Dim>)       \
                             ->Unit(benchmark::kNanosecond)
SGMCMC_BENCH_SGNHT_PLAIN(float, 8);
SGMCMC_BENCH_SGNHT_PLAIN(float, 32);
SGMCMC_BENCH_SGNHT_PLAIN(float, 128);
SGMCMC_BENCH_SGNHT_PLAIN(float, 1024);
SGMCMC_BENCH_SGNHT_PLAIN(double, 8);
SGMCMC_BENCH_SGNHT_PLAIN(double, 32);
SGMCMC_BENCH_SGNHT_PLAIN(double, 128);
SGMCMC_BENCH_SGNHT_PLAIN(double, 1024);
SGMCMC_BENCH(SGD, float, 32);
SGMCMC_BENCH(SGD, double, 32);
SGMCMC_BENCH(SGDMomentum, float, 32);
SGMCMC_BENCH(SGDMomentum, double, 32);

/// The quadratic as a model of (Scalar, Dim), beside Rows.
template <class, int>
using QuadraticFor = Quadratic;

// HMC and NUTS against their bare loops: with g = θ ("-vs-bare"), and with the gradient of a
// model (Rows: 100 rows of data; "-vs-bare-rows").
#define SGMCMC_BENCH_BARE(Sampler, Suffix, Model, Scalar, Dim)                            \
  static ::benchmark::internal::Benchmark* SGMCMC_BENCH_CAT(sgmcmc_bench_, __COUNTER__)   \
      BENCHMARK_UNUSED =                                                                  \
          ::benchmark::RegisterBenchmark(#Sampler "-vs-bare" Suffix "/" #Scalar "/" #Dim, \
                                         &BM_##Sampler<Scalar, Dim, Model<Scalar, Dim>>)  \
              ->Unit(benchmark::kNanosecond)
SGMCMC_BENCH_BARE(HMC, "", QuadraticFor, float, 10);
SGMCMC_BENCH_BARE(HMC, "", QuadraticFor, float, 100);
SGMCMC_BENCH_BARE(HMC, "", QuadraticFor, double, 10);
SGMCMC_BENCH_BARE(HMC, "", QuadraticFor, double, 100);
SGMCMC_BENCH_BARE(HMC, "", QuadraticFor, double, 1024);
SGMCMC_BENCH_BARE(NUTS, "", QuadraticFor, float, 10);
SGMCMC_BENCH_BARE(NUTS, "", QuadraticFor, double, 10);
SGMCMC_BENCH_BARE(NUTS, "", QuadraticFor, double, 100);
SGMCMC_BENCH_BARE(NUTS, "", QuadraticFor, double, 1024);
SGMCMC_BENCH_BARE(HMC, "-rows", Rows, float, 10);
SGMCMC_BENCH_BARE(HMC, "-rows", Rows, double, 10);
SGMCMC_BENCH_BARE(HMC, "-rows", Rows, double, 100);
SGMCMC_BENCH_BARE(NUTS, "-rows", Rows, float, 10);
SGMCMC_BENCH_BARE(NUTS, "-rows", Rows, double, 10);
SGMCMC_BENCH_BARE(NUTS, "-rows", Rows, double, 100);
// NUTS with StartGradient::Keep: the bare leaves are one long trajectory, which never
// evaluates a start again; with the kept gradient neither does the library.
#define SGMCMC_BENCH_NUTS_REUSE(Suffix, Model, Scalar, Dim)                             \
  static ::benchmark::internal::Benchmark* SGMCMC_BENCH_CAT(sgmcmc_bench_, __COUNTER__) \
      BENCHMARK_UNUSED =                                                                \
          ::benchmark::RegisterBenchmark(                                               \
              "NUTS-reuse-vs-bare" Suffix "/" #Scalar "/" #Dim,                         \
              &BM_NUTS<Scalar, Dim, Model<Scalar, Dim>, sgmcmc::StartGradient::Keep>)   \
              ->Unit(benchmark::kNanosecond)
SGMCMC_BENCH_NUTS_REUSE("", QuadraticFor, double, 100);
SGMCMC_BENCH_NUTS_REUSE("-rows", Rows, float, 10);
SGMCMC_BENCH_NUTS_REUSE("-rows", Rows, double, 10);
SGMCMC_BENCH_NUTS_REUSE("-rows", Rows, double, 100);

#define SGMCMC_BENCH_NUTS_PLAIN(Scalar, Dim)                                               \
  static ::benchmark::internal::Benchmark* SGMCMC_BENCH_CAT(sgmcmc_bench_, __COUNTER__)    \
      BENCHMARK_UNUSED = ::benchmark::RegisterBenchmark("NUTS-vs-plain/" #Scalar "/" #Dim, \
                                                        &BM_NUTS_PLAIN<Scalar, Dim>)       \
                             ->Unit(benchmark::kNanosecond)
SGMCMC_BENCH_NUTS_PLAIN(float, 10);
SGMCMC_BENCH_NUTS_PLAIN(double, 10);
SGMCMC_BENCH_NUTS_PLAIN(double, 100);
SGMCMC_BENCH_NUTS_PLAIN(double, 1024);

int main(int argc, char** argv) {
#if defined(__SSE__) || defined(__x86_64__)
  // Flush-to-zero and denormals-are-zero: SGD and SGD-momentum converge on the quadratic and their
  // state decays into subnormals, whose cost depends on the CPU (microcode assists on many x86
  // cores), not on the step. The noisy samplers never get there; the floor runs in the same mode.
  _mm_setcsr(_mm_getcsr() | 0x8040U);
#endif
  std::printf("host::Rng kernel: %s\n", sgmcmc::host::to_string(sgmcmc::host::Rng::best_isa()));
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  TableReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}
