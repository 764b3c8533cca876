// SPDX-License-Identifier: MIT
// Step-size schedules h_t as small value types: constant, polynomial decay (Welling & Teh 2011)
// and cyclical (Zhang, Li, Zhang, Chen & Wilson 2020). O(1), noexcept, and errno-free on every
// parameter set that valid() accepts (the ranges are stated on each type).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace sgmcmc {

namespace detail {
/// True iff x is finite and strictly positive (false for NaN); no libm call.
template <class Scalar>
constexpr bool positive_finite(Scalar x) noexcept {
  return x > Scalar(0) && x <= std::numeric_limits<Scalar>::max();
}
}  // namespace detail

/// h_t = h for every t.
template <class Scalar>
struct ConstantSchedule {
  static_assert(std::is_floating_point_v<Scalar>, "a schedule's scalar is float or double");
  Scalar step_size{Scalar(1e-3)};  ///< h > 0, finite

  /// True iff h is finite and > 0.
  constexpr bool valid() const noexcept { return detail::positive_finite(step_size); }
  /// h_t (= h).
  constexpr Scalar operator()(std::uint64_t) const noexcept { return step_size; }
};

/// Polynomial decay h_t = a (b + t)^(−γ) (Welling & Teh 2011, §3): Σ_t h_t = ∞ and Σ_t h_t² < ∞
/// for γ ∈ (0.5, 1], the Robbins–Monro conditions under which SGLD's bias vanishes.
/// Valid ranges (valid() checks them): a > 0 finite; γ ∈ (0.5, 1]; b ∈ [m, max_offset] with m the
/// smallest normal number of Scalar and max_offset = 10^30 (float) or 10^300 (double); and
/// h_0 = a b^(−γ) finite, h at t = 2^64 − 1 non-zero. Then x = b + t lies in [m, max_offset + 2^64]
/// and x^(−γ) in [~1/max_offset, 1/m], normal numbers: std::pow neither overflows nor underflows
/// and cannot set errno (x > 0 rules out its domain and pole errors).
template <class Scalar>
struct PolynomialSchedule {
  static_assert(std::is_floating_point_v<Scalar>, "a schedule's scalar is float or double");
  /// Largest b: (b + t)^(−γ) stays a normal number for every t and γ ≤ 1.
  static constexpr Scalar max_offset = sizeof(Scalar) <= 4 ? Scalar(1e30) : Scalar(1e300);

  Scalar scale{Scalar(1e-2)};     ///< a > 0
  Scalar offset{Scalar(1)};       ///< b, in [smallest normal, max_offset]
  Scalar exponent{Scalar(0.55)};  ///< γ ∈ (0.5, 1]

  /// True iff the parameters are in the ranges above.
  bool valid() const noexcept {
    if (!detail::positive_finite(scale)) return false;
    if (!(exponent > Scalar(0.5) && exponent <= Scalar(1))) return false;
    if (!(offset >= std::numeric_limits<Scalar>::min() && offset <= max_offset)) return false;
    const Scalar first = (*this)(0);
    const Scalar last = (*this)(std::numeric_limits<std::uint64_t>::max());
    return detail::positive_finite(first) && detail::positive_finite(last);
  }
  /// h_t = a (b + t)^(−γ). For float, t is rounded to float before the sum (relative error of
  /// b + t below 2^−24, of h_t below γ 2^−24 plus std::pow's own).
  Scalar operator()(std::uint64_t t) const noexcept {
    return scale * std::pow(offset + static_cast<Scalar>(t), -exponent);
  }
};

/// Cyclical cosine schedule of cyclical SG-MCMC (Zhang et al. 2020, Eq. (1)): with T total steps
/// and M cycles of length K = ⌈T/M⌉, r_t = mod(t, K)/K and
///   h_t = (h₀/2)(cos(π r_t) + 1),
/// evaluated as h₀ sin²(π (K − mod(t, K)) / (2K)) (the same number, without the cancellation of
/// cos(π r) + 1 near the end of a cycle). t counts from 0, so h_0 = h₀; past T the cycles repeat.
/// Each cycle starts with an exploration stage (r_t < β: Zhang et al. run it as optimisation,
/// i.e. T = 0 in this library) and ends with a sampling stage (r_t ≥ β), which sampling(t) reports.
/// Valid ranges (valid() checks them): h₀ > 0 finite; T ≥ 1; 1 ≤ M ≤ T; β ∈ [0, 1]; and the
/// smallest step of a cycle, h₀ sin²(π/(2K)), non-zero (a cycle too long for Scalar's precision
/// or range is refused). std::sin of a finite argument in (0, π/2] cannot set errno.
template <class Scalar>
struct CyclicalSchedule {
  static_assert(std::is_floating_point_v<Scalar>, "a schedule's scalar is float or double");
  Scalar initial{Scalar(1e-2)};     ///< h₀ > 0: the step at the start of each cycle
  std::uint64_t total_steps{1000};  ///< T ≥ 1
  std::uint64_t cycles{4};          ///< M, 1 ≤ M ≤ T
  Scalar exploration{Scalar(0.8)};  ///< β ∈ [0, 1]: the fraction of each cycle that explores

  /// K = ⌈T/M⌉ (0 if M = 0).
  constexpr std::uint64_t cycle_length() const noexcept {
    return cycles == 0 ? 0 : total_steps / cycles + (total_steps % cycles != 0 ? 1 : 0);
  }
  /// True iff the parameters are in the ranges above.
  bool valid() const noexcept {
    if (!detail::positive_finite(initial)) return false;
    if (total_steps < 1 || cycles < 1 || cycles > total_steps) return false;
    if (!(exploration >= Scalar(0) && exploration <= Scalar(1))) return false;
    return (*this)(cycle_length() - 1) > Scalar(0);
  }
  /// The cycle t belongs to (0-based).
  constexpr std::uint64_t cycle(std::uint64_t t) const noexcept { return t / cycle_length(); }
  /// r_t = mod(t, K)/K ∈ [0, 1): the position of t in its cycle.
  constexpr Scalar phase(std::uint64_t t) const noexcept {
    const std::uint64_t k = cycle_length();
    return static_cast<Scalar>(t % k) / static_cast<Scalar>(k);
  }
  /// h_t.
  Scalar operator()(std::uint64_t t) const noexcept {
    constexpr Scalar half_pi = Scalar(1.5707963267948966192313216916397514L);
    const std::uint64_t k = cycle_length();
    const Scalar left = static_cast<Scalar>(k - t % k) / static_cast<Scalar>(k);  // 1 − r_t
    const Scalar s = std::sin(half_pi * left);
    return initial * (s * s);
  }
  /// True in the sampling stage of a cycle (r_t ≥ β), false in its exploration stage. Evaluated
  /// as mod(t, K) ≥ βK with βK rounded in Scalar, so that a β written as a decimal splits a cycle
  /// where it reads (β = 0.8, K = 250: steps 200..249 of each cycle sample).
  constexpr bool sampling(std::uint64_t t) const noexcept {
    const std::uint64_t k = cycle_length();
    return static_cast<Scalar>(t % k) >= exploration * static_cast<Scalar>(k);
  }
};

}  // namespace sgmcmc
