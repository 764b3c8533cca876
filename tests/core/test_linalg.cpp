// SPDX-License-Identifier: MIT
// core/linalg.hpp (heap-free Cholesky, inverse and Jacobi eigen-decomposition) against the
// defining identities on random symmetric matrices of known spectrum, in float and double, at the
// sizes the samplers use; failure cases (not positive definite, NaN) and AD scalars.
#include <doctest/doctest.h>

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <limits>
#include <unsupported/Eigen/AutoDiff>
#include <vector>

#include "sgmcmc/core/linalg.hpp"
#include "sgmcmc/core/noise.hpp"
#include "sgmcmc/host/rng.hpp"

using sgmcmc::Index;
using sgmcmc::Matrix;
using sgmcmc::Vector;

namespace {

/// A dense n × n matrix in double, row-major, for the reference arithmetic. Plain loops, not
/// Eigen: fixed-size 32 × 32 Eigen products and decompositions took minutes to compile, and GCC 12
/// for AArch64 reports false -Warray-bounds on Eigen's NEON reductions of 1 × 1 dynamic matrices.
struct Dense {
  int n = 0;
  std::vector<double> x;
  explicit Dense(int size) : n(size), x(static_cast<std::size_t>(size) * size, 0.0) {}
  double& operator()(int i, int j) { return x[static_cast<std::size_t>(i) * n + j]; }
  double operator()(int i, int j) const { return x[static_cast<std::size_t>(i) * n + j]; }
};

/// max_ij |(B Cᵀ)_ij − E_ij| with B, C given by accessors b(i, k), c(j, k); E by e(i, j).
template <class B, class C, class E>
double max_abs_product_error(int n, B b, C c, E e) {
  double worst = 0.0;
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      double acc = 0.0;
      for (int k = 0; k < n; ++k) acc += b(i, k) * c(j, k);
      worst = std::max(worst, std::fabs(acc - e(i, j)));
    }
  }
  return worst;
}

/// A random symmetric matrix with known eigenvalues λ (sorted), uniform in [lo, hi] (lo may be
/// < 0): A = Q diag(λ) Qᵀ with Q from modified Gram–Schmidt on a Gaussian matrix.
struct KnownSpectrum {
  Dense a;
  std::vector<double> lambda;
};
KnownSpectrum random_symmetric(sgmcmc::host::Rng& rng, int n, double lo, double hi) {
  Dense q(n);  // columns are the eigenvectors
  for (int j = 0; j < n; ++j) {
    for (int i = 0; i < n; ++i) q(i, j) = sgmcmc::normal<double>(rng);
    for (int k = 0; k < j; ++k) {
      double d = 0.0;
      for (int i = 0; i < n; ++i) d += q(i, k) * q(i, j);
      for (int i = 0; i < n; ++i) q(i, j) -= d * q(i, k);
    }
    double norm = 0.0;
    for (int i = 0; i < n; ++i) norm += q(i, j) * q(i, j);
    norm = std::sqrt(norm);
    for (int i = 0; i < n; ++i) q(i, j) /= norm;
  }
  KnownSpectrum out{Dense(n), std::vector<double>(static_cast<std::size_t>(n))};
  for (double& l : out.lambda) l = lo + (hi - lo) * sgmcmc::uniform_open01<double>(rng);
  std::sort(out.lambda.begin(), out.lambda.end());
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j <= i; ++j) {
      double acc = 0.0;
      for (int k = 0; k < n; ++k) acc += q(i, k) * out.lambda[k] * q(j, k);
      out.a(i, j) = acc;
      out.a(j, i) = acc;
    }
  }
  return out;
}

template <class T, int N>
Matrix<T, N, N> to_fixed(const Dense& d) {
  Matrix<T, N, N> m;
  for (int i = 0; i < N; ++i) {
    for (int j = 0; j < N; ++j) m(i, j) = static_cast<T>(d(i, j));
  }
  return m;
}

/// Checks at size N against the defining identities, errors relative to the scale of A:
/// Cholesky: L lower with a positive diagonal and LLᵀ = A (which makes L unique, so this is the
/// same as agreeing with any other Cholesky); inverse: A A⁻¹ = I (divided by the condition number
/// bound 1e3); eigen-decomposition: VᵀV = I, V diag(λ) Vᵀ = A and the sorted λ equal the spectrum
/// A was built from. The matrices are rounded to T first, so the identities are checked against
/// the rounded A.
template <class T, int N>
void check_size(double tol) {
  sgmcmc::host::Rng rng(101 + N);
  auto eye = [](int i, int j) { return i == j ? 1.0 : 0.0; };
  double worst_l = 0, worst_inv = 0, worst_eig = 0, worst_orth = 0, worst_rec = 0;
  for (int trial = 0; trial < 200; ++trial) {
    // Positive definite, eigenvalues in [1e-3, 1]: condition number up to 1e3.
    const Matrix<T, N, N> a = to_fixed<T, N>(random_symmetric(rng, N, 1e-3, 1.0).a);
    auto at = [&](int i, int j) { return double(a(i, j)); };
    Matrix<T, N, N> l, inv;
    REQUIRE(sgmcmc::detail::cholesky_lower(a, l));
    auto lt = [&](int i, int j) { return double(l(i, j)); };
    for (int i = 0; i < N; ++i) {
      CHECK(l(i, i) > T(0));
      for (int j = i + 1; j < N; ++j) CHECK(l(i, j) == T(0));
    }
    worst_l = std::max(worst_l, max_abs_product_error(N, lt, lt, at));
    REQUIRE(sgmcmc::detail::cholesky_inverse(a, inv));
    CHECK(inv == inv.transpose());
    auto it = [&](int i, int j) { return double(inv(j, i)); };  // C(j, k) = inv(k, j)
    worst_inv = std::max(worst_inv, max_abs_product_error(N, at, it, eye) * 1e-3);

    // Indefinite, eigenvalues in [-2, 3]: eigen-decomposition only.
    const KnownSpectrum ind = random_symmetric(rng, N, -2.0, 3.0);
    const Matrix<T, N, N> s = to_fixed<T, N>(ind.a);
    Vector<T, N> lam;
    Matrix<T, N, N> v;
    sgmcmc::detail::symmetric_eigen(s, lam, v);
    std::vector<double> sorted(lam.data(), lam.data() + N);
    std::sort(sorted.begin(), sorted.end());
    for (int i = 0; i < N; ++i) {
      worst_eig = std::max(worst_eig, std::fabs(sorted[i] - ind.lambda[i]) / 3.0);
    }
    auto vtt = [&](int i, int k) { return double(v(k, i)); };  // Vᵀ
    worst_orth = std::max(worst_orth, max_abs_product_error(N, vtt, vtt, eye));
    auto vl = [&](int i, int k) { return double(v(i, k)) * double(lam[k]); };
    auto vv = [&](int j, int k) { return double(v(j, k)); };
    auto st = [&](int i, int j) { return double(s(i, j)); };
    worst_rec = std::max(worst_rec, max_abs_product_error(N, vl, vv, st) / 3.0);
  }
  MESSAGE("N = " << N << ": |LLt - A| " << worst_l << ", |A A^-1 - I|/cond " << worst_inv
                 << ", |lambda - spectrum|/3 " << worst_eig << ", |VtV - I| " << worst_orth
                 << ", |V L Vt - A|/3 " << worst_rec);
  CHECK(worst_l < tol);
  CHECK(worst_inv < tol);
  CHECK(worst_eig < tol);
  CHECK(worst_orth < tol);
  CHECK(worst_rec < tol);
}

}  // namespace

TEST_CASE_TEMPLATE("Cholesky, inverse and Jacobi eigen-decomposition are exact to rounding", T,
                   float, double) {
  const double eps = std::numeric_limits<T>::epsilon();
  check_size<T, 1>(64 * eps);
  check_size<T, 2>(64 * eps);
  check_size<T, 3>(64 * eps);
  check_size<T, 8>(256 * eps);
  check_size<T, 32>(1024 * eps);
}

TEST_CASE("Cholesky refuses matrices that are not positive definite or not finite") {
  Matrix<double, 2, 2> a, l, inv;
  a << 1.0, 2.0, 2.0, 1.0;  // eigenvalues 3, −1
  CHECK_FALSE(sgmcmc::detail::cholesky_lower(a, l));
  CHECK_FALSE(sgmcmc::detail::cholesky_inverse(a, inv));
  a << 1.0, 1.0, 1.0, 1.0;  // singular: the second pivot is 0
  CHECK_FALSE(sgmcmc::detail::cholesky_lower(a, l));
  a << std::nan(""), 0.0, 0.0, 1.0;
  CHECK_FALSE(sgmcmc::detail::cholesky_lower(a, l));
  a << HUGE_VAL, 0.0, 0.0, 1.0;
  CHECK_FALSE(sgmcmc::detail::cholesky_lower(a, l));
  a << 1.0, std::nan(""), std::nan(""), 1.0;
  CHECK_FALSE(sgmcmc::detail::cholesky_lower(a, l));
  a << 4.0, 2.0, 2.0, 3.0;
  CHECK(sgmcmc::detail::cholesky_lower(a, l));
  CHECK((l * l.transpose() - a).cwiseAbs().maxCoeff() < 1e-15);
}

TEST_CASE("Jacobi eigen-decomposition: diagonal input, repeated eigenvalues") {
  Matrix<double, 3, 3> a = Vector<double, 3>(3.0, -1.0, 2.0).asDiagonal();
  Vector<double, 3> lam;
  Matrix<double, 3, 3> v;
  sgmcmc::detail::symmetric_eigen(a, lam, v);
  CHECK(lam == Vector<double, 3>(3.0, -1.0, 2.0));
  CHECK(v == Matrix<double, 3, 3>::Identity());
  a.setConstant(1.0);  // eigenvalues 3, 0, 0
  sgmcmc::detail::symmetric_eigen(a, lam, v);
  CHECK((v * lam.asDiagonal() * v.transpose() - a).cwiseAbs().maxCoeff() < 1e-14);
  CHECK((v.transpose() * v - Matrix<double, 3, 3>::Identity()).cwiseAbs().maxCoeff() < 1e-15);
  std::sort(lam.data(), lam.data() + 3);
  CHECK(std::fabs(lam[0]) < 1e-15);
  CHECK(std::fabs(lam[1]) < 1e-15);
  CHECK(std::fabs(lam[2] - 3.0) < 1e-15);
}

TEST_CASE("Cholesky inverse differentiates: AD through G → G⁻¹ equals −G⁻¹ (∂G) G⁻¹") {
  using AD = Eigen::AutoDiffScalar<Vector<double, 1>>;
  Matrix<double, 2, 2> g0, dg;
  g0 << 2.0, 0.5, 0.5, 1.0;
  dg << 0.3, -0.2, -0.2, 0.7;
  Matrix<AD, 2, 2> g;
  for (Index i = 0; i < 2; ++i) {
    for (Index j = 0; j < 2; ++j) g(i, j) = AD(g0(i, j), Vector<double, 1>(dg(i, j)));
  }
  Matrix<AD, 2, 2> inv;
  REQUIRE(sgmcmc::detail::cholesky_inverse(g, inv));
  Matrix<double, 2, 2> i0;  // the closed-form 2 × 2 inverse, det = 2 − 0.25
  i0 << 1.0 / 1.75, -0.5 / 1.75, -0.5 / 1.75, 2.0 / 1.75;
  const Matrix<double, 2, 2> expected = -i0 * dg * i0;
  for (Index i = 0; i < 2; ++i) {
    for (Index j = 0; j < 2; ++j) {
      CHECK(std::fabs(inv(i, j).value() - i0(i, j)) < 1e-15);
      CHECK(std::fabs(inv(i, j).derivatives()[0] - expected(i, j)) < 1e-14);
    }
  }
}
