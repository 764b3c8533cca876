// SPDX-License-Identifier: MIT
// The sampler state z as named blocks with compile-time sizes (Layout), and BlockState: z as a
// tuple of fixed-size vectors, the engine's working value for small dense or state-dependent
// recipes and for automatic differentiation. The State users own is in core/state.hpp.
#pragma once

#include <array>
#include <tuple>
#include <type_traits>
#include <utility>

#include "sgmcmc/core/types.hpp"

namespace sgmcmc {

/// Block indices used by the named samplers. Block 0 is always the position theta.
enum BlockIndex : int { Position = 0, Momentum = 1, Thermostat = 2 };

/// z = (z_0, z_1, ...) with compile-time block sizes; block 0 is the position.
template <int... Sizes>
struct Layout {
  static_assert(sizeof...(Sizes) > 0, "a layout needs at least the position block");
  static_assert(((Sizes > 0) && ...), "every block size must be positive");

  static constexpr int blocks = static_cast<int>(sizeof...(Sizes));
  static constexpr int size = (Sizes + ...);
  static constexpr std::array<int, sizeof...(Sizes)> sizes{Sizes...};

  static constexpr int block_size(int b) noexcept { return sizes[static_cast<std::size_t>(b)]; }
  static constexpr int offset(int b) noexcept {
    int o = 0;
    for (int i = 0; i < b; ++i) o += block_size(i);
    return o;
  }
  /// Dimension of the position block (d in MATH.md).
  static constexpr int dim = block_size(0);
  /// n rounded up to a multiple of `lanes`.
  static constexpr int round_up(int n, int lanes) noexcept {
    return (n + lanes - 1) / lanes * lanes;
  }
  /// Offset of block b when every block starts on a multiple of `lanes` scalars.
  static constexpr int padded_offset(int b, int lanes) noexcept {
    int o = 0;
    for (int i = 0; i < b; ++i) o += round_up(block_size(i), lanes);
    return o;
  }
  /// Size of all blocks with that padding.
  static constexpr int padded_size(int lanes) noexcept { return padded_offset(blocks, lanes); }
};

namespace detail {
template <class Scalar, class L, class Seq>
struct BlockTuple;
template <class Scalar, class L, int... B>
struct BlockTuple<Scalar, L, std::integer_sequence<int, B...>> {
  using type = std::tuple<Vector<Scalar, L::block_size(B)>...>;
};
}  // namespace detail

/// z as one fixed-size vector per block: a plain value (copyable, comparable), used inside the
/// engine for small recipes with dense or whole-state structures, and in any scalar type
/// (automatic differentiation). Sizes are limited by Eigen's fixed-size objects (128 KiB).
/// Class invariant: none beyond the block sizes.
template <class Scalar_, class Layout_>
class BlockState {
 public:
  using Scalar = Scalar_;
  using LayoutType = Layout_;
  static constexpr int blocks = Layout_::blocks;
  static constexpr int size = Layout_::size;
  static constexpr int dim = Layout_::dim;
  using FlatVector = Vector<Scalar, size>;

  template <int B>
  using BlockVector = Vector<Scalar, Layout_::block_size(B)>;

  /// All blocks zero.
  BlockState() noexcept { zero(std::make_integer_sequence<int, blocks>{}); }

  template <int B>
  BlockVector<B>& block() noexcept {
    return std::get<B>(blocks_);
  }
  template <int B>
  const BlockVector<B>& block() const noexcept {
    return std::get<B>(blocks_);
  }

  BlockVector<Position>& position() noexcept { return block<Position>(); }
  const BlockVector<Position>& position() const noexcept { return block<Position>(); }

  template <int B = Momentum>
  BlockVector<B>& momentum() noexcept {
    static_assert(blocks > B, "this state has no momentum block");
    return block<B>();
  }
  template <int B = Momentum>
  const BlockVector<B>& momentum() const noexcept {
    static_assert(blocks > B, "this state has no momentum block");
    return block<B>();
  }
  template <int B = Thermostat>
  BlockVector<B>& thermostat() noexcept {
    static_assert(blocks > B, "this state has no thermostat block");
    return block<B>();
  }
  template <int B = Thermostat>
  const BlockVector<B>& thermostat() const noexcept {
    static_assert(blocks > B, "this state has no thermostat block");
    return block<B>();
  }

  /// z as one flat vector (block 0 first).
  FlatVector flat() const noexcept {
    FlatVector v;
    to_flat(v, std::make_integer_sequence<int, blocks>{});
    return v;
  }
  /// Sets every block from a flat vector.
  void set_flat(const FlatVector& v) noexcept {
    from_flat(v, std::make_integer_sequence<int, blocks>{});
  }

  bool all_finite() const noexcept { return finite(std::make_integer_sequence<int, blocks>{}); }

  /// Value comparison of every block (IEEE: NaN unequal, +0 == -0).
  friend bool operator==(const BlockState& a, const BlockState& b) noexcept {
    return a.blocks_ == b.blocks_;
  }
  friend bool operator!=(const BlockState& a, const BlockState& b) noexcept { return !(a == b); }

 private:
  template <int... B>
  void zero(std::integer_sequence<int, B...>) noexcept {
    (std::get<B>(blocks_).setZero(), ...);
  }
  template <int... B>
  void to_flat(FlatVector& v, std::integer_sequence<int, B...>) const noexcept {
    ((v.template segment<Layout_::block_size(B)>(Layout_::offset(B)) = std::get<B>(blocks_)), ...);
  }
  template <int... B>
  void from_flat(const FlatVector& v, std::integer_sequence<int, B...>) noexcept {
    ((std::get<B>(blocks_) = v.template segment<Layout_::block_size(B)>(Layout_::offset(B))), ...);
  }
  template <int... B>
  bool finite(std::integer_sequence<int, B...>) const noexcept {
    if constexpr (std::is_floating_point_v<Scalar>) {
      detail::BitsOf<Scalar> acc = 0;  // one vectorised test over every block (types.hpp)
      (detail::accumulate_nonfinite(std::get<B>(blocks_), acc), ...);
      return detail::finite_bits(acc);
    } else {
      return (std::get<B>(blocks_).allFinite() && ...);
    }
  }

  typename detail::BlockTuple<Scalar, Layout_, std::make_integer_sequence<int, blocks>>::type
      blocks_;
};

}  // namespace sgmcmc
