// SPDX-License-Identifier: MIT
// Fixed-size Eigen aliases shared by every header. No dynamic sizes anywhere in the core.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include <Eigen/Core>

namespace sgmcmc {

using Index = Eigen::Index;

/// Column vector with a compile-time size.
template <class Scalar, int N>
using Vector = Eigen::Matrix<Scalar, N, 1>;

/// Matrix with compile-time sizes.
template <class Scalar, int Rows, int Cols>
using Matrix = Eigen::Matrix<Scalar, Rows, Cols>;

/// Alignment, in bytes, of every block of a state (core/state.hpp): one cache line on 64-bit
/// hosts, so that each block starts on a vector-register boundary (AVX-512 included) and the
/// step's loops need no peeling; the scalar's own alignment on microcontrollers, where padding
/// would only cost RAM. Define SGMCMC_ALIGN_BYTES (a power of two) to override.
#if defined(SGMCMC_ALIGN_BYTES)
inline constexpr int kAlignBytes = SGMCMC_ALIGN_BYTES;
#elif defined(__x86_64__) || defined(__aarch64__) || defined(_M_X64) || defined(_M_ARM64)
inline constexpr int kAlignBytes = 64;
#else
inline constexpr int kAlignBytes = 8;
#endif
static_assert(kAlignBytes > 0 && (kAlignBytes & (kAlignBytes - 1)) == 0,
              "SGMCMC_ALIGN_BYTES must be a power of two");

/// The Eigen alignment flag that state views promise (16-byte aligned or better on hosts).
inline constexpr int kMapAlignment = kAlignBytes >= 16 ? Eigen::Aligned16 : Eigen::Unaligned;

/// A view of N scalars with a compile-time size: how states, gradients and noise of any size
/// are seen (an Eigen fixed-size object over 128 KiB does not compile; a map of any size does).
template <class Scalar, int N>
using VectorMap = Eigen::Map<Vector<Scalar, N>, kMapAlignment>;
/// Read-only counterpart of VectorMap.
template <class Scalar, int N>
using ConstVectorMap = Eigen::Map<const Vector<Scalar, N>, kMapAlignment>;
/// A view of N scalars at any address (caller-owned arrays of unknown alignment).
template <class Scalar, int N>
using UnalignedMap = Eigen::Map<const Vector<Scalar, N>, Eigen::Unaligned>;

/// Run-time dispatch of the step (docs/PERFORMANCE.md): on x86-64 with GCC or Clang, a build
/// whose baseline lacks AVX2 (the default, portable build) compiles every sampler's step for the
/// baseline and for AVX2 (and, opted in, for AVX-512: below), and runs the best copy the CPU has
/// (tests of the CPU's feature word per step). No FMA in any copy: all round alike, so a chain is
/// bit for bit the same on every path. Define SGMCMC_NO_DISPATCH to compile the baseline only.
/// GCC: the copies are compiled without interprocedural register allocation. With it, GCC knows
/// that a baseline (SSE) function the copy calls out of line (the model's gradient, where it is
/// not inlined) leaves the upper halves of the vector registers alone, keeps values there across
/// the call and so emits no vzeroupper before it; the callee's every SSE instruction then runs
/// with dirty upper state. HMC float d = 32 in a portable build: 146 → 20.5 ns per leapfrog step.
#if defined(__GNUC__) && !defined(__clang__)
#define SGMCMC_COPY_NO_IPA_RA gnu::optimize("no-ipa-ra"),
#else
#define SGMCMC_COPY_NO_IPA_RA
#endif
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__)) && \
    !defined(__AVX2__) && !defined(SGMCMC_NO_DISPATCH)
#define SGMCMC_DISPATCH_AVX2 1
/// The engine's loops, forced into the AVX2 copy (GCC would keep their large frames out of line
/// and so run them as the baseline's).
#define SGMCMC_ENGINE_INLINE [[gnu::always_inline]]
/// What makes a function the AVX2 copy.
#define SGMCMC_AVX2_COPY \
  [[ gnu::target("avx2"), SGMCMC_COPY_NO_IPA_RA gnu::flatten, gnu::noinline ]]
#else
#define SGMCMC_DISPATCH_AVX2 0
#define SGMCMC_AVX2_COPY
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__)) && \
    defined(__AVX2__)
/// A build for AVX2 or newer (-march=native): the engine's loops forced into the step as well.
/// GCC's flatten stops at max-inline-insns-single and left SGNHT's coordinate loop out of line,
/// its constants and pointers passed through memory (bench_step native on an AMD EPYC with
/// AVX-512, three runs of each build alternated: SGNHT float d = 8 32.3 → 26.0 ns, double
/// d = 32 83.4 → 67.7, SGLD and SGHMC 2-24 % faster at d ≤ 128, d ≥ 1024 unchanged;
/// docs/PERFORMANCE.md). The lambdas the loops call are left to GCC (SGMCMC_ENGINE_INLINE_LAMBDA):
/// forced as well, SGLD and SGHMC double d = 2 to 32 took 9-31 % longer. Not a gain everywhere:
/// in a unit holding every sampler, at GCC's unit-growth limits, GCC leaves some samplers' pass
/// lambda out of line instead (SGHMC, then SGLD: 10-35 % longer at small d) while SGRLD, gSGRHMC
/// and SGD gain 13-53 % (docs/PERFORMANCE.md).
#define SGMCMC_ENGINE_INLINE [[gnu::always_inline]]
#elif defined(__GNUC__) && defined(__arm__)
/// 32-bit ARM (the Cortex-M port): the engine's loops forced into the step too, so that a step
/// is one frame. Left to GCC, the pass and its coordinate loops were frames of their own, each
/// pushing the callee-saved registers again: Cortex-M4F SGLD -O2 d = 2 212 → 136 bytes of stack
/// (painted), 279 → 232 instructions per step, 3.9 → 2.6 KB of flash; SGNHT d = 8 392 → 264 bytes
/// (scripts/size-table, docs/PERFORMANCE.md "Cortex-M4F").
#define SGMCMC_ENGINE_INLINE [[gnu::always_inline]]
#else
#define SGMCMC_ENGINE_INLINE
#endif
#endif
/// Whether the step runs 32-byte or wider vector loads: x86 with AVX (a native build) or the
/// dispatched AVX2 copy. What the gradient's re-store (core/model.hpp) and the coordinate loop's
/// split tail (core/recipe.hpp) serve; elsewhere they would only cost code.
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__AVX__) || SGMCMC_DISPATCH_AVX2)
#define SGMCMC_WIDE_STEP 1
#else
#define SGMCMC_WIDE_STEP 0
#endif
/// Opt-in (define SGMCMC_NARROW_SMALL_STEPS), GCC on x86-64: small steps in 16-byte vectors
/// (detail::narrow_step_fits, where the sampler dispatches its step). The model's gradient,
/// inlined into the step, is written with Eigen's packet for its size: 16 bytes in a portable
/// build, and in any build for sizes no larger packet divides (d = 10). The engine reads it right
/// after; 32- or 64-byte loads of what 16-byte stores have just written wait for the stores to
/// reach the cache (store-to-load forwarding fails), which costs a step with a cheap gradient more
/// than the wider arithmetic saves. Not the default: the model's own vectorised loops narrow too,
/// and sgmcmc_logreg's small posteriors took 5-20 % longer (docs/PERFORMANCE.md). Where the step
/// is dispatched this is a second AVX2 copy; in a build for AVX2 or newer (-march=native) a copy
/// of the step with that one preference. Clang 14 has no prefer-vector-width attribute.
#if defined(SGMCMC_NARROW_SMALL_STEPS) && (defined(__x86_64__) || defined(__i386__)) && \
    defined(__GNUC__) && !defined(__clang__) && !defined(SGMCMC_NO_DISPATCH) &&         \
    (SGMCMC_DISPATCH_AVX2 || defined(__AVX2__))
#define SGMCMC_NARROW_STEP 1
#if SGMCMC_DISPATCH_AVX2
#define SGMCMC_NARROW_COPY                                                                         \
  [[                                                                                               \
    gnu::target("avx2,prefer-vector-width=128"), SGMCMC_COPY_NO_IPA_RA gnu::flatten, gnu::noinline \
  ]]
#else
#define SGMCMC_NARROW_COPY [[gnu::target("prefer-vector-width=128"), gnu::flatten, gnu::noinline]]
#endif
#else
#define SGMCMC_NARROW_STEP 0
#define SGMCMC_NARROW_COPY
#endif
/// GCC only, where the step is dispatched: a third copy for AVX-512 (F, VL, BW, DQ), for steps
/// whose position is at least kAvx512StepMinBytes, with contraction into FMA switched off for
/// that one function (GCC contracts when it optimises the function the step is inlined into, with
/// that function's options), so it rounds as the other copies do. Smaller steps stay in the AVX2
/// copy: there the AVX-512 copy was slower in bench_step (SGLD double d = 32, SGHMC float 32, SGD)
/// and in sgmcmc_logreg's d = 14 posterior GCC left one of Eigen's kernels out of that copy
/// (Heart's SGLD-CV 10-20 % longer); from 512 bytes SGHMC, SGNHT, HMC and NUTS took up to 25 %
/// less, SGLD 5-8 % more, Caravan's logistic regression (d = 87 doubles) the same
/// (docs/PERFORMANCE.md). A chain batch's interleaved step counts the K chains' positions together.
/// Define SGMCMC_DISPATCH_AVX512_STEP for the copy at every size, SGMCMC_NO_AVX512_STEP for none.
#if SGMCMC_DISPATCH_AVX2 && defined(__GNUC__) && !defined(__clang__) && \
    !defined(SGMCMC_NO_AVX512_STEP)
#define SGMCMC_DISPATCH_AVX512 1
#if defined(SGMCMC_TEST_AVX512_CONTRACTS)  // tests/samplers: the negative control, with FMA
#define SGMCMC_AVX512_ROUNDING
#else
#define SGMCMC_AVX512_ROUNDING gnu::optimize("fp-contract=off"),
#endif
#define SGMCMC_AVX512_COPY                                                          \
  [[                                                                                \
    gnu::target("avx512f,avx512vl,avx512bw,avx512dq,avx2,prefer-vector-width=512"), \
    SGMCMC_AVX512_ROUNDING SGMCMC_COPY_NO_IPA_RA gnu::flatten, gnu::noinline        \
  ]]
#else
#define SGMCMC_DISPATCH_AVX512 0
#define SGMCMC_AVX512_COPY
#endif

namespace detail {
/// The smallest position, in bytes, whose step runs the AVX-512 copy where it is compiled.
#if defined(SGMCMC_DISPATCH_AVX512_STEP)
inline constexpr std::size_t kAvx512StepMinBytes = 0;
#else
inline constexpr std::size_t kAvx512StepMinBytes = 512;
#endif

/// Whether the CPU runs AVX2 (a read of libgcc's / compiler-rt's feature word; no write); false
/// where the step is not dispatched.
inline bool cpu_has_avx2() noexcept {
#if SGMCMC_DISPATCH_AVX2
  return __builtin_cpu_supports("avx2");
#else
  return false;
#endif
}

/// Whether the CPU runs the AVX-512 subsets of SGMCMC_AVX512_COPY; false where that copy is not
/// compiled.
inline bool cpu_has_avx512() noexcept {
#if SGMCMC_DISPATCH_AVX512
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
         __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq");
#else
  return false;
#endif
}

/// f() compiled for AVX2 (SGMCMC_AVX2_COPY): everything f calls is inlined into this copy
/// (flatten), the model's gradient included, so its loops use 256-bit registers.
template <class F>
SGMCMC_AVX2_COPY decltype(auto) call_avx2(const F& f) noexcept {
  return f();
}

/// f() with 16-byte vectors (SGMCMC_NARROW_COPY: AVX2 where the step is dispatched, else the
/// build's instruction set), flattened likewise.
template <class F>
SGMCMC_NARROW_COPY decltype(auto) call_narrow(const F& f) noexcept {
  return f();
}

#if defined(__GNUC__)
/// Bytes bytes of Scalar as one generic vector of GCC and Clang (vector extensions): lowered to
/// the registers of the function it is compiled in (one AVX register in the step's AVX2 copy, two
/// SSE2 registers in the baseline), whereas Eigen's packets are fixed by the build's flags.
/// Element-wise IEEE arithmetic, so values do not depend on the lowering. Pass vectors wider than
/// 16 bytes by reference or through memory: a baseline unit has no ABI for them.
template <class Scalar, int Bytes>
struct GnuVector {
  typedef Scalar type __attribute__((vector_size(Bytes)));  // NOLINT: GCC drops it from `using`
};
#endif

/// Bytes of the vector packet Eigen writes a Dim-vector of Scalar with (its best packet for Dim
/// in this translation unit): what the narrow copy and the gradient's re-store (core/model.hpp)
/// compare with the engine's wider loads.
template <class Scalar, int Dim>
inline constexpr int kEigenPacketBytes =
    int(sizeof(typename Eigen::internal::find_best_packet<Scalar, Dim>::type));

/// Whether a step over this layout runs in 16-byte vectors where SGMCMC_NARROW_STEP: a position
/// of 17 to 128 bytes (up to 16 the loads are no wider anyway, and the copy is a call) that Eigen
/// writes with 16-byte packets (its best packet for d), and no one-scalar block (SGNHT's
/// thermostat: its step waits on the reduction into that scalar, which narrower vectors
/// lengthen). Measured with bench_step (GCC 12, Xeon; docs/PERFORMANCE.md).
template <class Scalar, class Layout>
constexpr bool narrow_step_fits() noexcept {
  constexpr int d = Layout::dim;
  bool scalar_block = false;
  for (int b = 1; b < Layout::blocks; ++b) {
    scalar_block = scalar_block || Layout::block_size(b) == 1;
  }
  constexpr int bytes = d * int(sizeof(Scalar));
  return bytes > 16 && bytes <= 128 && kEigenPacketBytes<Scalar, d> <= 16 && !scalar_block;
}

/// f() compiled for AVX-512 without FMA contraction (SGMCMC_AVX512_COPY), flattened likewise.
template <class F>
SGMCMC_AVX512_COPY decltype(auto) call_avx512(const F& f) noexcept {
  return f();
}

/// f() through its AVX-512 copy (positions of Bytes >= kAvx512StepMinBytes) or AVX2 copy where
/// the step is dispatched and the CPU has the extensions, else as compiled for the build's
/// baseline: the one place a step (a sampler's, a chain batch's) is dispatched. Narrow: a small
/// step, in 16-byte vectors where SGMCMC_NARROW_STEP (narrow_step_fits).
template <bool Narrow, std::size_t Bytes, class F>
decltype(auto) dispatched(const F& f) noexcept {
  if constexpr (SGMCMC_DISPATCH_AVX512 != 0 && Bytes >= kAvx512StepMinBytes) {
    if (cpu_has_avx512()) return call_avx512(f);
  }
  constexpr bool narrow = Narrow && SGMCMC_NARROW_STEP != 0;
  if constexpr (SGMCMC_DISPATCH_AVX2 != 0) {
    if (cpu_has_avx2()) {
      if constexpr (narrow) return call_narrow(f);
      return call_avx2(f);
    }
  } else if constexpr (narrow) {
    return call_narrow(f);
  }
  return f();
}

/// n scalars rounded up to whole alignment units, so that consecutive blocks of that many
/// scalars in one kAlignBytes-aligned array stay aligned (what the aligned maps above assume).
template <class Scalar>
constexpr std::size_t aligned_count(std::size_t n) noexcept {
  constexpr std::size_t unit = std::size_t(kAlignBytes) / sizeof(Scalar) > 0
                                   ? std::size_t(kAlignBytes) / sizeof(Scalar)
                                   : std::size_t(1);
  return (n + unit - 1) / unit * unit;
}
}  // namespace detail

/// Tolerances per scalar type (Sophus style): used by validators, never in the step.
template <class Scalar>
struct Constants;
template <>
struct Constants<float> {
  static constexpr float epsilon() noexcept { return 1e-5f; }
};
template <>
struct Constants<double> {
  static constexpr double epsilon() noexcept { return 1e-10; }
};

namespace detail {

/// Bits of x - x OR-ed into acc: x - x is ±0 for a finite x and NaN for ±Inf or NaN, so acc has
/// no bit but the sign bit set iff every entry seen is finite. Exact; a plain loop that compilers
/// inline and vectorise, where Eigen's allFinite() is a scalar loop with an early exit, which the
/// step paid three to five times. Like allFinite(), blind under -ffinite-math-only (-ffast-math).
template <class Derived, class Bits>
void accumulate_nonfinite(const Eigen::PlainObjectBase<Derived>& x, Bits& acc) noexcept {
  using S = typename Derived::Scalar;
  static_assert(sizeof(S) == sizeof(Bits), "one word of bits per scalar");
  const S* p = x.data();
  for (Index i = 0; i < x.size(); ++i) {
    const S d = p[i] - p[i];
    Bits b;
    std::memcpy(&b, &d, sizeof b);
    acc |= b;
  }
}
/// Unsigned word of a scalar's size.
template <class S>
using BitsOf = std::conditional_t<sizeof(S) == 4, std::uint32_t, std::uint64_t>;
/// Bit-for-bit equality of two scalars (+0 and −0 differ, a NaN equals itself).
template <class S>
bool same_bits_of(S a, S b) noexcept {
  return std::memcmp(&a, &b, sizeof a) == 0;
}
/// A position's key for a cache kept in a state's scratch (HMC's and NUTS's reused gradient):
/// key[i] holds the complement of x[i]'s bits. A zeroed scratch vector (a new state) is then the
/// key of all-ones bits, a NaN in every entry, which no position a step starts from can be (a
/// step refuses a non-finite position), so a cache is never taken for valid before a step wrote
/// it. Bit for bit: +0 and −0 are different positions.
template <class S>
void store_position_key(const S* x, S* key, Index n) noexcept {
  for (Index i = 0; i < n; ++i) {
    BitsOf<S> b;
    std::memcpy(&b, &x[i], sizeof b);
    b = static_cast<BitsOf<S>>(~b);
    std::memcpy(&key[i], &b, sizeof b);
  }
}
/// True iff key is store_position_key's key of exactly the n entries of x.
template <class S>
bool matches_position_key(const S* x, const S* key, Index n) noexcept {
  BitsOf<S> acc = 0;
  for (Index i = 0; i < n; ++i) {
    BitsOf<S> a, b;
    std::memcpy(&a, &x[i], sizeof a);
    std::memcpy(&b, &key[i], sizeof b);
    acc |= static_cast<BitsOf<S>>(a ^ static_cast<BitsOf<S>>(~b));
  }
  return acc == 0;
}
/// True iff bits OR-ed by accumulate_nonfinite came from finite entries only (the sign bit, set
/// by -0 under a downward rounding mode, is ignored).
template <class Bits>
constexpr bool finite_bits(Bits acc) noexcept {
  return static_cast<Bits>(acc << 1) == 0;
}
/// acc |= bits of (x - x) for one scalar: the building block of the engine's fused loops, which
/// test every value they write in the same pass (one reduction per step, no second pass).
template <class S>
[[gnu::always_inline]] inline void or_nonfinite(S x, BitsOf<S>& acc) noexcept {
  const S d = x - x;
  BitsOf<S> b;
  std::memcpy(&b, &d, sizeof b);
  acc |= b;
}
/// True iff all n entries of p are finite.
template <class S>
bool all_finite(const S* p, Index n) noexcept {
  BitsOf<S> acc = 0;
  for (Index i = 0; i < n; ++i) or_nonfinite(p[i], acc);
  return finite_bits(acc);
}
/// True iff every entry of x is finite (see accumulate_nonfinite).
template <class Derived>
bool all_finite(const Eigen::PlainObjectBase<Derived>& x) noexcept {
  BitsOf<typename Derived::Scalar> acc = 0;
  accumulate_nonfinite(x, acc);
  return finite_bits(acc);
}
/// True iff every entry of the equally sized vectors a and b is finite, in Eigen's packets:
/// Σ (a − a) + (b − b) is a sum of zeros (±0, any rounding mode) exactly when every entry is
/// finite, and NaN otherwise. For small fixed sizes, where GCC unrolls all_finite's loop into
/// scalar code before it could vectorise the OR (HMC's local trajectory at d = 10: about 4
/// instructions per entry against 1).
template <class A, class B>
bool all_finite_packets(const Eigen::MatrixBase<A>& a, const Eigen::MatrixBase<B>& b) noexcept {
  using S = typename A::Scalar;
  return ((a.array() - a.array()) + (b.array() - b.array())).sum() == S(0);
}
/// The same for one vector.
template <class A>
bool all_finite_packets(const Eigen::MatrixBase<A>& a) noexcept {
  using S = typename A::Scalar;
  return (a.array() - a.array()).sum() == S(0);
}
/// Contiguous maps: in place.
template <class P, int O>
bool all_finite(const Eigen::Map<P, O>& x) noexcept {
  return all_finite(x.data(), x.size());
}
/// Other expressions: coefficient by coefficient (no temporary, any size).
template <class Derived>
bool all_finite(const Eigen::MatrixBase<Derived>& x) noexcept {
  BitsOf<typename Derived::Scalar> acc = 0;
  for (Index j = 0; j < x.cols(); ++j) {
    for (Index i = 0; i < x.rows(); ++i) or_nonfinite(x.derived().coeff(i, j), acc);
  }
  return finite_bits(acc);
}

}  // namespace detail

}  // namespace sgmcmc
