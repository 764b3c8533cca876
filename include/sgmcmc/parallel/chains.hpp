// SPDX-License-Identifier: MIT
// K chains of one sampler run across threads (docs/chains.md): chain k steps on its own State and
// RNG stream, so its numbers do not depend on the thread count; split R̂, ESS and posterior moments
// across the chains at the end, combined in chain order.
#pragma once

// Threads: with OpenMP (compile and link with -fopenmp, CMake OpenMP::OpenMP_CXX) run() spreads
// the chains over a team, one chain per task; without it the chains run one after the other, with
// the same results. Another executor (e.g. oneTBB, parallel/tbb.hpp) plugs in through run_with().
// Determinism: a chain reads only its own State, stream and statistics, and summary() reduces
// them in chain order after the parallel loop, so the summary is bit for bit the same for any
// thread count, any schedule, and any split of the chains across MPI ranks (parallel/mpi.hpp).
// Heap: none in this header; the OpenMP runtime allocates its thread pool on the first run.

#include <array>
#include <cstdint>
#include <limits>
#include <type_traits>

#if defined(_OPENMP)
#include <omp.h>
#endif

#include "sgmcmc/batch/batch.hpp"
#include "sgmcmc/core/status.hpp"
#include "sgmcmc/core/types.hpp"
#include "sgmcmc/diagnostics/ess.hpp"
#include "sgmcmc/diagnostics/rhat.hpp"
#include "sgmcmc/diagnostics/welford.hpp"

namespace sgmcmc {

/// Cross-chain results of a run: per coordinate split R̂ (BDA3, diagnostics/rhat.hpp), the ESS
/// summed over the chains (each chain's streaming batch-means ESS), the posterior mean and
/// standard deviation of the pooled draws. Chains that failed are left out of every figure.
template <int D>
struct ChainsSummary {
  Vector<double, D> rhat;
  Vector<double, D> ess;
  Vector<double, D> mean;
  Vector<double, D> sd;
  int chains = 0;           ///< chains that finished (their statistics are in the figures)
  int failed = 0;           ///< chains whose step failed (their status says why)
  std::uint64_t draws = 0;  ///< pooled draws in mean and sd
};

/// The states, streams and statistics of K chains of Sampler (owned: declare it `static` or on the
/// heap of the caller, it holds K States), built from chain k's stream for each k (e.g.
/// host::chain_streams<K>(seed)); the caller starts state[k], run() then steps every chain.
/// Class invariant: after a run, chain k's statistics hold exactly its draws, status[k] says
/// whether it finished; nothing of chain k depends on any other chain.
template <class Sampler, int K, class Rng>
class Chains {
 public:
  using Scalar = typename Sampler::Scalar;
  using State = typename Sampler::State;
  static constexpr int chains = K;
  static constexpr int dim = Sampler::dim;
  static_assert(K >= 2, "sgmcmc: cross-chain diagnostics need at least two chains");

  /// Chain k draws from streams[k]; every chain zero until started.
  explicit Chains(const std::array<Rng, K>& streams) noexcept : rng(streams) {}

  State state[K];
  std::array<Rng, K> rng;
  /// The first and second half of chain k's draws: half[2k], half[2k + 1].
  Welford<double, dim> half[2 * K];
  BatchMeansESS<double, dim> ess[K];
  Status status[K];

  /// Starts every chain at θ0 (sampler.start); the first failure.
  template <class X>
  Status start(const Sampler& sampler, const Eigen::MatrixBase<X>& theta0) noexcept {
    for (State& z : state) {
      if (Status s = sampler.start(z, theta0); !s) return s;
    }
    return StatusCode::Ok;
  }

  /// Chain k (0 ≤ k < K): `burn` steps, then `draws` steps whose positions go to its statistics
  /// (the first ⌊draws/2⌋ to half[2k], the next ⌊draws/2⌋ to half[2k+1], all to ess[k]).
  /// Stops at the first failed step (status[k], the state as the sampler left it: unchanged).
  template <class Model>
  void run_chain(int k, const Sampler& sampler, const Model& model, std::uint64_t burn,
                 std::uint64_t draws) noexcept {
    const auto& m = detail::chain_model(model, k);
    status[k] = StatusCode::Ok;
    half[2 * k].reset();
    half[2 * k + 1].reset();
    ess[k].reset();
    const std::uint64_t h = draws / 2;
    for (std::uint64_t t = 0; t < burn + draws; ++t) {
      if (Status s = sampler.step(state[k], m, rng[k]); !s) {
        status[k] = s;
        return;
      }
      if (t < burn) continue;
      const std::uint64_t i = t - burn;
      const Vector<double, dim> x = state[k].position().template cast<double>();
      if (i < 2 * h) half[2 * k + (i < h ? 0 : 1)].push(x);
      ess[k].push(x);
    }
  }

  /// Chains [begin, end) through `executor(begin, end, f)`, which must call f(k) once for each k
  /// (in any order, on any threads).
  template <class Executor, class Model>
  void run_with(Executor&& executor, const Sampler& sampler, const Model& model, std::uint64_t burn,
                std::uint64_t draws, int begin = 0, int end = K) noexcept {
    begin = begin < 0 ? 0 : begin;
    end = end > K ? K : end;
    executor(begin, end, [&](int k) { run_chain(k, sampler, model, burn, draws); });
  }

  /// Chains [begin, end) across `threads` OpenMP threads (≤ 0: OpenMP's default; one thread
  /// without OpenMP).
  template <class Model>
  void run(const Sampler& sampler, const Model& model, std::uint64_t burn, std::uint64_t draws,
           int threads = 0, int begin = 0, int end = K) noexcept {
    run_with(
        [threads](int b, int e, const auto& f) noexcept {
#if defined(_OPENMP)
          const int n = threads > 0 ? threads : omp_get_max_threads();
#pragma omp parallel for schedule(dynamic, 1) num_threads(n)
          for (int k = b; k < e; ++k) f(k);
#else
          static_cast<void>(threads);
          for (int k = b; k < e; ++k) f(k);
#endif
        },
        sampler, model, burn, draws, begin, end);
  }

  /// R̂, ESS and moments across the chains that finished, reduced in chain order.
  ChainsSummary<dim> summary() const noexcept {
    ChainsSummary<dim> out;
    Welford<double, dim> ok_halves[2 * K];
    Welford<double, dim> pooled;
    out.ess.setZero();
    std::size_t m = 0;
    for (int k = 0; k < K; ++k) {
      if (!status[k]) {
        ++out.failed;
        continue;
      }
      ++out.chains;
      ok_halves[m++] = half[2 * k];
      ok_halves[m++] = half[2 * k + 1];
      pooled.merge(half[2 * k]);
      pooled.merge(half[2 * k + 1]);
      out.ess += ess[k].ess();
    }
    out.rhat = rhat_from_sequences(ok_halves, m);
    out.mean = pooled.mean();
    out.sd = pooled.variance().cwiseSqrt();
    out.draws = pooled.count();
    return out;
  }
};

}  // namespace sgmcmc
