// SPDX-License-Identifier: MIT
// Per-chain RNG streams on the host: chain c always draws from host::Rng(seed, c), however the
// chains are grouped into batches, threads or MPI ranks (docs/chains.md).
#pragma once

#include <array>
#include <cstdint>
#include <utility>

#include "sgmcmc/host/rng.hpp"

namespace sgmcmc::host {

namespace detail {
template <std::size_t... I>
std::array<Rng, sizeof...(I)> streams_from(const Rng& first, std::index_sequence<I...>) noexcept {
  Rng r = first;
  // Stream first + I: I jumps from the first (Rng::jump() of stream k draws as stream k + 1).
  auto next = [&r](std::size_t i) noexcept {
    if (i > 0) r.jump();
    return r;
  };
  return {{next(I)...}};
}
}  // namespace detail

/// The K streams of chains first_chain, ..., first_chain + K − 1: element k draws exactly as
/// Rng(seed, first_chain + k). Costs first_chain + K jumps (about 10 µs each).
template <int K>
std::array<Rng, K> chain_streams(std::uint64_t seed, std::uint64_t first_chain = 0) noexcept {
  static_assert(K >= 1, "sgmcmc: at least one stream");
  return detail::streams_from(Rng(seed, first_chain), std::make_index_sequence<std::size_t(K)>{});
}

}  // namespace sgmcmc::host
