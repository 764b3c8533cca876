// SPDX-License-Identifier: MIT
// Kernel Stein discrepancy with the inverse multiquadric kernel (Gorham & Mackey 2017): how far a
// sample is from exp(−U), from the sample and its scores s_i = −∇U(x_i), held in caller memory.
// O(n² d) time, no heap; a streaming accumulator adds one sample in O(n d).
#pragma once

// With k(x, y) = (c² + ‖x − y‖²)^β, β = −1/2, r = x − y, u = c² + ‖r‖² and the Langevin Stein
// operator, the Stein kernel is
//   k_p(x, y) = s(x)ᵀs(y) k + s(x)ᵀ∇_y k + s(y)ᵀ∇_x k + tr(∇_x∇_y k)
//             = u^{−1/2} s(x)·s(y) + u^{−3/2} [(s(x) − s(y))·r + d] − 3 u^{−5/2} ‖r‖²
// (∇_x k = 2β u^{β−1} r, tr ∇_x∇_y k = −2βd u^{β−1} − 4β(β−1) u^{β−2} ‖r‖²), and
//   KSD² = E_{x,y~q} k_p(x, y),  estimated by the V-statistic (1/n²) Σ_{i,j} k_p(x_i, x_j) ≥ 0 or
//   the U-statistic (1/(n(n−1))) Σ_{i≠j} k_p(x_i, x_j), unbiased (E = 0 when q = exp(−U)).
// Gorham & Mackey (2017) show that the IMQ KSD with β ∈ (−1, 0) detects non-convergence for
// distantly dissipative targets (and c > 0, β = −1/2 is their default). Under q = p,
// E[V-statistic] = E_p k_p(x, x)/n = (E_p‖s‖²/c + d/c³)/n, e.g. 2d/n for N(0, I) with c = 1.
// Every evaluation is a square root of u ≥ c² > 0 and products: no libm call that sets errno.

#include <cmath>
#include <cstddef>
#include <limits>

#include <Eigen/Core>

#include "sgmcmc/core/types.hpp"

namespace sgmcmc {

/// A KSD estimate from n samples.
template <class T>
struct KSDEstimate {
  T v_statistic;  ///< (1/n²) Σ_{i,j} k_p(x_i, x_j) ≥ 0 (NaN if invalid)
  T u_statistic;  ///< (1/(n(n−1))) Σ_{i≠j} k_p(x_i, x_j), unbiased, may be < 0 (NaN for n < 2)
  std::size_t n;  ///< samples used
  /// KSD = √(V-statistic), the number Gorham & Mackey report.
  T ksd() const noexcept { return std::sqrt(v_statistic > T(0) ? v_statistic : T(0)); }
};

/// The IMQ Stein kernel k_p(x, y) (β = −1/2) of two points of dimension d and their scores,
/// accumulated in Accum. c² > 0.
template <class Accum, class Scalar>
Accum imq_stein_kernel(const Scalar* x, const Scalar* sx, const Scalar* y, const Scalar* sy,
                       std::size_t d, Accum c2) noexcept {
  Accum r2 = 0;   // ‖x − y‖²
  Accum ss = 0;   // s(x)·s(y)
  Accum dsr = 0;  // (s(x) − s(y))·(x − y)
  for (std::size_t k = 0; k < d; ++k) {
    const Accum r = Accum(x[k]) - Accum(y[k]);
    r2 += r * r;
    ss += Accum(sx[k]) * Accum(sy[k]);
    dsr += (Accum(sx[k]) - Accum(sy[k])) * r;
  }
  const Accum u = c2 + r2;
  const Accum inv_u = Accum(1) / u;
  const Accum k1 = Accum(1) / std::sqrt(u);  // u^{−1/2}
  const Accum k3 = k1 * inv_u;               // u^{−3/2}
  const Accum k5 = k3 * inv_u;               // u^{−5/2}
  return k1 * ss + k3 * (dsr + Accum(d)) - Accum(3) * k5 * r2;
}

namespace detail {
/// Σ_{j<i} k_p(x_i, x_j) for samples stored sample-major (x + j d).
template <class Accum, class Scalar>
Accum ksd_row(const Scalar* x, const Scalar* s, std::size_t i, std::size_t d, Accum c2) noexcept {
  Accum row = 0;
  const Scalar* xi = x + i * d;
  const Scalar* si = s + i * d;
  for (std::size_t j = 0; j < i; ++j) row += imq_stein_kernel(xi, si, x + j * d, s + j * d, d, c2);
  return row;
}
template <class Accum>
KSDEstimate<Accum> ksd_from_sums(Accum diagonal, Accum off, std::size_t n) noexcept {
  const Accum nan = std::numeric_limits<Accum>::quiet_NaN();
  if (n == 0) return {nan, nan, 0};
  const Accum nn = Accum(n);
  const Accum v = (diagonal + Accum(2) * off) / (nn * nn);
  const Accum u = n >= 2 ? Accum(2) * off / (nn * (nn - Accum(1))) : nan;
  return {v, u, n};
}
template <class Scalar>
bool ksd_width_valid(Scalar c) noexcept {
  return c > Scalar(0) && c <= std::numeric_limits<Scalar>::max();
}
}  // namespace detail

/// IMQ KSD of n samples x (n × d, sample-major: sample i at x + i d) with scores s = −∇U(x_i)
/// (same layout), kernel width c > 0 (Gorham & Mackey's default 1). Sums in Accum (double by
/// default, also for float samples). O(n² d) time, n(n+1)/2 kernel evaluations (symmetry).
/// NaN statistics if x or s is null, d = 0, n = 0 or c is not finite and > 0.
template <class Accum = double, class Scalar>
KSDEstimate<Accum> ksd_imq(const Scalar* x, const Scalar* s, std::size_t n, std::size_t d,
                           Scalar c = Scalar(1)) noexcept {
  if (x == nullptr || s == nullptr || d == 0 || !detail::ksd_width_valid(c)) {
    return detail::ksd_from_sums<Accum>(0, 0, 0);
  }
  const Accum c2 = Accum(c) * Accum(c);
  Accum diagonal = 0;
  Accum off = 0;
  for (std::size_t i = 0; i < n; ++i) {
    diagonal += imq_stein_kernel(x + i * d, s + i * d, x + i * d, s + i * d, d, c2);
    off += detail::ksd_row(x, s, i, d, c2);
  }
  return detail::ksd_from_sums(diagonal, off, n);
}

/// Streaming IMQ KSD over caller memory: keeps up to `capacity` samples and their scores in the
/// buffers it is given (capacity × d scalars each, sample-major) and, per push, adds the new
/// sample's kernel values against all kept ones, O(n d). estimate() is then exactly ksd_imq of the
/// samples pushed so far (same sums in the same order). Class invariant: count() ≤ capacity.
template <class Scalar, class Accum = double>
class KSDAccumulator {
 public:
  /// Views the buffers; valid() says whether they and c can be used.
  KSDAccumulator(Scalar* x_buffer, Scalar* score_buffer, std::size_t capacity, std::size_t d,
                 Scalar c = Scalar(1)) noexcept
      : x_(x_buffer), s_(score_buffer), capacity_(capacity), d_(d), c_(c) {}

  /// Non-null buffers, capacity ≥ 1, d ≥ 1, c finite and > 0.
  bool valid() const noexcept {
    return x_ != nullptr && s_ != nullptr && capacity_ >= 1 && d_ >= 1 &&
           detail::ksd_width_valid(c_);
  }
  /// Adds sample x with score s (d values each, copied). False, and nothing changes, if the
  /// accumulator is invalid or full.
  bool push(const Scalar* x, const Scalar* s) noexcept {
    if (!valid() || n_ >= capacity_) return false;
    Scalar* xi = x_ + n_ * d_;
    Scalar* si = s_ + n_ * d_;
    for (std::size_t k = 0; k < d_; ++k) {
      xi[k] = x[k];
      si[k] = s[k];
    }
    const Accum c2 = Accum(c_) * Accum(c_);
    diagonal_ += imq_stein_kernel(xi, si, xi, si, d_, c2);
    off_ += detail::ksd_row(x_, s_, n_, d_, c2);
    ++n_;
    return true;
  }
  /// Eigen vectors (or contiguous maps) of d entries.
  template <class X, class S>
  bool push(const Eigen::MatrixBase<X>& x, const Eigen::MatrixBase<S>& s) noexcept {
    if (Index(x.size()) != Index(d_) || Index(s.size()) != Index(d_)) return false;
    return push(x.derived().data(), s.derived().data());
  }
  std::size_t count() const noexcept { return n_; }
  std::size_t capacity() const noexcept { return capacity_; }
  /// The statistics of the samples pushed so far (NaN if none).
  KSDEstimate<Accum> estimate() const noexcept {
    return detail::ksd_from_sums(diagonal_, off_, n_);
  }
  /// Forgets every sample.
  void reset() noexcept {
    n_ = 0;
    diagonal_ = 0;
    off_ = 0;
  }

 private:
  Scalar* x_;
  Scalar* s_;
  std::size_t capacity_;
  std::size_t d_;
  Scalar c_;
  std::size_t n_ = 0;
  Accum diagonal_ = 0;
  Accum off_ = 0;
};

}  // namespace sgmcmc
