// SPDX-License-Identifier: MIT
// Gauss–Legendre nodes by Newton's method on P_n (Numerical Recipes' gauleg scheme).
#include "common/quadrature.hpp"

#include <algorithm>
#include <cmath>

namespace sgmcmc::common {

GaussLegendre::GaussLegendre(int n) {
  n = std::clamp(n, 1, 128);
  x_.assign(static_cast<std::size_t>(n), 0.0);
  w_.assign(static_cast<std::size_t>(n), 0.0);
  const double pi = 3.14159265358979323846;
  const int m = (n + 1) / 2;
  for (int i = 0; i < m; ++i) {
    double z = std::cos(pi * (i + 0.75) / (n + 0.5));  // Tricomi's first guess
    double dp = 1.0;
    for (int it = 0; it < 100; ++it) {
      double p0 = 1.0;
      double p1 = 0.0;
      for (int k = 1; k <= n; ++k) {  // P_k by the three-term recurrence
        const double p2 = p1;
        p1 = p0;
        p0 = ((2.0 * k - 1.0) * z * p1 - (k - 1.0) * p2) / k;
      }
      dp = n * (z * p0 - p1) / (z * z - 1.0);
      const double dz = p0 / dp;
      z -= dz;
      if (std::abs(dz) < 1e-15) break;
    }
    const auto lo = static_cast<std::size_t>(i);
    const auto hi = static_cast<std::size_t>(n - 1 - i);
    x_[lo] = -z;
    x_[hi] = z;
    w_[lo] = w_[hi] = 2.0 / ((1.0 - z * z) * dp * dp);
  }
}

}  // namespace sgmcmc::common
