// SPDX-License-Identifier: MIT
// core/linalg.hpp (heap-free Cholesky, inverse and Jacobi eigen-decomposition) against Eigen's
// LLT and SelfAdjointEigenSolver on random symmetric matrices, in float and double, at the sizes
// the samplers use; failure cases (not positive definite, NaN) and AD scalars.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <limits>
#include <unsupported/Eigen/AutoDiff>

#include "sgmcmc/core/linalg.hpp"
#include "sgmcmc/core/noise.hpp"
#include "sgmcmc/host/rng.hpp"

using sgmcmc::Index;
using sgmcmc::Matrix;
using sgmcmc::Vector;

namespace {

/// A random symmetric matrix with eigenvalues in [lo, hi] (lo may be < 0): Q diag(λ) Qᵀ with Q
/// from the QR of a Gaussian matrix.
template <class T, int N>
Matrix<T, N, N> random_symmetric(sgmcmc::host::Rng& rng, double lo, double hi) {
  Matrix<double, N, N> g;
  for (Index j = 0; j < N; ++j) {
    Vector<double, N> col;
    sgmcmc::fill_normal(rng, col);
    g.col(j) = col;
  }
  const Eigen::HouseholderQR<Matrix<double, N, N>> qr(g);
  const Matrix<double, N, N> q = qr.householderQ();
  Vector<double, N> lam;
  for (Index i = 0; i < N; ++i) {
    lam[i] = lo + (hi - lo) * sgmcmc::uniform_open01<double>(rng);
  }
  const Matrix<double, N, N> a = q * lam.asDiagonal() * q.transpose();
  return (0.5 * (a + a.transpose())).template cast<T>();
}

template <class T, int N>
void check_size(double tol) {
  sgmcmc::host::Rng rng(101 + N);
  double worst_l = 0, worst_inv = 0, worst_eig = 0, worst_orth = 0, worst_rec = 0;
  for (int trial = 0; trial < 200; ++trial) {
    // Positive definite, condition number up to 1e3.
    const Matrix<T, N, N> a = random_symmetric<T, N>(rng, 1e-3, 1.0);
    Matrix<T, N, N> l, inv;
    REQUIRE(sgmcmc::detail::cholesky_lower(a, l));
    const Eigen::LLT<Matrix<T, N, N>> llt(a);
    const Matrix<T, N, N> ref_l = llt.matrixL();
    worst_l = std::max(worst_l, double((l - ref_l).cwiseAbs().maxCoeff()));
    CHECK(l.template triangularView<Eigen::StrictlyUpper>().toDenseMatrix().isZero(0));
    REQUIRE(sgmcmc::detail::cholesky_inverse(a, inv));
    worst_inv = std::max(
        worst_inv, double((a * inv - Matrix<T, N, N>::Identity()).cwiseAbs().maxCoeff()) * 1e-3);
    CHECK(inv == inv.transpose());

    // Indefinite: eigen-decomposition only.
    const Matrix<T, N, N> s = random_symmetric<T, N>(rng, -2.0, 3.0);
    Vector<T, N> lam;
    Matrix<T, N, N> v;
    sgmcmc::detail::symmetric_eigen(s, lam, v);
    const Eigen::SelfAdjointEigenSolver<Matrix<T, N, N>> es(s);
    Vector<T, N> sorted = lam;
    std::sort(sorted.data(), sorted.data() + N);
    worst_eig = std::max(worst_eig, double((sorted - es.eigenvalues()).cwiseAbs().maxCoeff()));
    worst_orth =
        std::max(worst_orth,
                 double((v.transpose() * v - Matrix<T, N, N>::Identity()).cwiseAbs().maxCoeff()));
    worst_rec = std::max(worst_rec,
                         double((v * lam.asDiagonal() * v.transpose() - s).cwiseAbs().maxCoeff()));
  }
  MESSAGE("N = " << N << ": |L - L_eigen| " << worst_l << ", |A A^-1 - I|/cond " << worst_inv
                 << ", |lambda - lambda_eigen| " << worst_eig << ", |VtV - I| " << worst_orth
                 << ", |V L Vt - A| " << worst_rec);
  CHECK(worst_l < tol);
  CHECK(worst_inv < tol);
  CHECK(worst_eig < tol);
  CHECK(worst_orth < tol);
  CHECK(worst_rec < tol);
}

}  // namespace

TEST_CASE_TEMPLATE("Cholesky, inverse and Jacobi eigen-decomposition agree with Eigen", T, float,
                   double) {
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
  const Matrix<double, 2, 2> i0 = g0.inverse();
  const Matrix<double, 2, 2> expected = -i0 * dg * i0;
  for (Index i = 0; i < 2; ++i) {
    for (Index j = 0; j < 2; ++j) {
      CHECK(std::fabs(inv(i, j).value() - i0(i, j)) < 1e-15);
      CHECK(std::fabs(inv(i, j).derivatives()[0] - expected(i, j)) < 1e-14);
    }
  }
}
