// SPDX-License-Identifier: MIT
// Host port RNG: xoshiro256++ words with jump-ahead streams, and a 16-lane SIMD Box-Muller normal
// fill compiled for several instruction sets and chosen at run time (portable builds run the
// AVX2 or AVX-512 kernel on machines that have it; no -march needed).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include <Eigen/Core>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define SGMCMC_HOST_X86 1
#elif defined(__aarch64__)
#include <arm_neon.h>
#define SGMCMC_HOST_NEON 1
#endif

#include "sgmcmc/port/rng.hpp"

namespace sgmcmc::host {
namespace detail {

/// Rotate left; k in [1, 63].
constexpr std::uint64_t rotl(std::uint64_t x, int k) noexcept {
  return (x << k) | (x >> (64 - k));
}

/// splitmix64 (Steele, Lea, Flood 2014): one output per call, advancing state by the golden gamma.
constexpr std::uint64_t splitmix64(std::uint64_t& state) noexcept {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/// One xoshiro256++ step (Blackman & Vigna 2021) on a state held as four words.
constexpr std::uint64_t xoshiro_next(std::uint64_t& s0, std::uint64_t& s1, std::uint64_t& s2,
                                     std::uint64_t& s3) noexcept {
  const std::uint64_t result = rotl(s0 + s3, 23) + s0;
  const std::uint64_t t = s1 << 17;
  s2 ^= s0;
  s3 ^= s1;
  s1 ^= s2;
  s0 ^= s3;
  s2 ^= t;
  s3 = rotl(s3, 45);
  return result;
}

/// Jump polynomial for 2^128 steps of xoshiro256 (published with the generator).
inline constexpr std::uint64_t kJump[4] = {0x180ec6d33cfd0abaULL, 0xd5a61266f0c9392cULL,
                                           0xa9582618e03fc9aaULL, 0x39abdc4529b1661cULL};
/// Jump polynomial for 2^192 steps of xoshiro256.
inline constexpr std::uint64_t kLongJump[4] = {0x76e15d3efefdcbbfULL, 0xc5004e441c522fb3ULL,
                                               0x77710069854ee241ULL, 0x39109bb02acbe635ULL};

/// Advances a scalar xoshiro256 state by the jump polynomial poly (the state is a linear map of
/// itself over GF(2), so the jump is the sum of the states selected by the polynomial's bits).
constexpr void jump_state(std::uint64_t (&s)[4], const std::uint64_t (&poly)[4]) noexcept {
  std::uint64_t acc[4] = {0, 0, 0, 0};
  for (int w = 0; w < 4; ++w) {
    for (int b = 0; b < 64; ++b) {
      if ((poly[w] >> b) & 1U) {
        for (int k = 0; k < 4; ++k) acc[k] ^= s[k];
      }
      xoshiro_next(s[0], s[1], s[2], s[3]);
    }
  }
  for (int k = 0; k < 4; ++k) s[k] = acc[k];
}

/// Reinterprets the bits of a value of the same size (C++17 stand-in for std::bit_cast).
template <class To, class From>
inline To bit_cast(const From& from) noexcept {
  static_assert(sizeof(To) == sizeof(From), "bit_cast needs equal sizes");
  To to;
  std::memcpy(&to, &from, sizeof(To));
  return to;
}

// The kernel, once per instruction set, each in its own register width (so that no function
// passes a vector wider than its target's registers: no -Wpsabi notes).
#if defined(SGMCMC_HOST_X86)
namespace kernel_base {  // the build's own baseline: SSE2 on x86-64 unless the build asks more
#define SGMCMC_KERNEL_BYTES 16
#define SGMCMC_KERNEL_SQRT 1
#include "sgmcmc/host/detail/normal_kernel.inc"
#undef SGMCMC_KERNEL_SQRT
#undef SGMCMC_KERNEL_BYTES
}  // namespace kernel_base
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,fma")
#endif
namespace kernel_avx2 {
#define SGMCMC_KERNEL_BYTES 32
#define SGMCMC_KERNEL_SQRT 2
#include "sgmcmc/host/detail/normal_kernel.inc"
#undef SGMCMC_KERNEL_SQRT
#undef SGMCMC_KERNEL_BYTES
}  // namespace kernel_avx2
#if defined(__clang__)
#pragma clang attribute pop
#pragma clang attribute push(__attribute__((target("avx512f,avx512dq,avx512vl,avx512bw,fma"))), \
                             apply_to = function)
#else
#pragma GCC pop_options
#pragma GCC push_options
#pragma GCC target("avx512f,avx512dq,avx512vl,avx512bw,fma")
#endif
namespace kernel_avx512 {
#define SGMCMC_KERNEL_BYTES 64
#define SGMCMC_KERNEL_SQRT 3
#include "sgmcmc/host/detail/normal_kernel.inc"
#undef SGMCMC_KERNEL_SQRT
#undef SGMCMC_KERNEL_BYTES
}  // namespace kernel_avx512
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#else
namespace kernel_base {  // NEON on AArch64 (always present), plain scalar code elsewhere
#define SGMCMC_KERNEL_BYTES 16
#if defined(SGMCMC_HOST_NEON)
#define SGMCMC_KERNEL_SQRT 4
#else
#define SGMCMC_KERNEL_SQRT 0
#endif
#include "sgmcmc/host/detail/normal_kernel.inc"
#undef SGMCMC_KERNEL_SQRT
#undef SGMCMC_KERNEL_BYTES
}  // namespace kernel_base
#endif

template <class Scalar>
inline constexpr bool is_float_or_double_v =
    std::is_same_v<Scalar, float> || std::is_same_v<Scalar, double>;

}  // namespace detail

/// The instruction set a host::Rng's normal kernel runs on. Base is the build's own baseline
/// (SSE2 on x86-64 unless the build asks for more, NEON on AArch64, scalar code elsewhere).
enum class Isa : std::uint8_t { Base, Avx2, Avx512 };

/// Human-readable name of an Isa (static storage).
constexpr const char* to_string(Isa isa) noexcept {
  switch (isa) {
    case Isa::Base:
#if defined(SGMCMC_HOST_X86)
      return "baseline (SSE2)";
#elif defined(SGMCMC_HOST_NEON)
      return "baseline (NEON)";
#else
      return "baseline (scalar)";
#endif
    case Isa::Avx2:
      return "AVX2+FMA";
    case Isa::Avx512:
      return "AVX-512";
  }
  return "unknown";
}

/// Host RNG: xoshiro256++ words for operator(), plus 16 independent xoshiro256++ lanes that the
/// normal kernel advances together in SIMD registers.
///
/// Seeding: splitmix64(seed) gives the base state B (four words; never all zero). Stream k starts
/// at J^k B, where J is the 2^128-step jump, so streams never overlap within 2^128 words. Inside a
/// stream, operator() uses J^k B itself and lane j (0 <= j < 16) uses L^(j+1) J^k B, where L is the
/// 2^192-step long jump. All 17 sub-generators of all streams k < 2^64 therefore start at least
/// 2^128 steps apart in the single period-(2^256 - 1) sequence. Construction costs 256 (k + 16)
/// xoshiro steps (about 10 us for k = 0).
///
/// Normals: Box-Muller on 16 lanes at once, 32 normals per block (float: one lane step; double:
/// two), with a polynomial log (float: division-free; double: through one division,
/// s = f/(2+f)), the hardware square root and polynomial sin/cos on [-pi/4, pi/4] with a quadrant
/// from the word's top bits (normal_kernel.inc; the double blocks software-pipelined register by
/// register). Float draws satisfy |z| <= 6.67, double |z| <= 8.58; measured error against exact
/// Box-Muller on the same bits in tests/port. The kernel is compiled for the build's baseline and,
/// on x86-64, for AVX2+FMA and AVX-512; the constructor picks the best the CPU supports (set_isa()
/// forces one). A given seed gives bit-identical normals on a given kernel; kernels with FMA may
/// round differently from the baseline, so force one Isa to reproduce a chain bit for bit across
/// machines.
///
/// Buffering: each scalar type has a cache of cache_size normals. fill_normal serves the cache
/// first, writes whole blocks straight into the output while at least cache_size normals are
/// still wanted, and refills the whole cache for the rest, so
/// the values depend only on how many normals were drawn in total, never on how the calls split
/// them (same seed, same kernel). refill() tops the cache up ahead of time, so that a later
/// fill_normal of at most cached() normals is a plain copy (the real-time pattern).
/// operator() and the normal fill use disjoint sub-generators: interleaving them changes neither
/// sequence. Float and double fills share the lanes, so their interleaving matters.
///
/// Class invariant: no sub-generator state is all zero; 0 <= pos <= end <= cache_size for each
/// cache. Size: about 3.7 KB.
class Rng {
 public:
  using result_type = std::uint64_t;
  /// Number of parallel xoshiro256++ lanes behind fill_normal.
  static constexpr int lanes = 16;
  /// Normals produced per kernel block.
  static constexpr int block = 32;
  /// Normals buffered per scalar type.
  static constexpr int cache_size = 8 * block;

  /// @param[in] seed   any 64-bit value; expanded by splitmix64.
  /// @param[in] stream index of an independent stream (k jumps of 2^128; O(k) to construct).
  explicit Rng(std::uint64_t seed, std::uint64_t stream = 0) noexcept {
    std::uint64_t sm = seed;
    for (auto& w : s_) w = detail::splitmix64(sm);
    for (std::uint64_t k = 0; k < stream; ++k) detail::jump_state(s_, detail::kJump);
    std::uint64_t t[4] = {s_[0], s_[1], s_[2], s_[3]};
    for (int j = 0; j < lanes; ++j) {
      detail::jump_state(t, detail::kLongJump);
      for (int k = 0; k < 4; ++k) lane_[k][j] = t[k];
    }
    set_isa(best_isa());
  }

  /// The best kernel this CPU runs (checked once per call with the compiler's CPU detection).
  static Isa best_isa() noexcept {
    if (supported(Isa::Avx512)) return Isa::Avx512;
    if (supported(Isa::Avx2)) return Isa::Avx2;
    return Isa::Base;
  }
  /// Whether this build and CPU can run the kernel for isa.
  static bool supported(Isa isa) noexcept {
#if defined(SGMCMC_HOST_X86)
    __builtin_cpu_init();
    switch (isa) {
      case Isa::Base:
        return true;
      case Isa::Avx2:
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
      case Isa::Avx512:
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
               __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw");
    }
    return false;
#else
    return isa == Isa::Base;
#endif
  }
  /// The kernel in use.
  Isa isa() const noexcept {
    return isa_;
  }
  /// Selects the kernel; returns false (and changes nothing) if it is not supported here.
  /// Switching kernels does not move the stream: the next normals come from the same lane states.
  bool set_isa(Isa isa) noexcept {
    if (!supported(isa)) return false;
    isa_ = isa;
#if defined(SGMCMC_HOST_X86)
    switch (isa) {
      case Isa::Avx512:
        fill_f_ = &detail::kernel_avx512::fill_blocks;
        fill_d_ = &detail::kernel_avx512::fill_blocks;
        break;
      case Isa::Avx2:
        fill_f_ = &detail::kernel_avx2::fill_blocks;
        fill_d_ = &detail::kernel_avx2::fill_blocks;
        break;
      case Isa::Base:
        fill_f_ = &detail::kernel_base::fill_blocks;
        fill_d_ = &detail::kernel_base::fill_blocks;
        break;
    }
#else
    fill_f_ = &detail::kernel_base::fill_blocks;
    fill_d_ = &detail::kernel_base::fill_blocks;
#endif
    return true;
  }

  static constexpr result_type min() noexcept {
    return 0;
  }
  static constexpr result_type max() noexcept {
    return ~result_type(0);
  }

  /// Next 64-bit word of the scalar sub-generator.
  result_type operator()() noexcept {
    return detail::xoshiro_next(s_[0], s_[1], s_[2], s_[3]);
  }

  /// Advances every sub-generator by 2^128 steps and discards cached normals, so that a freshly
  /// constructed Rng(seed, k) followed by jump() draws exactly as Rng(seed, k + 1).
  void jump() noexcept {
    detail::jump_state(s_, detail::kJump);
    for (int j = 0; j < lanes; ++j) {
      std::uint64_t t[4] = {lane_[0][j], lane_[1][j], lane_[2][j], lane_[3][j]};
      detail::jump_state(t, detail::kJump);
      for (int k = 0; k < 4; ++k) lane_[k][j] = t[k];
    }
    pos_f_ = end_f_ = 0;
    pos_d_ = end_d_ = 0;
  }

  /// Fills out with independent N(0, 1) draws.
  /// @param[out] out any fixed size N >= 1; float or double.
  template <class Scalar, int N, std::enable_if_t<detail::is_float_or_double_v<Scalar>, int> = 0>
  void fill_normal(Eigen::Matrix<Scalar, N, 1>& out) noexcept {
    static_assert(N >= 1, "sgmcmc::host::Rng::fill_normal needs a fixed size N >= 1");
    fill_normal(out.data(), static_cast<std::size_t>(N));
  }

  /// Writes n standard normals to out[0 .. n-1]; the same stream as the vector overload.
  template <class Scalar, std::enable_if_t<detail::is_float_or_double_v<Scalar>, int> = 0>
  void fill_normal(Scalar* out, std::size_t n) noexcept {
    const Scalar* cache = cache_of<Scalar>();
    int& pos = pos_of<Scalar>();
    int& end = end_of<Scalar>();
    const auto cached = static_cast<std::size_t>(end - pos);
    if (cached > static_cast<std::size_t>(cache_size)) __builtin_unreachable();  // class invariant
    if (n <= cached) {  // the common small-d case: one copy of cached normals
      copy(cache + pos, n, out);
      pos += static_cast<int>(n);
      return;
    }
    copy(cache + pos, cached, out);
    std::size_t i = cached;
    pos = end = 0;
    // Large requests: whole blocks straight into out; small ones always through the cache, so
    // that the kernel's fixed cost (lane states in and out of registers) is paid per cache_size
    // normals, not per call.
    if (n - i >= static_cast<std::size_t>(cache_size)) {
      const std::size_t whole = (n - i) / block;
      kernel<Scalar>()(lane_, out + i, whole);
      i += whole * block;
    }
    if (i < n) {
      kernel<Scalar>()(lane_, cache_of<Scalar>(), cache_size / block);
      end = cache_size;
      const std::size_t rest = n - i;  // < cache_size
      copy(cache, rest, out + i);
      pos = static_cast<int>(rest);
    }
  }

  /// Largest n take_normals accepts.
  static constexpr std::size_t take_limit = cache_size - block + 1;

  /// The next n standard normals, the same stream as fill_normal, handed out in place: a pointer
  /// into the cache, valid until the next call that draws, refills or jumps; nullptr (nothing
  /// drawn) when n > take_limit. Saves fill_normal's copy where the caller reads the normals once
  /// (the chain batch's transposing fill). Refills first when fewer than n are cached.
  template <class Scalar, std::enable_if_t<detail::is_float_or_double_v<Scalar>, int> = 0>
  const Scalar* take_normals(std::size_t n) noexcept {
    if (n > take_limit) return nullptr;
    if (static_cast<std::size_t>(end_of<Scalar>() - pos_of<Scalar>()) < n) refill<Scalar>();
    int& pos = pos_of<Scalar>();
    const Scalar* out = cache_of<Scalar>() + pos;
    pos += static_cast<int>(n);
    return out;
  }

  /// Number of normals of type Scalar ready in the cache.
  template <class Scalar, std::enable_if_t<detail::is_float_or_double_v<Scalar>, int> = 0>
  std::size_t cached() const noexcept {
    return static_cast<std::size_t>(end_of<Scalar>() - pos_of<Scalar>());
  }

  /// Tops the cache of Scalar normals up to at least cache_size - block + 1 (keeping the cached
  /// ones first, so the stream is unchanged): the refill half of the real-time split.
  template <class Scalar, std::enable_if_t<detail::is_float_or_double_v<Scalar>, int> = 0>
  void refill() noexcept {
    Scalar* cache = cache_of<Scalar>();
    int& pos = pos_of<Scalar>();
    int& end = end_of<Scalar>();
    const int kept = end - pos;
    for (int j = 0; j < kept; ++j) cache[j] = cache[pos + j];  // forward: safe for overlap
    const int room = (cache_size - kept) / block;
    if (room > 0) kernel<Scalar>()(lane_, cache + kept, static_cast<std::size_t>(room));
    pos = 0;
    end = kept + room * block;
  }

  /// The 16 lane states (word k of lane j at [k][j]): what the next normals are made from.
  const std::uint64_t (&lane_words() const noexcept)[4][lanes] {
    return lane_;
  }

 private:
  /// A plain loop, inlined; GCC 12 makes it vector moves or a memmove call by size and target
  /// (8 doubles natively on an AVX-512 Xeon, and small copies in a portable build, are a call:
  /// an inline copy measured no better overall, docs/PERFORMANCE.md 2026-12-02). `to` never
  /// overlaps `from`, a range of the private cache (take_normals hands out const pointers, valid
  /// only until the next draw): without __restrict GCC copied 8 floats one at a time in case the
  /// two overlapped.
  template <class Scalar>
  static void copy(const Scalar* __restrict from, std::size_t n, Scalar* __restrict to) noexcept {
    for (std::size_t j = 0; j < n; ++j) to[j] = from[j];
  }

  template <class Scalar>
  using Kernel = void (*)(std::uint64_t (&)[4][lanes], Scalar*, std::size_t) noexcept;

  template <class Scalar>
  Kernel<Scalar> kernel() const noexcept {
    if constexpr (std::is_same_v<Scalar, float>) {
      return fill_f_;
    } else {
      return fill_d_;
    }
  }
  template <class Scalar>
  Scalar* cache_of() noexcept {
    if constexpr (std::is_same_v<Scalar, float>) {
      return cache_f_;
    } else {
      return cache_d_;
    }
  }
  template <class Scalar>
  int& pos_of() noexcept {
    if constexpr (std::is_same_v<Scalar, float>) {
      return pos_f_;
    } else {
      return pos_d_;
    }
  }
  template <class Scalar>
  const int& pos_of() const noexcept {
    return const_cast<Rng*>(this)->pos_of<Scalar>();
  }
  template <class Scalar>
  int& end_of() noexcept {
    if constexpr (std::is_same_v<Scalar, float>) {
      return end_f_;
    } else {
      return end_d_;
    }
  }
  template <class Scalar>
  const int& end_of() const noexcept {
    return const_cast<Rng*>(this)->end_of<Scalar>();
  }

  alignas(64) double cache_d_[cache_size] = {};  // normals [pos_d_, end_d_) are unused
  alignas(64) float cache_f_[cache_size] = {};   // normals [pos_f_, end_f_) are unused
  alignas(64) std::uint64_t lane_[4][lanes];     // lane_[k][j]: word k of lane j
  std::uint64_t s_[4];                           // scalar sub-generator behind operator()
  Kernel<float> fill_f_ = nullptr;
  Kernel<double> fill_d_ = nullptr;
  int pos_f_ = 0;
  int end_f_ = 0;
  int pos_d_ = 0;
  int end_d_ = 0;
  Isa isa_ = Isa::Base;
};

static_assert(is_rng_v<Rng>, "sgmcmc::host::Rng must satisfy the port RNG contract");

}  // namespace sgmcmc::host
