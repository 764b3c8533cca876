// SPDX-License-Identifier: MIT
// Chains across MPI ranks (parallel/mpi.hpp), run by ctest as one process and as
// `mpiexec -n 2 --oversubscribe`: the shared chains and their summary bit for bit the
// single-process run on every rank; the allreduce gradient of a sharded logistic regression equal
// to the full-data gradient to rounding, and a chain on it close to the full-data chain.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <mpi.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>

#include "same_chains.hpp"
#include "sgmcmc/host/rng.hpp"
#include "sgmcmc/host/streams.hpp"
#include "sgmcmc/models/logistic.hpp"
#include "sgmcmc/parallel/mpi.hpp"
#include "sgmcmc/sgmcmc.hpp"

using namespace sgmcmc;

namespace {

constexpr std::uint64_t kSeed = 20261125;
constexpr int K = 5;  // 3 + 2 chains on two ranks: an uneven split
constexpr int D = 3;
using Sampler = SGHMC<double, D>;
using Run = Chains<Sampler, K, host::Rng>;

int rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
int ranks() {
  int n = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

struct Target {  // U = ‖θ‖²/2 + θ₀⁴/40
  template <class Theta, class Grad>
  void gradient(const Theta& theta, Grad& g) const noexcept {
    for (int i = 0; i < D; ++i) g[i] = theta[i];
    g[0] += theta[0] * theta[0] * theta[0] / 10;
  }
};

std::unique_ptr<Run> started(const Sampler& s) {
  auto run = std::make_unique<Run>(host::chain_streams<K>(kSeed));
  for (int k = 0; k < K; ++k) {
    REQUIRE(s.start(run->state[k], double(k - 2) * Vector<double, D>(1.0, -1.0, 0.5)));
  }
  return run;
}

bool identical(const Run& a, const Run& b) {
  return sgmcmc_test::same_chains(a, b);
}

/// Whether every rank holds the same bytes as rank 0.
template <class T>
bool same_on_every_rank(const T& x) {
  T root = x;
  MPI_Bcast(&root, int(sizeof(T)), MPI_BYTE, 0, MPI_COMM_WORLD);
  int same = std::memcmp(&root, &x, sizeof(T)) == 0 ? 1 : 0, all = 0;
  MPI_Allreduce(&same, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all == 1;
}

}  // namespace

TEST_CASE("chain_range splits the chains into contiguous blocks") {
  CHECK(chain_range(5, 0, 2).begin == 0);
  CHECK(chain_range(5, 0, 2).end == 3);
  CHECK(chain_range(5, 1, 2).begin == 3);
  CHECK(chain_range(5, 1, 2).end == 5);
  CHECK(chain_range(2, 2, 3).begin == chain_range(2, 2, 3).end);  // a rank with no chain
  CHECK(chain_range(5, 2, 2).end == 0);                           // not a rank
}

TEST_CASE("chains run across ranks equal the single-process run, bit for bit, on every rank") {
  Sampler::Params p;
  p.step_size = 0.1;
  const Sampler s(p);
  auto spread = started(s);
  REQUIRE(run_mpi(*spread, s, Target{}, 100, 2000, MPI_COMM_WORLD) == MPI_SUCCESS);
  auto alone = started(s);
  alone->run(s, Target{}, 100, 2000, 1);
  CHECK(identical(*spread, *alone));
  const auto summary = spread->summary();
  CHECK(same_on_every_rank(summary));
  MESSAGE("rank " << rank() << "/" << ranks() << " R̂ " << summary.rhat.transpose());
  if (ranks() > 1) {
    // Negative control: without mpi_share a rank lacks the other ranks' chains.
    auto unshared = started(s);
    const ChainRange r = mpi_chain_range(K, MPI_COMM_WORLD);
    unshared->run(s, Target{}, 100, 2000, 1, r.begin, r.end);
    CHECK_FALSE(identical(*unshared, *alone));
  }
}

namespace {

constexpr int kRows = 1001;
constexpr int kDim = 6;
using Lr = LogisticRegression<double, kDim>;

struct LrData {
  double x[kRows * kDim];
  int y[kRows];
  LrData() {
    host::Rng rng(11, 0);
    for (int i = 0; i < kRows; ++i) {
      double eta = 0;
      for (int j = 0; j < kDim; ++j) {
        double v = 1.0;
        if (j > 0) fill_normal(rng, &v, 1);
        x[i * kDim + j] = v;
        eta += v * (j % 2 == 0 ? 0.7 : -0.4);
      }
      y[i] = double(rng() >> 11) * 0x1.0p-53 < sigmoid(eta) ? 1 : 0;
    }
  }
};

}  // namespace

TEST_CASE("the allreduce gradient of sharded rows is the full-data gradient to rounding") {
  static const LrData data;
  const Lr full(data.x, data.y, kRows);
  const ChainRange r = mpi_chain_range(kRows, MPI_COMM_WORLD);  // this rank's rows
  const Lr shard(data.x + r.begin * kDim, data.y + r.begin, std::size_t(r.end - r.begin));
  const MpiShardGradient<Lr> sharded(shard, MPI_COMM_WORLD);
  // Tolerance: both sum the same 1001 terms (|term| ≤ ~5) in another order; the rounding of
  // such a sum is below 1001 · 2⁻⁵² · 5 ≈ 1.1e-12.
  const double tol = 1e-11;
  double worst = 0, worst_shard_only = 0;
  host::Rng same(12, 0);  // the same β on every rank
  for (int t = 0; t < 20; ++t) {
    Vector<double, kDim> beta;
    fill_normal(same, beta.data(), kDim);
    Vector<double, kDim> g_full, g_mpi, g_shard;
    full.gradient(beta, g_full);
    sharded.gradient(beta, g_mpi);
    shard.gradient(beta, g_shard);
    worst = std::max(worst, (g_full - g_mpi).cwiseAbs().maxCoeff());
    worst_shard_only = std::max(worst_shard_only, (g_full - g_shard).cwiseAbs().maxCoeff());
  }
  MESSAGE("rank " << rank() << ": max |allreduce − full| = " << worst
                  << ", shard alone: " << worst_shard_only);
  CHECK(worst <= tol);
  if (ranks() > 1) CHECK(worst_shard_only > 1.0);  // negative control: one shard is not enough

  // A chain on the allreduce gradient: the same on every rank (one reduction result), and within
  // rounding of the full-data chain after 200 steps (a contracting posterior keeps the gap small).
  SGHMC<double, kDim>::Params p;
  p.step_size = 0.005;
  p.friction = 5.0;
  const SGHMC<double, kDim> s(p);
  SGHMC<double, kDim>::State za, zb;
  REQUIRE(s.start(za, Vector<double, kDim>::Zero()));
  REQUIRE(s.start(zb, Vector<double, kDim>::Zero()));
  host::Rng ra(kSeed, 0), rb(kSeed, 0);
  for (int t = 0; t < 200; ++t) {
    REQUIRE(s.step(za, sharded, ra));
    REQUIRE(s.step(zb, full, rb));
  }
  const Vector<double, kDim> a = za.position(), b = zb.position();
  CHECK(same_on_every_rank(a));
  MESSAGE("rank " << rank() << ": chain gap " << (a - b).cwiseAbs().maxCoeff());
  CHECK((a - b).cwiseAbs().maxCoeff() < 1e-9);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  doctest::Context context(argc, argv);
  const int failed = context.run() != 0 ? 1 : 0;
  int any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any;
}
