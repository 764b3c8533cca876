// SPDX-License-Identifier: MIT
// The RNG contract every port fulfils, checked at compile time with plain-English messages.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "sgmcmc/core/types.hpp"

namespace sgmcmc {

/// A port RNG is a UniformRandomBitGenerator over 64-bit words:
///   using result_type = std::uint64_t;
///   static constexpr result_type min() { return 0; }
///   static constexpr result_type max() { return ~result_type(0); }
///   result_type operator()() noexcept;
/// Optionally it also provides a faster standard-normal fill, which the core then uses:
///   template <class Scalar> void fill_normal(Scalar* out, std::size_t n) noexcept;
/// (n standard normals of type float or double written to out[0 .. n-1]).
/// Streams for parallel chains come from the port's seeding or jump-ahead, never shared state.
template <class Rng, class = void>
struct IsRng : std::false_type {};

template <class Rng>
struct IsRng<Rng, std::void_t<typename Rng::result_type, decltype(std::declval<Rng&>()()),
                              decltype(Rng::min()), decltype(Rng::max())>>
    : std::bool_constant<std::is_same_v<typename Rng::result_type, std::uint64_t> &&
                         Rng::min() == 0 && Rng::max() == ~std::uint64_t(0)> {};

template <class Rng>
inline constexpr bool is_rng_v = IsRng<Rng>::value;

template <class Rng, class Scalar, class = void>
struct HasFillNormal : std::false_type {};

template <class Rng, class Scalar>
struct HasFillNormal<Rng, Scalar,
                     std::void_t<decltype(std::declval<Rng&>().fill_normal(
                         std::declval<Scalar*>(), std::declval<std::size_t>()))>> : std::true_type {
};

/// Optional in-place draw (host::Rng has it): `template <class Scalar> const Scalar*
/// take_normals(std::size_t n) noexcept` hands out the next n normals of the fill_normal stream
/// without copying them, nullptr when n exceeds the port's static `take_limit`.
template <class Rng, class Scalar, class = void>
struct HasTakeNormals : std::false_type {};

template <class Rng, class Scalar>
struct HasTakeNormals<Rng, Scalar,
                      std::void_t<decltype(std::declval<Rng&>().template take_normals<Scalar>(
                                      std::declval<std::size_t>())),
                                  decltype(Rng::take_limit)>> : std::true_type {};

/// True iff Rng hands out N normals of Scalar in place: HasTakeNormals and N ≤ Rng::take_limit.
template <class Rng, class Scalar, std::size_t N, class = void>
struct CanTakeNormals : std::false_type {};

template <class Rng, class Scalar, std::size_t N>
struct CanTakeNormals<Rng, Scalar, N, std::enable_if_t<HasTakeNormals<Rng, Scalar>::value>>
    : std::bool_constant<(N <= std::size_t(Rng::take_limit))> {};

/// Compile-time check with a readable message, for use at the top of any function taking an RNG.
template <class Rng>
constexpr void check_rng() noexcept {
  static_assert(is_rng_v<Rng>,
                "sgmcmc: the RNG must be a UniformRandomBitGenerator of 64-bit words: "
                "result_type = std::uint64_t, min() == 0, max() == ~0, and operator()() "
                "(see include/sgmcmc/port/rng.hpp)");
}

}  // namespace sgmcmc
