// SPDX-License-Identifier: MIT
// Errno-free, branch-free elementary functions (exp, expm1, log, log1p, tanh, pow, sqrt) and the
// Box-Muller pair built from them: pure functions for steps that may run in interrupt handlers.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>

#if defined(__SSE2__) || defined(_M_X64)
#include <emmintrin.h>
#endif

/// 1 where float's exp is computed in double (exp_in_double): targets with double-precision
/// hardware. 0 where double arithmetic is emulated (Cortex-M4F and other single-precision or
/// soft-float FPUs), which keep the float kernel. A build may define it either way.
#ifndef SGMCMC_FLOAT_EXP_IN_DOUBLE
#if defined(__SOFTFP__) || (defined(__ARM_FP) && !(__ARM_FP & 8)) || \
    (defined(__riscv) && (!defined(__riscv_flen) || __riscv_flen < 64))
#define SGMCMC_FLOAT_EXP_IN_DOUBLE 0
#else
#define SGMCMC_FLOAT_EXP_IN_DOUBLE 1
#endif
#endif

namespace sgmcmc::detail {

// Why: C libraries set errno at the edges of exp, log and pow (glibc always; newlib in POSIX mode,
// _LIB_VERSION = _POSIX_, or when built with its newer math), and a step called from an
// interrupt handler would then overwrite the errno of the code it interrupted. Everything here is
// IEEE arithmetic and bit manipulation on the argument: no library call, no global, no errno, no
// table, and no branch (the special cases go through select(), which the optimiser cannot turn
// into branches, or on x86 through minss/maxss), so the instruction count does not depend on the
// argument (measured on the Cortex-M4F: ports/cortex-m/tools/count-constant.sh). Needs IEEE
// semantics: not for -ffast-math (the NaN and Inf selects, and the rounding by 1.5 * 2^23, would
// be optimised away).
//
// Accuracy (max error in ulp, measured by ports/cortex-m/tests/host/test_math.cpp, ctest
// test_math: float over every 61st bit pattern against double, double over 10^6 random
// arguments per range against long double; run it for the current figures):
// see the table in ports/cortex-m/README.md ("Errno-free math"). Coefficients are minimax
// fits from ports/cortex-m/tools/fit_coefficients.py. Float exp (and exp_nonpositive) is
// computed in double where double is hardware (SGMCMC_FLOAT_EXP_IN_DOUBLE, exp_in_double): its
// chain of dependences is about half the float kernel's, which HMC's and NUTS's acceptance
// waits for, and it is correctly rounded but for about 1 argument in 35 000 (0.501 ulp).

/// Reinterprets the bits of a value of the same size (C++17 stand-in for std::bit_cast).
template <class To, class From>
inline To bit_cast(const From& from) noexcept {
  static_assert(sizeof(To) == sizeof(From), "bit_cast needs equal sizes");
  To to;
  std::memcpy(&to, &from, sizeof(To));
  return to;
}

/// Restricts the functions below to float and double (other scalar types, e.g. dual numbers,
/// keep finding their own exp, log, ... by argument-dependent lookup).
template <class S>
using EnableIfFloatingPoint =
    std::enable_if_t<std::is_same_v<S, float> || std::is_same_v<S, double>, int>;

/// Per-type constants: IEEE layout, ln 2 split so that k * ln2_hi is exact for every k used,
/// the argument clamps, and the minimax coefficients.
template <class S>
struct MathConstants;

template <>
struct MathConstants<float> {
  using Bits = std::uint32_t;
  using SignedBits = std::int32_t;
  static constexpr int mantissa_bits = 23;
  static constexpr SignedBits bias = 127;
  static constexpr Bits sqrt_half_bits = 0x3f3504f3u;  // sqrt(1/2) rounded down
  static constexpr float ln2_hi = 0x1.62e4p-1f;        // 15 significant bits
  static constexpr float ln2_lo = 0x1.7f7d1cf79abcap-20f;
  static constexpr float log2e = 0x1.715476p+0f;
  static constexpr float shifter = 0x1.8p+23f;  // x + shifter rounds x to an integer
  static constexpr float exp_hi = 89.0f;        // e^89 overflows to inf
  static constexpr float exp_lo = -104.0f;      // e^-104 rounds to 0
  static constexpr float expm1_lo = -30.0f;     // expm1(x) rounds to -1 below -17.4
  static constexpr float tanh_hi = 10.0f;       // tanh(x) rounds to 1 above 9.36
  static constexpr float tanh_small = 0.55f;    // below: the odd polynomial tanh_t
  static constexpr float subnormal_scale = 0x1p25f;
  static constexpr int subnormal_shift = 25;
  static constexpr int expm1_max_shift = 25;  // 1 - 2^-n rounds to 1 beyond this n
  /// log1p(f) = 2s + s R(z), s = f / (2 + f), z = s^2; R(z) = z (r[0] + z (r[1] + z r[2])).
  static constexpr float log_r[3] = {6.666677826e-01f, 3.997608277e-01f, 2.992545249e-01f};
  /// e^r - 1 = r + r^2 Q(r) on [-ln2/2, ln2/2].
  static constexpr float exp_q[5] = {5.000000062e-01f, 1.666654304e-01f, 4.166628217e-02f,
                                     8.366577286e-03f, 1.394643948e-03f};
  /// exp_in_double: e^r = 1 + r + r^2 Q(r) on [-ln2/2, ln2/2] in double, relative error
  /// 2^-34.2 (the float result's rounding then dominates).
  static constexpr double exp_dq[6] = {5.00000006764264260e-01, 1.66666658694113290e-01,
                                       4.16662950931655438e-02, 8.33349700970195846e-03,
                                       1.39446486248048546e-03, 1.97903516299185783e-04};
  /// sin a = a + a^3 S(a^2), cos a = 1 + a^2 C(a^2) on [-pi/4, pi/4].
  static constexpr float sin_s[3] = {-1.666665494e-01f, 8.332178146e-03f, -1.951729898e-04f};
  static constexpr float cos_c[4] = {-4.999999973e-01f, 4.166662332e-02f, -1.388676379e-03f,
                                     2.439045070e-05f};
  /// tanh x = x + x^3 T(x^2) for |x| <= tanh_small.
  static constexpr float tanh_t[5] = {-3.333331805e-01f, 1.333260169e-01f, -5.385385797e-02f,
                                      2.107775841e-02f, -6.282473351e-03f};
};

template <>
struct MathConstants<double> {
  using Bits = std::uint64_t;
  using SignedBits = std::int64_t;
  static constexpr int mantissa_bits = 52;
  static constexpr SignedBits bias = 1023;
  static constexpr Bits sqrt_half_bits = 0x3fe6a09e667f3bcdull;
  static constexpr double ln2_hi = 0x1.62e42fefa38p-1;  // 42 significant bits
  static constexpr double ln2_lo = 0x1.ef35793c76730p-45;
  static constexpr double log2e = 0x1.71547652b82fep+0;
  static constexpr double shifter = 0x1.8p+52;
  static constexpr double exp_hi = 710.0;
  static constexpr double exp_lo = -746.0;
  static constexpr double expm1_lo = -60.0;  // expm1(x) rounds to -1 below -37.4
  static constexpr double tanh_hi = 20.0;    // tanh(x) rounds to 1 above 19.1
  static constexpr double tanh_small = 0.55;
  static constexpr double subnormal_scale = 0x1p54;
  static constexpr int subnormal_shift = 54;
  static constexpr int expm1_max_shift = 54;
  static constexpr double log_r[7] = {6.66666666666670960e-01, 3.99999999995201139e-01,
                                      2.85714287292042290e-01, 2.22221991003786201e-01,
                                      1.81835709984445926e-01, 1.53131792773929160e-01,
                                      1.48103626398194216e-01};
  static constexpr double exp_q[10] = {5.00000000000000555e-01, 1.66666666666666852e-01,
                                       4.16666666665736971e-02, 8.33333333331461555e-03,
                                       1.38888889323534877e-03, 1.98412699029750585e-04,
                                       2.48015044782275046e-05, 2.75572280070350856e-06,
                                       2.76263130430398655e-07, 2.51144553966575405e-08};
  static constexpr double sin_s[6] = {-1.66666666666666324e-01, 8.33333333332242528e-03,
                                      -1.98412698298169502e-04, 2.75573136952265947e-06,
                                      -2.50507586532876496e-08, 1.58968279301520481e-10};
  static constexpr double cos_c[7] = {-5.00000000000000000e-01, 4.16666666666664909e-02,
                                      -1.38888888888639116e-03, 2.48015872850109413e-05,
                                      -2.75573133395137490e-07, 2.08756086630383579e-09,
                                      -1.13545211312864836e-11};
  static constexpr double tanh_t[11] = {
      -3.33333333333332982e-01, 1.33333333333268328e-01,  -5.39682539638786304e-02,
      2.18694883891032907e-02,  -8.86323265278386729e-03, 3.59209253247120934e-03,
      -1.45554598355586385e-03, 5.88457046746670466e-04,  -2.33412722366081428e-04,
      8.33600604759864977e-05,  -1.95210222943929129e-05};
};

/// Horner's rule unrolled at compile time (a loop would stay a loop at -Os).
template <class S, std::size_t N, std::size_t... I>
inline S horner_unrolled(S x, const S (&c)[N], std::index_sequence<I...>) noexcept {
  S p = c[N - 1];
  ((p = p * x + c[N - 2 - I]), ...);
  return p;
}

/// c[0] + x (c[1] + x (... + x c[N-1])), Horner's rule.
template <class S, std::size_t N>
inline S horner(S x, const S (&c)[N]) noexcept {
  return horner_unrolled(x, c, std::make_index_sequence<N - 1>{});
}

/// 2^n as a normal number, for n in [1 - bias, bias].
template <class S>
inline S pow2(typename MathConstants<S>::SignedBits n) noexcept {
  using C = MathConstants<S>;
  using Bits = typename C::Bits;
  return bit_cast<S>(static_cast<Bits>(static_cast<Bits>(n + C::bias) << C::mantissa_bits));
}

/// c ? a : b with both operands computed and no branch, opaque to the optimiser: it cannot
/// specialise the code after it on c (GCC otherwise turns a clamp to a constant into a branch
/// around the now-constant arithmetic). Thumb-2: cmp, it, vmov/mov; elsewhere a bit mask hidden
/// behind an empty asm.
template <class T>
inline T select(bool c, T a, T b) noexcept {
  static_assert(std::is_trivially_copyable_v<T> && (sizeof(T) == 4 || sizeof(T) == 8),
                "select works on 32- and 64-bit scalars");
#if defined(__GNUC__) && defined(__thumb2__)
#if defined(__ARM_FP) && (__ARM_FP & 4)
  if constexpr (std::is_same_v<T, float>) {
    asm("cmp %[c], #0\n\tit ne\n\tvmovne.f32 %[r], %[a]"
        : [r] "+t"(b)
        : [c] "r"(c), [a] "t"(a)
        : "cc");
    return b;
  }
#endif
  if constexpr (std::is_integral_v<T> && sizeof(T) == 4) {
    asm("cmp %[c], #0\n\tit ne\n\tmovne %[r], %[a]" : [r] "+r"(b) : [c] "r"(c), [a] "r"(a) : "cc");
    return b;
  }
#endif
  using Bits = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
  Bits mask = Bits(0) - static_cast<Bits>(c);
#if defined(__GNUC__)
  asm("" : "+r"(mask));  // the optimiser no longer knows mask is 0 or ~0
#endif
  return bit_cast<T>(static_cast<Bits>((bit_cast<Bits>(a) & mask) | (bit_cast<Bits>(b) & ~mask)));
}

/// Square root without errno: the hardware instruction on Cortex-M with a single-precision FPU
/// (float), x86 with SSE2 and AArch64 (correctly rounded, constant time; NaN for x < 0); else
/// std::sqrt on a non-negative argument, NaN selected for x < 0.
template <class S, EnableIfFloatingPoint<S> = 0>
inline S sqrt(S x) noexcept {
#if defined(__arm__) && defined(__ARM_FP) && (__ARM_FP & 4)
  if constexpr (std::is_same_v<S, float>) {
    float r;
    asm("vsqrt.f32 %0, %1" : "=t"(r) : "t"(x));
    return r;
  }
#elif defined(__aarch64__)
  {
    S r;
    if constexpr (std::is_same_v<S, float>) {
      asm("fsqrt %s0, %s1" : "=w"(r) : "w"(x));
    } else {
      asm("fsqrt %d0, %d1" : "=w"(r) : "w"(x));
    }
    return r;
  }
#elif defined(__SSE2__) || defined(_M_X64)
  if constexpr (std::is_same_v<S, float>) {
    return _mm_cvtss_f32(_mm_sqrt_ss(_mm_set_ss(x)));
  } else {
    const __m128d v = _mm_set_sd(x);
    return _mm_cvtsd_f64(_mm_sqrt_sd(v, v));
  }
#endif
  const S r = std::sqrt(select(x >= S(0), x, S(0)));  // never a negative argument: no EDOM
  return select(x >= S(0), r, std::numeric_limits<S>::quiet_NaN());
}

/// ln(1 + f) + k ln 2 for f in [sqrt(1/2) - 1, sqrt(2) - 1], plus a correction term c added at
/// the lowest order (log1p's rounding of 1 + x). Branch-free.
template <class S, EnableIfFloatingPoint<S> = 0>
inline S log_reduced(S f, S k, S c) noexcept {
  using C = MathConstants<S>;
  const S s = f / (S(2) + f);
  const S z = s * s;
  const S r = z * horner(z, C::log_r);
  const S hfsq = S(0.5) * f * f;
  // ln(1 + f) = f - (hfsq - s (hfsq + R)): exact rearrangement of 2s + sR, since f - sf = 2s.
  return k * C::ln2_hi - ((hfsq - (s * (hfsq + r) + (k * C::ln2_lo + c))) - f);
}

/// Splits a positive normal x into x = 2^k (1 + f), 1 + f in [sqrt(1/2), sqrt(2)). Branch-free.
template <class S, EnableIfFloatingPoint<S> = 0>
inline void log_split(S x, S& f, S& k) noexcept {
  using C = MathConstants<S>;
  using Bits = typename C::Bits;
  using SignedBits = typename C::SignedBits;
  const Bits adjusted = bit_cast<Bits>(x) - C::sqrt_half_bits;
  // The exponent of x / sqrt(1/2), arithmetic shift (negative below sqrt(1/2)).
  k = static_cast<S>(static_cast<SignedBits>(adjusted) >> C::mantissa_bits);
  const Bits mantissa_mask = (Bits(1) << C::mantissa_bits) - 1u;
  f = bit_cast<S>((adjusted & mantissa_mask) + C::sqrt_half_bits) - S(1);
}

/// Natural logarithm of a positive, finite, normal x (no special cases): the kernel of log()
/// and of the Box-Muller radius. Branch-free.
template <class S, EnableIfFloatingPoint<S> = 0>
inline S log_positive(S x) noexcept {
  S f, k;
  log_split(x, f, k);
  return log_reduced(f, k, S(0));
}

/// Natural logarithm: log(±0) = -inf, log(x < 0) = NaN, log(+inf) = +inf, NaN -> NaN, subnormals
/// exact to the same accuracy. No errno.
template <class S, EnableIfFloatingPoint<S> = 0>
inline S log(S x) noexcept {
  using C = MathConstants<S>;
  using L = std::numeric_limits<S>;
  const bool subnormal = x < L::min();  // also true for 0 and negatives, replaced below
  const S scaled = select(subnormal, x * C::subnormal_scale, x);
  S f, k;
  log_split(scaled, f, k);
  k -= select(subnormal, S(C::subnormal_shift), S(0));
  const S y = log_reduced(f, k, S(0));
  const S special =
      select(x == S(0), -L::infinity(), select(x == L::infinity(), x, L::quiet_NaN()));
  return select((x > S(0)) & (x < L::infinity()), y, special);
}

/// ln(1 + x), accurate for small x: log1p(-1) = -inf, x < -1 -> NaN, +inf -> +inf, NaN -> NaN.
/// No errno.
template <class S, EnableIfFloatingPoint<S> = 0>
inline S log1p(S x) noexcept {
  using L = std::numeric_limits<S>;
  const S u = S(1) + x;
  const bool regular = (u > S(0)) & (u < L::infinity());
  const S safe = select(regular, u, S(1));
  // u rounds 1 + x; (x - (u - 1)) / u is the first-order correction (u - 1 is exact).
  const S c = (x - (safe - S(1))) / safe;
  S f, k;
  log_split(safe, f, k);
  const S y = log_reduced(f, k, c);
  const S special =
      select(u == S(0), -L::infinity(), select(u == L::infinity(), u, L::quiet_NaN()));
  return select(regular, y, special);
}

/// n = round(x log2 e) and x - n ln 2 = hi + lo (hi exact, lo the rounded tail), for x already
/// clamped; returns n's two's-complement bits. Rounds by adding 1.5 * 2^p (ties to even under the
/// default rounding mode).
template <class S, EnableIfFloatingPoint<S> = 0>
inline typename MathConstants<S>::Bits exp_split(S x, S& hi, S& lo) noexcept {
  using C = MathConstants<S>;
  using Bits = typename C::Bits;
  const S t = x * C::log2e + C::shifter;
  const S nf = t - C::shifter;
  const Bits n = bit_cast<Bits>(t) - bit_cast<Bits>(C::shifter);
  hi = x - nf * C::ln2_hi;  // exact: nf ln2_hi is exact and close to x
  lo = -nf * C::ln2_lo;
  return n;
}

/// e^(hi + lo) on the reduced range: 1 + (hi + (lo + r^2 Q(r))), r = hi + lo; hi exact, so r's
/// own rounding does not enter.
template <class S, EnableIfFloatingPoint<S> = 0>
inline S exp_reduced(S hi, S lo) noexcept {
  const S r = hi + lo;
  return S(1) + (hi + (lo + r * r * horner(r, MathConstants<S>::exp_q)));
}

/// max(x, lo), a NaN x passed through, without a branch: maxss/maxsd on x86 (which return their
/// second operand when either is NaN), select() elsewhere.
template <class S, EnableIfFloatingPoint<S> = 0>
inline S clamp_below(S x, S lo) noexcept {
#if defined(__SSE2__) || defined(_M_X64)
  if constexpr (std::is_same_v<S, float>) {
    return _mm_cvtss_f32(_mm_max_ss(_mm_set_ss(lo), _mm_set_ss(x)));
  } else {
    return _mm_cvtsd_f64(_mm_max_sd(_mm_set_sd(lo), _mm_set_sd(x)));
  }
#else
  return select(x < lo, lo, x);
#endif
}

/// min(x, hi), a NaN x passed through, without a branch (as clamp_below).
template <class S, EnableIfFloatingPoint<S> = 0>
inline S clamp_above(S x, S hi) noexcept {
#if defined(__SSE2__) || defined(_M_X64)
  if constexpr (std::is_same_v<S, float>) {
    return _mm_cvtss_f32(_mm_min_ss(_mm_set_ss(hi), _mm_set_ss(x)));
  } else {
    return _mm_cvtsd_f64(_mm_min_sd(_mm_set_sd(hi), _mm_set_sd(x)));
  }
#else
  return select(x > hi, hi, x);
#endif
}

/// x clamped to [lowest, exp_hi] (NaN passes through both), the argument every exp kernel
/// takes. ClampHigh = false when the caller guarantees x <= 0 (exp_nonpositive).
template <class S, bool ClampHigh = true, EnableIfFloatingPoint<S> = 0>
inline S exp_clamp(S x, S lowest) noexcept {
  if constexpr (ClampHigh) x = clamp_above(x, MathConstants<S>::exp_hi);
  return clamp_below(x, lowest);
}

/// exp_clamp, then exp_split: the reduction shared by exp and expm1.
template <class S, bool ClampHigh = true, EnableIfFloatingPoint<S> = 0>
inline void exp_reduce(S x, S lowest, S& hi, S& lo,
                       typename MathConstants<S>::SignedBits& n) noexcept {
  n = static_cast<typename MathConstants<S>::SignedBits>(
      exp_split(exp_clamp<S, ClampHigh>(x, lowest), hi, lo));
}

/// e^x for a float x in [exp_lo, exp_hi] (or NaN), computed in double and rounded once to float
/// (SGMCMC_FLOAT_EXP_IN_DOUBLE): k = round(x log2 e) and r = x - k ln 2 in double (k ln 2 off by
/// at most 2^-46), e^r = (1 + r) + r^2 (q0 + q1 r) + r^4 ((q2 + q3 r) + r^2 (q4 + q5 r)) by
/// Estrin's scheme (three multiply-adds after r^2 on the chain, where the float kernel has eight
/// dependent steps and two integer round trips), 2^k added to the exponent field (t = 1.5 2^52 +
/// k, so t's bits shifted left by 52 are k's; p 2^k is a normal double for every k in
/// [-151, 129]), then one rounding: overflow to inf and gradual underflow come from the rounding,
/// as for the exact value. A NaN stays NaN (its low bits are zero, so nothing is added). Relative
/// error before the rounding below 2^-34, so within 0.501 ulp. This part: p = e^r and t.
inline double exp_in_double_reduced(double x, double& t) noexcept {
  using D = MathConstants<double>;
  const double(&q)[6] = MathConstants<float>::exp_dq;
  t = x * D::log2e + D::shifter;
  const double k = t - D::shifter;
  const double r = x - k * (D::ln2_hi + D::ln2_lo);  // ln 2 rounded to nearest
  const double r2 = r * r;
  const double r4 = r2 * r2;
  const double low = (1.0 + r) + r2 * (q[0] + q[1] * r);
  const double high = (q[2] + q[3] * r) + r2 * (q[4] + q[5] * r);
  return low + r4 * high;
}

/// p 2^k rounded to float, k from t's bits, in plain integer arithmetic (a loop of them
/// vectorises).
inline float exp_in_double_scaled(double p, double t) noexcept {
  const std::uint64_t scaled = bit_cast<std::uint64_t>(p) + (bit_cast<std::uint64_t>(t) << 52);
  return static_cast<float>(bit_cast<double>(scaled));
}

/// exp_in_double_reduced and _scaled for one argument; on x86 the scaling stays in the vector
/// unit (GCC would move p and t to general registers and back: six cycles on the chain). Only the
/// low lanes matter: _mm_set1_pd rather than _mm_set_sd, whose zeroed upper lane GCC makes with a
/// register-to-register VEX movq that valgrind (3.19) cannot decode (scripts/realtime-table and
/// scripts/step-cost run the step under callgrind).
inline float exp_in_double(float x) noexcept {
  double t;
  const double p = exp_in_double_reduced(x, t);
#if defined(__SSE2__) || defined(_M_X64)
  const __m128i scaled = _mm_add_epi64(_mm_castpd_si128(_mm_set1_pd(p)),
                                       _mm_slli_epi64(_mm_castpd_si128(_mm_set1_pd(t)), 52));
  return static_cast<float>(_mm_cvtsd_f64(_mm_castsi128_pd(scaled)));
#else
  return exp_in_double_scaled(p, t);
#endif
}

/// v 2^n for |n| <= 2 bias, in two normal factors so that overflow and gradual underflow round
/// once.
template <class S, EnableIfFloatingPoint<S> = 0>
inline S scale_pow2(S v, typename MathConstants<S>::SignedBits n) noexcept {
  const auto n1 = static_cast<typename MathConstants<S>::SignedBits>(n / 2);
  return v * pow2<S>(n1) * pow2<S>(n - n1);
}

/// e^x: overflows to +inf above ln(max), underflows gradually to 0, e^-inf = 0, NaN -> NaN.
/// No errno.
template <class S, bool ClampHigh = true, EnableIfFloatingPoint<S> = 0>
inline S exp(S x) noexcept {
  using C = MathConstants<S>;
  if constexpr (std::is_same_v<S, float> && SGMCMC_FLOAT_EXP_IN_DOUBLE) {
    return exp_in_double(exp_clamp<S, ClampHigh>(x, C::exp_lo));
  } else {
    S hi, lo;
    typename C::SignedBits n;
    exp_reduce<S, ClampHigh>(x, C::exp_lo, hi, lo, n);
    return scale_pow2(exp_reduced(hi, lo), n);
  }
}

/// e^x for x <= 0 (or -inf, NaN): exp without the clamp that only overflow needs. The same
/// values as exp there, no errno: HMC's acceptance min(1, e^-dE) = e^min(0, -dE), and the tree
/// weights of NUTS and the SGNUTS seed (e^(x - max)).
template <class S, EnableIfFloatingPoint<S> = 0>
inline S exp_nonpositive(S x) noexcept {
  return exp<S, false>(x);
}

/// v with its value hidden from the optimiser (an empty asm on its bits; GCC and Clang): a loop
/// invariant the compiler must not fold, such as the clamp bound of exp_nonpositive_lane.
template <class S, EnableIfFloatingPoint<S> = 0>
inline S opaque(S v) noexcept {
  auto bits = bit_cast<typename MathConstants<S>::Bits>(v);
#if defined(__GNUC__)
  asm("" : "+r"(bits));
#endif
  return bit_cast<S>(bits);
}

/// exp_nonpositive written for the body of a loop the compiler vectorises: the same values for
/// every x <= 0, -inf and NaN (tests/logreg/test_model.cpp, test_math), with plain conditionals
/// in place of select(), whose asm keeps each value in a general register (a loop of them runs
/// scalar), and n / 2 in unsigned arithmetic, which SSE2 and AVX2 have (n <= 0 here); for float
/// where SGMCMC_FLOAT_EXP_IN_DOUBLE, exp_in_double's kernel with plain integer scaling (GCC
/// vectorises it as well). `lowest` must be opaque(MathConstants<S>::exp_lo), taken once outside
/// the loop: with the constant in sight, GCC branches around the polynomial for clamped arguments
/// and then does not vectorise the loop. Where the loop is not vectorised the compiler may
/// branch, so the constant-time paths (docs/REALTIME.md) use exp_nonpositive.
template <class S, EnableIfFloatingPoint<S> = 0>
inline S exp_nonpositive_lane(S x, S lowest) noexcept {
  using C = MathConstants<S>;
  using Bits = typename C::Bits;
  using SignedBits = typename C::SignedBits;
  if constexpr (std::is_same_v<S, float> && SGMCMC_FLOAT_EXP_IN_DOUBLE) {
    double t;
    const double p = exp_in_double_reduced(x < lowest ? lowest : x, t);
    return exp_in_double_scaled(p, t);
  } else {
    S hi, lo;
    const Bits n = exp_split(x < lowest ? lowest : x, hi, lo);  // n <= 0, modulo 2^bits
    // scale_pow2's split: n1 = n / 2 rounded toward zero, = -((-n) >> 1) for n <= 0.
    const Bits n1 = Bits(0) - ((Bits(0) - n) >> 1);
    return exp_reduced(hi, lo) * pow2<S>(static_cast<SignedBits>(n1)) *
           pow2<S>(static_cast<SignedBits>(n - n1));
  }
}

/// e^x - 1, accurate for small x: +inf above ln(max), -1 below, NaN -> NaN. No errno.
template <class S, EnableIfFloatingPoint<S> = 0>
inline S expm1(S x) noexcept {
  using C = MathConstants<S>;
  S hi, lo;
  typename C::SignedBits n;
  exp_reduce(x, C::expm1_lo, hi, lo, n);
  const S r = hi + lo;
  // e^x - 1 = 2^n (e^r - 1 + t), t = 1 - 2^-n (exact for n <= p, rounds to 1 beyond), and
  // e^r - 1 = hi + (lo + r^2 Q(r)). hi + t is exact for n >= 0 (both on the grid of x's last
  // place, sum below 2), so for n = 1, r < 0 the cancellation costs no extra rounding.
  const auto m = select(n < C::expm1_max_shift, n, typename C::SignedBits(C::expm1_max_shift));
  const S t = S(1) - pow2<S>(-m);
  return scale_pow2((hi + t) + (lo + r * r * horner(r, C::exp_q)), n);
}

/// Hyperbolic tangent, odd: x + x^3 T(x^2) for |x| <= 0.55, 1 - 2 / (expm1(2|x|) + 2)
/// above (both computed, one selected), ±1 beyond the rounding point, NaN -> NaN. No errno.
template <class S, EnableIfFloatingPoint<S> = 0>
inline S tanh(S x) noexcept {
  using C = MathConstants<S>;
  using Bits = typename C::Bits;
  const Bits sign = bit_cast<Bits>(x) & (Bits(1) << (8 * sizeof(S) - 1));
  S a = bit_cast<S>(bit_cast<Bits>(x) ^ sign);
  a = select(a > C::tanh_hi, C::tanh_hi, a);
  const S t = a * a;
  const S small = a + a * t * horner(t, C::tanh_t);
  const S e = expm1(S(2) * a);
  const S large = S(1) - S(2) / (e + S(2));
  return bit_cast<S>(bit_cast<Bits>(select(a <= C::tanh_small, small, large)) | sign);
}

/// x^y for x >= 0 as e^(y ln x): pow(x, 0) = 1 and pow(1, y) = 1 for every y (NaN included),
/// pow(0, y > 0) = 0, pow(0, y < 0) = +inf, pow(inf, y) = inf or 0, x < 0 -> NaN (unlike
/// std::pow, even for integer y). Relative error about |y ln x| ulp on top of exp's: keep
/// |y ln x| moderate where accuracy matters. No errno.
template <class S, EnableIfFloatingPoint<S> = 0>
inline S pow(S x, S y) noexcept {
  const S l = detail::log(x);
  // y ln x is NaN for y = 0 and x in {0, inf}, or x = 1 and y infinite: the selects fix those.
  const S v = detail::exp(y * l);
  return select((y == S(0)) | (x == S(1)), S(1), v);
}

/// cos a and sin a for |a| <= pi/4 (minimax polynomials). Branch-free.
template <class S, EnableIfFloatingPoint<S> = 0>
inline void sincos_quarter(S a, S& c, S& s) noexcept {
  using C = MathConstants<S>;
  const S z = a * a;
  s = a + a * z * horner(z, C::sin_s);
  c = S(1) + z * horner(z, C::cos_c);
}

/// r cos theta and r sin theta for the angle theta = q pi/2 + a encoded by the word `angle`:
/// q = its top 2 bits, a = (f - 1.5) pi/2 in [-pi/4, pi/4) with f in [1, 2) from its next
/// mantissa-width bits. Odd quadrants swap cos and sin; cos < 0 for q in {1, 2}, sin < 0 for
/// q in {2, 3}: bit-mask selects, branch-free on every target.
template <class S, EnableIfFloatingPoint<S> = 0>
inline void polar_to_pair(S r, typename MathConstants<S>::Bits angle, S& z0, S& z1) noexcept {
  using C = MathConstants<S>;
  using Bits = typename C::Bits;
  constexpr int top = 8 * sizeof(S) - 2;
  const Bits mantissa_mask = (Bits(1) << C::mantissa_bits) - 1u;
  const Bits one = bit_cast<Bits>(S(1));
  const S f = bit_cast<S>(one | ((angle >> (top - C::mantissa_bits)) & mantissa_mask));
  S c, s;
  sincos_quarter((f - S(1.5)) * S(1.57079632679489661923), c, s);
  const Bits q = angle >> top;
  const Bits swap = Bits(0) - (q & 1u);
  const Bits cb = bit_cast<Bits>(c);
  const Bits sb = bit_cast<Bits>(s);
  z0 = r * bit_cast<S>(((cb & ~swap) | (sb & swap)) ^ (((q + 1u) & 2u) << top));
  z1 = r * bit_cast<S>(((sb & ~swap) | (cb & swap)) ^ ((q & 2u) << top));
}

/// Box-Muller pair from the 32-bit halves of one word (float). lo gives the radius:
/// u = ((lo >> 1) + 1) 2^-31 in (0, 1], r = sqrt(-2 ln u) <= 6.56, with ln u exact to float
/// accuracy although u itself has more bits than a float (the conversion's rounding error is
/// added back as e / u). hi gives the angle (polar_to_pair: 2 + 23 bits). z0 = r cos theta,
/// z1 = r sin theta. Branch-free, no errno, a constant instruction count.
inline void normal_pair(std::uint32_t lo, std::uint32_t hi, float& z0, float& z1) noexcept {
  const std::uint32_t m = (lo >> 1) + 1u;            // [1, 2^31]
  const auto mf = static_cast<float>(m);             // rounded to 24 bits, <= 2^31
  const auto back = static_cast<std::uint32_t>(mf);  // exact
  const auto e = static_cast<float>(static_cast<std::int32_t>(m - back));  // |e| <= 64, exact
  const float ln_u = log_positive(mf * 0x1p-31f) + e / mf;                 // ln(mf + e) - 31 ln 2
  // |.| guards the sign of a zero; ln u <= 0 otherwise.
  polar_to_pair(detail::sqrt(std::fabs(-2.0f * ln_u)), hi, z0, z1);
}

/// Box-Muller pair from two words (double): w1 gives u = (2 (w1 >> 12) + 1) 2^-53 in (0, 1),
/// exact, r <= 8.58; w2 gives the angle (polar_to_pair: 2 + 52 bits).
inline void normal_pair(std::uint64_t w1, std::uint64_t w2, double& z0, double& z1) noexcept {
  const double u = (bit_cast<double>(0x3ff0000000000000ull | (w1 >> 12)) - 1.0) + 0x1p-53;
  polar_to_pair(detail::sqrt(std::fabs(-2.0 * log_positive(u))), w2, z0, z1);
}

}  // namespace sgmcmc::detail
