// SPDX-License-Identifier: MIT
// The state a user owns: all blocks of z in one aligned, padded array with named views, either
// owned (State: a fixed-size value, on the stack or in a `static`) or a view of caller-owned
// memory (StateMap: a static array, a firmware section, one column of a K-chain batch).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include "sgmcmc/core/layout.hpp"
#include "sgmcmc/core/types.hpp"

namespace sgmcmc {

/// No per-chain bookkeeping (the Extra of most samplers).
struct NoExtra {};

/// The memory plan of a state, in scalars. The array holds, in order:
///   header     the index of the current copy of z, then the sampler's per-chain bookkeeping
///              (Extra: SGMGT's step counter, the learned refresh's countdown, ...);
///   copy 0, 1  two copies of z, each block starting on a kAlignBytes boundary. A step reads the
///              current copy and writes the other, and commits by switching the index: no
///              whole-state copy, and a failed step leaves the current copy untouched;
///   scratch    ScratchVectors position-sized vectors the step works in (the gradient first).
/// So the stack use of a step does not grow with d: everything d-sized lives here.
template <class Scalar_, class Layout_, int ScratchVectors_, class Extra_>
struct StateShape {
  using Scalar = Scalar_;
  using LayoutType = Layout_;
  using Extra = Extra_;
  static_assert(std::is_floating_point_v<Scalar>, "a state holds float or double");
  static_assert(ScratchVectors_ >= 0, "ScratchVectors must be non-negative");
  static_assert(std::is_trivially_copyable_v<Extra> && std::is_default_constructible_v<Extra>,
                "per-chain bookkeeping (Extra) must be a trivially copyable value");

  static constexpr int blocks = Layout_::blocks;
  static constexpr int size = Layout_::size;  ///< scalars in z
  static constexpr int dim = Layout_::dim;    ///< d
  /// Scalars per alignment unit: every block and region starts on a multiple of this.
  static constexpr int lanes = kAlignBytes / static_cast<int>(sizeof(Scalar)) > 0
                                   ? kAlignBytes / int(sizeof(Scalar))
                                   : 1;
  static constexpr int value_stride = Layout_::padded_size(lanes);  ///< one copy of z, padded
  static constexpr int scratch_vectors = ScratchVectors_;
  static constexpr int scratch_stride = Layout_::round_up(dim, lanes);

  /// The header's fixed part; Extra follows it.
  struct Header {
    std::uint32_t front;  ///< which copy of z is current (0 or 1)
    std::uint32_t reserved;
  };
  static constexpr std::size_t extra_bytes = std::is_empty_v<Extra> ? 0 : sizeof(Extra);
  static constexpr int header_size = Layout_::round_up(
      static_cast<int>((sizeof(Header) + extra_bytes + sizeof(Scalar) - 1) / sizeof(Scalar)),
      lanes);

  static constexpr int block_offset(int b) noexcept { return Layout_::padded_offset(b, lanes); }
  static constexpr int copy_offset(int copy) noexcept { return header_size + copy * value_stride; }
  static constexpr int scratch_offset(int k) noexcept {
    return header_size + 2 * value_stride + k * scratch_stride;
  }
  /// Scalars a StateMap needs (its memory must be aligned to kAlignBytes).
  static constexpr int storage_size =
      header_size + 2 * value_stride + ScratchVectors_ * scratch_stride;
  static constexpr std::size_t storage_bytes = std::size_t(storage_size) * sizeof(Scalar);
};

namespace detail {
struct StateAccess;

template <class E, class = void>
struct HasEquality : std::false_type {};
template <class E>
struct HasEquality<
    E, std::void_t<decltype(bool(std::declval<const E&>() == std::declval<const E&>()))>>
    : std::true_type {};

/// Bookkeeping equality: operator== where the type has one (structs with padding must: their
/// padding bytes are unspecified), else the bytes.
template <class E>
bool same_extra(const E& a, const E& b) noexcept {
  if constexpr (HasEquality<E>::value) {
    return a == b;
  } else {
    return std::memcmp(&a, &b, sizeof a) == 0;
  }
}
}  // namespace detail

/// What State and StateMap share: named views of the current copy of z, bookkeeping, finiteness,
/// comparison. Views are Eigen maps with compile-time sizes (VectorMap), valid until the next
/// step: a step switches the current copy, so take views again after stepping.
/// Class invariant: the header's index is 0 or 1 (only its low bit is read).
template <class Derived, class Shape>
class StateBase {
 public:
  using ShapeType = Shape;
  using Scalar = typename Shape::Scalar;
  using LayoutType = typename Shape::LayoutType;
  using Extra = typename Shape::Extra;
  // Comparing states compares bookkeeping: by its bytes only where the bytes are the value.
  static_assert(std::is_empty_v<Extra> || detail::HasEquality<Extra>::value ||
                    std::has_unique_object_representations_v<Extra>,
                "bookkeeping (Extra) with padding or floating-point members needs an operator==");
  static constexpr int blocks = Shape::blocks;
  static constexpr int size = Shape::size;
  static constexpr int dim = Shape::dim;
  static constexpr int storage_size = Shape::storage_size;
  template <int B>
  using BlockMap = VectorMap<Scalar, LayoutType::block_size(B)>;
  template <int B>
  using ConstBlockMap = ConstVectorMap<Scalar, LayoutType::block_size(B)>;
  /// z as one vector (small states only: an Eigen fixed-size object).
  using FlatVector = Vector<Scalar, size>;

  template <int B>
  BlockMap<B> block() noexcept {
    static_assert(B >= 0 && B < blocks, "no such block");
    return BlockMap<B>(current() + Shape::block_offset(B));
  }
  template <int B>
  ConstBlockMap<B> block() const noexcept {
    static_assert(B >= 0 && B < blocks, "no such block");
    return ConstBlockMap<B>(current() + Shape::block_offset(B));
  }
  BlockMap<0> position() noexcept { return block<0>(); }
  ConstBlockMap<0> position() const noexcept { return block<0>(); }
  template <int B = 1>
  BlockMap<B> momentum() noexcept {
    static_assert(blocks > B, "this state has no momentum block");
    return block<B>();
  }
  template <int B = 1>
  ConstBlockMap<B> momentum() const noexcept {
    static_assert(blocks > B, "this state has no momentum block");
    return block<B>();
  }
  template <int B = 2>
  BlockMap<B> thermostat() noexcept {
    static_assert(blocks > B, "this state has no thermostat block");
    return block<B>();
  }
  template <int B = 2>
  ConstBlockMap<B> thermostat() const noexcept {
    static_assert(blocks > B, "this state has no thermostat block");
    return block<B>();
  }

  /// The sampler's per-chain bookkeeping (a copy).
  Extra extra() const noexcept {
    Extra e{};
    if constexpr (Shape::extra_bytes > 0) {
      std::memcpy(&e, bytes() + sizeof(typename Shape::Header), sizeof e);
    }
    return e;
  }
  void set_extra(const Extra& e) noexcept {
    if constexpr (Shape::extra_bytes > 0) {
      std::memcpy(bytes() + sizeof(typename Shape::Header), &e, sizeof e);
    } else {
      static_cast<void>(e);
    }
  }

  /// Every block zero, the bookkeeping default, copy 0 current; scratch zeroed too.
  void set_zero() noexcept {
    Scalar* p = data();
    for (int i = 0; i < storage_size; ++i) p[i] = Scalar(0);
    set_front(0);
    set_extra(Extra{});
  }

  /// z as one flat vector (block 0 first). Small states only.
  FlatVector flat() const noexcept {
    FlatVector v;
    for_blocks([&](auto b) {
      v.template segment<LayoutType::block_size(b)>(LayoutType::offset(b)) = block<b>();
    });
    return v;
  }
  /// Sets every block from a flat vector.
  void set_flat(const FlatVector& v) noexcept {
    for_blocks([&](auto b) {
      block<b>() = v.template segment<LayoutType::block_size(b)>(LayoutType::offset(b));
    });
  }

  /// True iff every entry of z is finite (one vectorised pass).
  bool all_finite() const noexcept {
    detail::BitsOf<Scalar> acc = 0;
    const Scalar* p = current();
    for_blocks([&](auto b) {
      const Scalar* q = p + Shape::block_offset(b);
      for (int i = 0; i < LayoutType::block_size(b); ++i) detail::or_nonfinite(q[i], acc);
    });
    return detail::finite_bits(acc);
  }

  /// Copies z and the bookkeeping of another state of the same shape (owned or mapped) into the
  /// current copy of this one.
  template <class Other>
  void assign(const StateBase<Other, Shape>& other) noexcept {
    for_blocks([&](auto b) { block<b>() = other.template block<b>(); });
    set_extra(other.extra());
  }

  /// Bit-for-bit comparison of z (memcmp: +0 and −0 differ, a NaN equals itself) and the
  /// bookkeeping (its operator==, or its bytes when it has none). Padding, the other copy and the
  /// scratch are not part of the value.
  template <class Other>
  bool same_bits(const StateBase<Other, Shape>& other) const noexcept {
    bool same = true;
    for_blocks([&](auto b) {
      same = same && std::memcmp(current() + Shape::block_offset(b),
                                 other.current() + Shape::block_offset(b),
                                 sizeof(Scalar) * LayoutType::block_size(b)) == 0;
    });
    if constexpr (Shape::extra_bytes > 0) same = same && detail::same_extra(extra(), other.extra());
    return same;
  }
  template <class Other>
  friend bool operator==(const StateBase& a, const StateBase<Other, Shape>& b) noexcept {
    return a.same_bits(b);
  }
  template <class Other>
  friend bool operator!=(const StateBase& a, const StateBase<Other, Shape>& b) noexcept {
    return !a.same_bits(b);
  }

  /// The whole array (header, both copies, scratch): storage_size scalars.
  Scalar* data() noexcept { return static_cast<Derived*>(this)->storage(); }
  const Scalar* data() const noexcept { return static_cast<const Derived*>(this)->storage(); }

 private:
  template <class, class>
  friend class StateBase;
  friend struct detail::StateAccess;

  template <class F>
  static void for_blocks(F&& f) noexcept {
    for_blocks_impl(f, std::make_integer_sequence<int, blocks>{});
  }
  template <class F, int... B>
  static void for_blocks_impl(F& f, std::integer_sequence<int, B...>) noexcept {
    (f(std::integral_constant<int, B>{}), ...);
  }
  unsigned char* bytes() noexcept { return reinterpret_cast<unsigned char*>(data()); }
  const unsigned char* bytes() const noexcept {
    return reinterpret_cast<const unsigned char*>(data());
  }
  int front() const noexcept {
    typename Shape::Header h;
    std::memcpy(&h, bytes(), sizeof h);
    return static_cast<int>(h.front & 1U);
  }
  /// Writes the header {f, 0}; on x86-64 as one 64-bit integer, whose zero upper half is the zero
  /// extension of f. Written as the struct, GCC built that zero from the step's finiteness bits
  /// (known zero where the step commits), so the next step's address of z waited on this step's
  /// check (a fully inlined step, as in the portable build's copy: SGLD double d = 8 23.4 → 18.2
  /// ns; docs/PERFORMANCE.md). Not on the Cortex-M4F, where the same form moved GCC's inlining
  /// (gSGRHMC d = 32 at -O2: 20 % more stack).
  void set_front(int f) noexcept {
    static_assert(sizeof(typename Shape::Header) == sizeof(std::uint64_t), "an 8-byte header");
#if defined(__x86_64__)
    const std::uint64_t h = static_cast<std::uint32_t>(f & 1);
#else
    const typename Shape::Header h{static_cast<std::uint32_t>(f & 1), 0U};
#endif
    std::memcpy(bytes(), &h, sizeof h);
  }
  const Scalar* current() const noexcept {
    return data() + Shape::copy_offset(front());
  }
  Scalar* current() noexcept {
    return data() + Shape::copy_offset(front());
  }
};

/// A state that owns its memory: a fixed-size value (about 2|z| + scratch · d scalars). Small
/// ones live on the stack; for large d declare it `static` (or use a StateMap).
/// Class invariant: as StateBase.
template <class Scalar, class Layout, int ScratchVectors = 1, class Extra = NoExtra>
class State : public StateBase<State<Scalar, Layout, ScratchVectors, Extra>,
                               StateShape<Scalar, Layout, ScratchVectors, Extra>> {
 public:
  using Shape = StateShape<Scalar, Layout, ScratchVectors, Extra>;

  /// Every block zero.
  State() noexcept { this->set_zero(); }
  /// A copy of any state of the same shape (owned or mapped).
  template <class Other>
  explicit State(const StateBase<Other, Shape>& other) noexcept {
    this->set_zero();
    this->assign(other);
  }

  Scalar* storage() noexcept { return storage_; }
  const Scalar* storage() const noexcept { return storage_; }

 private:
  alignas(kAlignBytes) Scalar storage_[Shape::storage_size];
};

/// A state in caller-owned memory: storage_size scalars aligned to kAlignBytes, e.g.
///   alignas(sgmcmc::kAlignBytes) static float memory[Sampler::StateMap::storage_size];
///   Sampler::StateMap z(memory);
///   sampler.start(z, theta0);
/// Copying a StateMap copies the view, not the state. valid() checks the pointer and alignment.
template <class Scalar, class Layout, int ScratchVectors = 1, class Extra = NoExtra>
class StateMap : public StateBase<StateMap<Scalar, Layout, ScratchVectors, Extra>,
                                  StateShape<Scalar, Layout, ScratchVectors, Extra>> {
 public:
  using Shape = StateShape<Scalar, Layout, ScratchVectors, Extra>;

  /// Views memory (not initialised: call the sampler's start, or set_zero()).
  explicit StateMap(Scalar* memory) noexcept : memory_(memory) {}

  /// True iff the memory is non-null and aligned to kAlignBytes.
  bool valid() const noexcept {
    return memory_ != nullptr &&
           reinterpret_cast<std::uintptr_t>(memory_) % static_cast<std::uintptr_t>(kAlignBytes) ==
               0;
  }

  Scalar* storage() noexcept { return memory_; }
  const Scalar* storage() const noexcept { return memory_; }

 private:
  Scalar* memory_;
};

namespace detail {

/// The engine's access to a state's two copies and its scratch.
struct StateAccess {
  template <class D, class S>
  static int front(const StateBase<D, S>& z) noexcept {
    return z.front();
  }
  /// Makes the other copy current: the commit of a successful step.
  template <class D, class S>
  static void flip(StateBase<D, S>& z) noexcept {
    z.set_front(1 - z.front());
  }
  /// flip(z) when `commit` (HMC's Metropolis commit). Without a branch on `commit` (the same
  /// instructions either way, the real-time tick's constant count on the Cortex-M4F) except on
  /// x86: there the next transition's first loads read the copy the commit makes current, so
  /// after a branch-free commit they wait on the whole Metropolis test (U at the end point,
  /// e^{-ΔH}, the comparison), while a predicted branch lets the out-of-order core start the
  /// next trajectory before the test resolves (HMC double d = 10 on an AVX-512 Xeon: a third
  /// less time per transition, docs/PERFORMANCE.md). The same state either way.
  template <class D, class S>
  static void flip_if(StateBase<D, S>& z, bool commit) noexcept {
#if defined(__x86_64__) || defined(__i386__)
    if (commit) flip(z);
#else
    z.set_front(z.front() ^ static_cast<int>(commit));
#endif
  }
  /// Zeroes every scalar of copy `copy` (padding included).
  template <class D, class S>
  static void zero_copy(StateBase<D, S>& z, int copy) noexcept {
    typename S::Scalar* p = z.data() + S::copy_offset(copy);
    for (int i = 0; i < S::value_stride; ++i) p[i] = typename S::Scalar(0);
  }
  /// Block b of copy `copy`.
  template <class D, class S>
  static typename S::Scalar* block(StateBase<D, S>& z, int copy, int b) noexcept {
    return z.data() + S::copy_offset(copy) + S::block_offset(b);
  }
  template <class D, class S>
  static const typename S::Scalar* block(const StateBase<D, S>& z, int copy, int b) noexcept {
    return z.data() + S::copy_offset(copy) + S::block_offset(b);
  }
  /// Scratch vector k (position-sized).
  template <class D, class S>
  static typename S::Scalar* scratch(StateBase<D, S>& z, int k) noexcept {
    return z.data() + S::scratch_offset(k);
  }
  /// The bookkeeping's bytes (Extra's object representation), for a sampler that writes its
  /// members one by one (from registers, where set_extra copies a whole object from memory).
  template <class D, class S>
  static unsigned char* extra_bytes(StateBase<D, S>& z) noexcept {
    static_assert(S::extra_bytes > 0, "the state has bookkeeping");
    return z.bytes() + sizeof(typename S::Header);
  }
};

/// True for State and StateMap types (anything deriving from StateBase).
template <class T, class = void>
struct IsState : std::false_type {};
template <class T>
struct IsState<T, std::void_t<typename T::ShapeType>>
    : std::is_base_of<StateBase<T, typename T::ShapeType>, T> {};

}  // namespace detail

}  // namespace sgmcmc
