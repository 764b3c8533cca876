// SPDX-License-Identifier: MIT
// The sampler state z as named blocks with compile-time sizes, and the State value users own.
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
};

namespace detail {
template <class Scalar, class L, class Seq>
struct BlockTuple;
template <class Scalar, class L, int... B>
struct BlockTuple<Scalar, L, std::integer_sequence<int, B...>> {
  using type = std::tuple<Vector<Scalar, L::block_size(B)>...>;
};
}  // namespace detail

/// The sampler state: a value the user owns (on the stack, copyable, comparable).
/// Class invariant: none beyond the block sizes; finiteness is checked by every step.
template <class Scalar_, class Layout_>
class State {
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
  State() noexcept { zero(std::make_integer_sequence<int, blocks>{}); }

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

  /// Bit-for-bit comparison of every block (NaN compares unequal, as in IEEE).
  friend bool operator==(const State& a, const State& b) noexcept { return a.blocks_ == b.blocks_; }
  friend bool operator!=(const State& a, const State& b) noexcept { return !(a == b); }

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
