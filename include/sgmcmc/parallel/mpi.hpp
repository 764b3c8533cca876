// SPDX-License-Identifier: MIT
// Chains across MPI ranks (docs/chains.md): each rank runs a contiguous block of the K chains of a
// Chains set, then every chain's state, stream, statistics and status are shared with every rank,
// whose summary() is so bit for bit the single-process run's. And a data-parallel gradient: each
// rank holds a shard of the rows, the shards' gradients are summed by MPI_Allreduce.
#pragma once

// Why not reduce the statistics with MPI_Allreduce(MPI_SUM)? A floating-point sum over ranks
// depends on the number of ranks and on MPI's reduction tree, so R̂ would differ in its last bits
// from the single-process run. The per-chain statistics are a few hundred bytes, so the ranks
// broadcast them instead (one MPI_Bcast per rank, as bytes: the ranks run the same binary), and
// every rank then reduces them in chain order exactly as the single process does.
// Needs MPI (CMake MPI::MPI_CXX). This header does not allocate; the MPI library does.

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "sgmcmc/parallel/chains.hpp"

namespace sgmcmc {

/// The chains [begin, end) of one rank.
struct ChainRange {
  int begin = 0;
  int end = 0;
};

/// Rank `rank` of `ranks` gets a contiguous block of the `chains` chains; the first
/// chains % ranks ranks one more. Empty for a rank beyond the chains.
constexpr ChainRange chain_range(int chains, int rank, int ranks) noexcept {
  if (ranks < 1 || rank < 0 || rank >= ranks || chains < 0) return {};
  const int base = chains / ranks, extra = chains % ranks;
  const int begin = rank * base + (rank < extra ? rank : extra);
  return {begin, begin + base + (rank < extra ? 1 : 0)};
}

/// This process's chains in comm.
inline ChainRange mpi_chain_range(int chains, MPI_Comm comm) noexcept {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  return chain_range(chains, rank, ranks);
}

namespace detail {
/// Broadcasts elements [begin, end) of a, `per` objects per chain, as bytes from rank root.
template <class T>
int bcast_chains(T* a, int per, ChainRange r, int root, MPI_Comm comm) noexcept {
  const std::size_t bytes = sizeof(T) * std::size_t(per) * std::size_t(r.end - r.begin);
  if (bytes == 0) return MPI_SUCCESS;
  return MPI_Bcast(static_cast<void*>(a + std::size_t(per) * std::size_t(r.begin)), int(bytes),
                   MPI_BYTE, root, comm);
}
}  // namespace detail

/// Every rank sends its chains (mpi_chain_range) to every other rank: afterwards each rank holds
/// every chain's state, stream, statistics and status. Collective; MPI's error code.
template <class Sampler, int K, class Rng>
int mpi_share(Chains<Sampler, K, Rng>& c, MPI_Comm comm) noexcept {
  int ranks = 1;
  MPI_Comm_size(comm, &ranks);
  for (int q = 0; q < ranks; ++q) {
    const ChainRange r = chain_range(K, q, ranks);
    int e = detail::bcast_chains(c.state, 1, r, q, comm);
    if (e == MPI_SUCCESS) e = detail::bcast_chains(c.rng.data(), 1, r, q, comm);
    if (e == MPI_SUCCESS) e = detail::bcast_chains(c.half, 2, r, q, comm);
    if (e == MPI_SUCCESS) e = detail::bcast_chains(c.ess, 1, r, q, comm);
    if (e == MPI_SUCCESS) e = detail::bcast_chains(c.status, 1, r, q, comm);
    if (e != MPI_SUCCESS) return e;
  }
  return MPI_SUCCESS;
}

/// Runs this rank's chains (Chains::run on `threads` threads) and shares them (mpi_share). Every
/// rank must have started every chain the same way. Collective; MPI's error code.
template <class Sampler, int K, class Rng, class Model>
int run_mpi(Chains<Sampler, K, Rng>& c, const Sampler& sampler, const Model& model,
            std::uint64_t burn, std::uint64_t draws, MPI_Comm comm, int threads = 1) noexcept {
  const ChainRange r = mpi_chain_range(K, comm);
  c.run(sampler, model, burn, draws, threads, r.begin, r.end);
  return mpi_share(c, comm);
}

/// The MPI datatype of float and double.
template <class Scalar>
MPI_Datatype mpi_type() noexcept {
  static_assert(std::is_same_v<Scalar, float> || std::is_same_v<Scalar, double>,
                "sgmcmc: MPI reductions of float or double");
  return std::is_same_v<Scalar, float> ? MPI_FLOAT : MPI_DOUBLE;
}

/// A data-parallel gradient (the sampler model concept): each rank's Shard holds its rows (any
/// per-example model with rows(), add_gradient(i, θ, acc) and add_prior_gradient(θ, acc), e.g.
/// LogisticRegression over the rank's rows); the rank adds its rows' terms, rank 0 the prior, and
/// MPI_Allreduce sums them, so every rank gets ∇U over all rows. Equal to the single-process
/// gradient to rounding (another summation order). Collective: every rank must call it.
template <class Shard>
class MpiShardGradient {
 public:
  MpiShardGradient(const Shard& shard, MPI_Comm comm) noexcept : shard_(&shard), comm_(comm) {
    MPI_Comm_rank(comm, &rank_);
  }

  template <class Theta, class Grad>
  void gradient(const Theta& theta, Grad& g) const noexcept {
    using Scalar = typename std::decay_t<decltype(g.derived())>::Scalar;
    g.setZero();
    for (std::size_t i = 0; i < shard_->rows(); ++i) {
      shard_->add_gradient(static_cast<std::uint32_t>(i), theta, g);
    }
    if (rank_ == 0) shard_->add_prior_gradient(theta, g);
    MPI_Allreduce(MPI_IN_PLACE, g.data(), int(g.size()), mpi_type<Scalar>(), MPI_SUM, comm_);
  }

 private:
  const Shard* shard_;
  MPI_Comm comm_;
  int rank_ = 0;
};

}  // namespace sgmcmc
