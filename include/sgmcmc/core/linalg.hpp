// SPDX-License-Identifier: MIT
// Fixed-size dense linear algebra that provably never allocates: Cholesky factorisation and
// inverse, and the symmetric eigen-decomposition by cyclic Jacobi rotations.
//
// Why not Eigen's LLT::solve and SelfAdjointEigenSolver: for fixed sizes they never allocate at
// run time, but they instantiate code paths (blocked triangular solves, Householder
// tridiagonalisation with dynamic temporaries) that reference malloc and free behind run-time
// size tests. A firmware linked without a heap then fails to link (ports/cortex-m: every
// allocator is wrapped and undefined). These loops reference nothing but sqrt and fabs.
#pragma once

#include <cmath>
#include <limits>
#include <type_traits>

#include "sgmcmc/core/types.hpp"

namespace sgmcmc::detail {

/// Lower Cholesky factor L of a symmetric matrix (A = LLᵀ; only A's lower triangle is read; the
/// strict upper triangle of L is set to 0). Returns false, with L unspecified, when a pivot is
/// not > 0 or not finite (A not positive definite, or not finite). T may be an Eigen
/// AutoDiffScalar: the loops use only arithmetic, comparisons and sqrt.
template <class T, int N>
bool cholesky_lower(const Matrix<T, N, N>& a, Matrix<T, N, N>& l) noexcept {
  using std::sqrt;
  l.setZero();
  for (Index j = 0; j < N; ++j) {
    T d = a(j, j);
    for (Index k = 0; k < j; ++k) d -= l(j, k) * l(j, k);
    if (!(d > T(0)) || !(d < T(HUGE_VAL))) return false;  // NaN fails both tests
    const T ljj = sqrt(d);
    l(j, j) = ljj;
    for (Index i = j + 1; i < N; ++i) {
      T s = a(i, j);
      for (Index k = 0; k < j; ++k) s -= l(i, k) * l(j, k);
      l(i, j) = s / ljj;
    }
  }
  return true;
}

/// A⁻¹ of a symmetric positive-definite A through its Cholesky factor (L⁻¹ by forward
/// substitution, then A⁻¹ = L⁻ᵀL⁻¹, symmetric by construction). Returns false, with inv
/// unspecified, when the factorisation fails.
template <class T, int N>
bool cholesky_inverse(const Matrix<T, N, N>& a, Matrix<T, N, N>& inv) noexcept {
  Matrix<T, N, N> l;
  if (!cholesky_lower(a, l)) return false;
  Matrix<T, N, N> li;  // L⁻¹, lower triangular
  li.setZero();
  for (Index j = 0; j < N; ++j) {
    li(j, j) = T(1) / l(j, j);
    for (Index i = j + 1; i < N; ++i) {
      T s(0);
      for (Index k = j; k < i; ++k) s -= l(i, k) * li(k, j);
      li(i, j) = s / l(i, i);
    }
  }
  for (Index i = 0; i < N; ++i) {
    for (Index j = 0; j <= i; ++j) {
      T s(0);
      for (Index k = i; k < N; ++k) s += li(k, i) * li(k, j);  // (L⁻ᵀL⁻¹)_ij
      inv(i, j) = s;
      inv(j, i) = s;
    }
  }
  return true;
}

/// Upper bound on the sweeps of symmetric_eigen. Cyclic Jacobi converges quadratically; small
/// matrices need 5–10 sweeps to reach rounding level, so the bound only caps the time of a
/// pathological input (which then returns the best decomposition reached).
inline constexpr int kMaxJacobiSweeps = 50;

/// Symmetric eigen-decomposition A = V diag(λ) Vᵀ by cyclic Jacobi rotations (Golub & Van Loan,
/// Algorithm 8.5.3), plain floating-point scalars, bounded time: at most max_sweeps sweeps of
/// N(N−1)/2 rotations (docs/REALTIME.md gives one sweep's instructions on the Cortex-M4F; the
/// worst case is max_sweeps times that). Only A's lower triangle is read. Eigenvalues are
/// unordered; V is orthogonal to rounding. A must be finite (the caller checks).
template <class T, int N>
void symmetric_eigen(const Matrix<T, N, N>& a_in, Vector<T, N>& lambda, Matrix<T, N, N>& v,
                     int max_sweeps = kMaxJacobiSweeps) noexcept {
  static_assert(std::is_floating_point_v<T>, "symmetric_eigen works on plain scalars");
  using std::fabs;
  using std::sqrt;
  Matrix<T, N, N> a = a_in.template selfadjointView<Eigen::Lower>();
  v.setIdentity();
  for (int sweep = 0; sweep < max_sweeps; ++sweep) {
    T off(0), diag(0);
    for (Index i = 0; i < N; ++i) {
      diag += a(i, i) * a(i, i);
      for (Index j = 0; j < i; ++j) off += a(i, j) * a(i, j);
    }
    // Converged when the off-diagonal mass is below rounding relative to the diagonal.
    if (!(off > std::numeric_limits<T>::epsilon() * std::numeric_limits<T>::epsilon() * diag)) {
      break;
    }
    for (Index p = 0; p < N - 1; ++p) {
      for (Index q = p + 1; q < N; ++q) {
        const T apq = a(p, q);
        if (apq == T(0)) continue;
        // Rotation [c s; −s c] zeroing a(p, q): t = tan θ, the smaller root of
        // t² + 2τt − 1 = 0 with τ = (a_qq − a_pp)/(2a_pq).
        const T tau = (a(q, q) - a(p, p)) / (T(2) * apq);
        const T t = (tau >= T(0) ? T(1) : T(-1)) / (fabs(tau) + sqrt(T(1) + tau * tau));
        const T c = T(1) / sqrt(T(1) + t * t);
        const T s = t * c;
        for (Index k = 0; k < N; ++k) {  // A ← A J (columns p, q)
          const T akp = a(k, p), akq = a(k, q);
          a(k, p) = c * akp - s * akq;
          a(k, q) = s * akp + c * akq;
        }
        for (Index k = 0; k < N; ++k) {  // A ← Jᵀ A (rows p, q)
          const T apk = a(p, k), aqk = a(q, k);
          a(p, k) = c * apk - s * aqk;
          a(q, k) = s * apk + c * aqk;
        }
        a(p, q) = T(0);
        a(q, p) = T(0);
        for (Index k = 0; k < N; ++k) {  // V ← V J
          const T vkp = v(k, p), vkq = v(k, q);
          v(k, p) = c * vkp - s * vkq;
          v(k, q) = s * vkp + c * vkq;
        }
      }
    }
  }
  lambda = a.diagonal();
}

}  // namespace sgmcmc::detail
