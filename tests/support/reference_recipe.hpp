// Test support: an independent, deliberately naive implementation of one explicit-Euler recipe
// step (MATH.md §1.2) from dense matrices written out by hand; the oracle for every sampler.
#pragma once

#include <Eigen/Dense>
#include <functional>
#include <vector>

namespace sgmcmc_test {

using DVec = Eigen::VectorXd;
using DMat = Eigen::MatrixXd;

/// A sampler written as MATH.md §2.1's table: ∇H(z), D(z), Q(z), B̂(z) as dense matrices.
struct DenseSpec {
  std::function<DVec(const DVec&)> grad_h;  ///< ∇H̃ at z (with the model's gradient inside)
  std::function<DMat(const DVec&)> d;       ///< D(z), N x N
  std::function<DMat(const DVec&)> q;       ///< Q(z), N x N
  std::function<DMat(const DVec&)> bhat;    ///< B̂(z) = P V̂ Pᵀ, N x N (zero if none)
  std::vector<int> diffusive;               ///< coordinates that receive noise, in noise order
};

/// Γ_i = Σ_j ∂(D_ij + Q_ij)/∂z_j by central differences with step eps.
inline DVec gamma_fd(const DenseSpec& s, const DVec& z, double eps = 1e-5) {
  const Eigen::Index n = z.size();
  DVec g = DVec::Zero(n);
  for (Eigen::Index j = 0; j < n; ++j) {
    DVec zp = z, zm = z;
    zp[j] += eps;
    zm[j] -= eps;
    const DMat dp = s.d(zp) + s.q(zp);
    const DMat dm = s.d(zm) + s.q(zm);
    g += (dp.col(j) - dm.col(j)) / (2 * eps);
  }
  return g;
}

/// z' = z + h(−(D+Q)∇H + Γ) + L ζ, L Lᵀ = h(2D − hB̂) on the diffusive coordinates.
inline DVec reference_step(const DenseSpec& s, const DVec& z, double h, const DVec& zeta) {
  const DMat m = s.d(z) + s.q(z);
  DVec out = z + h * (-m * s.grad_h(z) + gamma_fd(s, z));
  const auto k = static_cast<Eigen::Index>(s.diffusive.size());
  if (k == 0) return out;
  const DMat cov_full = h * (2 * s.d(z) - h * s.bhat(z));
  DMat cov(k, k);
  for (Eigen::Index a = 0; a < k; ++a)
    for (Eigen::Index b = 0; b < k; ++b) cov(a, b) = cov_full(s.diffusive[a], s.diffusive[b]);
  // Cholesky with zero pivots allowed for PSD diagonal cases (sqrt of the diagonal otherwise).
  DMat l = DMat::Zero(k, k);
  for (Eigen::Index j = 0; j < k; ++j) {
    double diag = cov(j, j);
    for (Eigen::Index p = 0; p < j; ++p) diag -= l(j, p) * l(j, p);
    l(j, j) = diag > 0 ? std::sqrt(diag) : 0.0;
    for (Eigen::Index i = j + 1; i < k; ++i) {
      double v = cov(i, j);
      for (Eigen::Index p = 0; p < j; ++p) v -= l(i, p) * l(j, p);
      l(i, j) = l(j, j) > 0 ? v / l(j, j) : 0.0;
    }
  }
  const DVec noise = l * zeta.head(k);
  for (Eigen::Index a = 0; a < k; ++a) out[s.diffusive[a]] += noise[a];
  return out;
}

}  // namespace sgmcmc_test
