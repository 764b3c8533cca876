// SPDX-License-Identifier: MIT
// ns/step of every sampler against its floor (DESIGN §7): the step's own Gaussian draws plus one
// fused multiply-add pass over its state, timed in the same benchmark. docs/PERFORMANCE.md.

// GCC 12 with -march=native on AVX-512 warns inside its own intrinsic headers when Eigen uses
// _mm512_undefined_* (GCC bug 105593, a false positive); with -Werror that fails the build.
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ == 12
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <type_traits>
#include <vector>

#include <time.h>

#if defined(__SSE__) || defined(__x86_64__)
#include <xmmintrin.h>
#endif

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
  template <class T, int D>
  void gradient(const sgmcmc::Vector<T, D>& theta, sgmcmc::Vector<T, D>& g) const noexcept {
    g = theta;
  }
  template <class T, int D>
  T potential(const sgmcmc::Vector<T, D>& theta) const noexcept {
    return theta.squaredNorm() / T(2);
  }
};

/// How a sampler is benchmarked. Recipe samplers: one step per iteration; the floor draws
/// noise_dim normals and makes one pass over the whole state.
template <class S, class = void>
struct BenchTraits {
  static constexpr int state_size = S::StateType::size;
  static constexpr int normals = S::noise_dim;
  static constexpr int passes = 1;  ///< FMA passes over the state in one iteration's floor
  static constexpr int units = 1;   ///< steps per iteration (ns/step = time / units)
  static typename S::Params params() noexcept { return {}; }
  template <class Model, class Rng>
  static sgmcmc::Status run(const S& s, typename S::StateType& z, const Model& m,
                            Rng& rng) noexcept {
    return s.step(z, m, rng);
  }
};

/// HMC (it has an Info type): one iteration is a whole transition of L leapfrog steps (momentum
/// refresh, L leapfrogs, Metropolis test); reported per leapfrog step. Its floor: the refresh's
/// d normals and one pass over (θ, r) per leapfrog step.
template <class S>
struct BenchTraits<S, std::void_t<typename S::Info>> {
  static constexpr int leapfrogs = 10;
  static constexpr int state_size = S::StateType::size;
  static constexpr int normals = S::StateType::dim;
  static constexpr int passes = leapfrogs;
  static constexpr int units = leapfrogs;
  static typename S::Params params() noexcept {
    typename S::Params p;
    p.steps = leapfrogs;
    return p;
  }
  template <class Model, class Rng>
  static sgmcmc::Status run(const S& s, typename S::StateType& z, const Model& m,
                            Rng& rng) noexcept {
    return s.step(z, m, rng);
  }
};

/// The floor of one step: fill M standard normals ζ with the same RNG, then one fused pass over a
/// state-sized vector x (size N >= M): x_i += a g_i + b ζ_i for i < M, x_i += a g_i for i >= M.
/// g is a constant vector (the gradient is already in memory). Extra passes (HMC) are x += a g.
template <class Scalar, int N, int M>
class Floor {
 public:
  Floor() noexcept {
    x_.setConstant(Scalar(0.5));
    for (int i = 0; i < N; ++i) g_[i] = Scalar(i % 7) / Scalar(7) - Scalar(0.5);
    zeta_.setZero();
  }

  /// count floors, each with `passes` passes over x.
  template <class Rng>
  [[gnu::noinline, gnu::flatten]] void run(Rng& rng, int passes, std::int64_t count) noexcept {
    benchmark::DoNotOptimize(count);
    benchmark::DoNotOptimize(passes);
    for (std::int64_t i = 0; i < count; ++i) {
      if constexpr (M > 0) {
        sgmcmc::fill_normal(rng, zeta_);
        x_.template head<M>() += a_ * g_.template head<M>() + b_ * zeta_;
        if constexpr (N > M) x_.template tail<N - M>() += a_ * g_.template tail<N - M>();
      } else {
        x_ += a_ * g_;
      }
      for (int p = 1; p < passes; ++p) x_ += a_ * g_;
    }
  }
  /// count normal fills alone.
  template <class Rng>
  [[gnu::noinline, gnu::flatten]] void fill(Rng& rng, std::int64_t count) noexcept {
    benchmark::DoNotOptimize(count);
    for (std::int64_t i = 0; i < count; ++i) {
      if constexpr (M > 0) sgmcmc::fill_normal(rng, zeta_);
      benchmark::DoNotOptimize(zeta_);
    }
  }

 private:
  sgmcmc::Vector<Scalar, N> x_;
  sgmcmc::Vector<Scalar, N> g_;
  sgmcmc::Vector<Scalar, (M > 0 ? M : 1)> zeta_;
  Scalar a_ = Scalar(-1e-3);
  Scalar b_ = Scalar(0.0447);
};

/// count steps in a loop of its own, as a user's loop would run them. noinline keeps the harness
/// out of the step's code; flatten inlines the whole step into the loop, which is what GCC does by
/// itself in a small translation unit with one sampler, but not in this one, where dozens of
/// instantiations share Eigen's kernels (docs/PERFORMANCE.md, "Where the step loses time").
/// Returns the number of failed steps.
template <class S, class Model, class Rng>
[[gnu::noinline, gnu::flatten]] std::int64_t run_steps(const S& sampler, typename S::StateType& z,
                                                       const Model& model, Rng& rng,
                                                       std::int64_t count) noexcept {
  benchmark::DoNotOptimize(count);  // no constant propagation: the loop stays a loop
  std::int64_t failures = 0;
  for (std::int64_t i = 0; i < count; ++i) {
    failures += BenchTraits<S>::run(sampler, z, model, rng) ? 0 : 1;
  }
  return failures;
}

/// Steps per call of run_steps: amortises the call.
constexpr std::int64_t kBatch = 16;

/// Times the sampler's step and, in the same benchmark, the floor and the normal fill alone for
/// about as many iterations (half before and half after the step loop, so that slow drifts of
/// the machine hit both alike), all in thread CPU time. Counters, per step (HMC: per leapfrog
/// step): step_ns, floor_ns, fill_ns and ratio = step_ns / floor_ns.
template <class S>
void BM_Step(benchmark::State& state) {
  using Traits = BenchTraits<S>;
  using Scalar = typename S::StateType::Scalar;
  constexpr int dim = S::StateType::dim;

  const S sampler(Traits::params());
  if (!sampler.status()) {
    state.SkipWithError(sampler.status().message());
    return;
  }
  const Quadratic model;
  sgmcmc::host::Rng rng(20240611u);
  sgmcmc::host::Rng floor_rng(20240611u, 1);
  auto z = sampler.start(sgmcmc::Vector<Scalar, dim>::Constant(Scalar(0.5)));
  Floor<Scalar, Traits::state_size, Traits::normals> floor;

  const auto timed = [](auto&& f) {
    const std::int64_t t0 = thread_ns();
    f();
    return thread_ns() - t0;
  };
  const std::int64_t first = state.max_iterations / 2;
  std::int64_t floor_time = timed([&] { floor.run(floor_rng, Traits::passes, first); });
  std::int64_t fill_time = timed([&] { floor.fill(floor_rng, first); });

  std::int64_t failures = 0;
  const std::int64_t t0 = thread_ns();
  while (state.KeepRunningBatch(kBatch)) failures += run_steps(sampler, z, model, rng, kBatch);
  const std::int64_t step_time = thread_ns() - t0;
  benchmark::DoNotOptimize(z);

  const std::int64_t n = static_cast<std::int64_t>(state.iterations());
  floor_time += timed([&] { floor.run(floor_rng, Traits::passes, n - first); });
  fill_time += timed([&] { floor.fill(floor_rng, n - first); });
  benchmark::DoNotOptimize(floor);

  if (failures != 0) {
    state.SkipWithError("a step failed");
    return;
  }
  const double units = static_cast<double>(n) * Traits::units;
  const double step_ns = static_cast<double>(step_time) / units;
  const double floor_ns = static_cast<double>(floor_time) / units;
  state.counters["step_ns"] = step_ns;
  state.counters["floor_ns"] = floor_ns;
  state.counters["fill_ns"] = static_cast<double>(fill_time) / units;
  state.counters["ratio"] = step_ns / floor_ns;
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
      row.step_ns = value(r, "step_ns");
      row.floor_ns = value(r, "floor_ns");
      row.fill_ns = value(r, "fill_ns");
      row.ratio = value(r, "ratio");
      rows_.push_back(row);
    }
  }

  void Finalize() override {
    ConsoleReporter::Finalize();
    if (rows_.empty()) return;
    std::FILE* out = stdout;
    std::fflush(out);
    std::fprintf(out,
                 "\n| sampler | scalar | d | ns/step | floor ns | (fill ns) | step/floor |\n"
                 "|---|---|---:|---:|---:|---:|---:|\n");
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
      std::fprintf(out, "| %s | %s | %s | %.1f | %.1f | %.1f | %.2f |\n", fields[0].c_str(),
                   fields[1].c_str(), fields[2].c_str(), row.step_ns, row.floor_ns, row.fill_ns,
                   row.ratio);
    }
    std::fflush(out);
  }

 private:
  struct Row {
    std::string name;
    double step_ns = 0;
    double floor_ns = 0;
    double fill_ns = 0;
    double ratio = 0;
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

/// Every row of one sampler: d in {2, 8, 32, 100, 128}, float and double.
#define SGMCMC_BENCH_SAMPLER(Sampler) \
  SGMCMC_BENCH(Sampler, float, 2);    \
  SGMCMC_BENCH(Sampler, float, 8);    \
  SGMCMC_BENCH(Sampler, float, 32);   \
  SGMCMC_BENCH(Sampler, float, 100);  \
  SGMCMC_BENCH(Sampler, float, 128);  \
  SGMCMC_BENCH(Sampler, double, 2);   \
  SGMCMC_BENCH(Sampler, double, 8);   \
  SGMCMC_BENCH(Sampler, double, 32);  \
  SGMCMC_BENCH(Sampler, double, 100); \
  SGMCMC_BENCH(Sampler, double, 128)

SGMCMC_BENCH_SAMPLER(SGLD);
SGMCMC_BENCH_SAMPLER(SGHMC);
SGMCMC_BENCH_SAMPLER(SGNHT);
SGMCMC_BENCH_SAMPLER(SGD);
SGMCMC_BENCH_SAMPLER(SGDMomentum);
SGMCMC_BENCH_SAMPLER(HMC);

int main(int argc, char** argv) {
#if defined(__SSE__) || defined(__x86_64__)
  // Flush-to-zero and denormals-are-zero: SGD and SGD-momentum converge on the quadratic and their
  // state decays into subnormals, whose cost depends on the CPU (microcode assists on many x86
  // cores), not on the step. The noisy samplers never get there; the floor runs in the same mode.
  _mm_setcsr(_mm_getcsr() | 0x8040U);
#endif
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  TableReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}
