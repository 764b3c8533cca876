// SPDX-License-Identifier: MIT
// Host-only numerical quadrature: Gauss–Legendre rules, composite integrals in 1-D and 2-D.
#pragma once

#include <vector>

namespace sgmcmc::common {

/// An n-point Gauss–Legendre rule on [-1, 1] (exact for polynomials of degree 2n - 1).
/// Class invariant: nodes().size() == weights().size() == n, nodes ascending.
class GaussLegendre {
 public:
  /// @param[in] n number of nodes, 1 <= n <= 128 (clamped).
  explicit GaussLegendre(int n);

  /// Nodes on [-1, 1], ascending, and their weights (summing to 2).
  const std::vector<double>& nodes() const { return x_; }
  const std::vector<double>& weights() const { return w_; }

  /// ∫_a^b f(x) dx with this rule on the single interval [a, b].
  template <class F>
  double integrate(F&& f, double a, double b) const {
    const double half = 0.5 * (b - a);
    const double mid = 0.5 * (a + b);
    double s = 0.0;
    for (std::size_t k = 0; k < x_.size(); ++k) s += w_[k] * f(mid + half * x_[k]);
    return half * s;
  }

  /// ∫_{a0}^{b0} ∫_{a1}^{b1} f(x, y) dy dx with the tensor-product rule on one rectangle.
  template <class F>
  double integrate2(F&& f, double a0, double b0, double a1, double b1) const {
    const double hx = 0.5 * (b0 - a0);
    const double mx = 0.5 * (a0 + b0);
    const double hy = 0.5 * (b1 - a1);
    const double my = 0.5 * (a1 + b1);
    double s = 0.0;
    for (std::size_t i = 0; i < x_.size(); ++i) {
      const double x = mx + hx * x_[i];
      for (std::size_t j = 0; j < x_.size(); ++j) s += w_[i] * w_[j] * f(x, my + hy * x_[j]);
    }
    return hx * hy * s;
  }

  /// Composite rule: ∫_a^b f over `panels` equal panels, this rule on each.
  template <class F>
  double integrate_composite(F&& f, double a, double b, int panels) const {
    const double w = (b - a) / panels;
    double s = 0.0;
    for (int p = 0; p < panels; ++p) s += integrate(f, a + p * w, a + (p + 1) * w);
    return s;
  }

 private:
  std::vector<double> x_;
  std::vector<double> w_;
};

}  // namespace sgmcmc::common
