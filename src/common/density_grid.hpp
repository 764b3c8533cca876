// SPDX-License-Identifier: MIT
// Host-only 2-D density on a regular grid: gnuplot grid files for contour plots, and the
// density levels whose highest-density regions hold given probability masses.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace sgmcmc::common {

/// An unnormalised 2-D density sampled at nx × ny grid points on [x0, x1] × [y0, y1].
/// Class invariant: values().size() == nx * ny, point (i, j) at i * ny + j.
class DensityGrid {
 public:
  /// Evaluates density at every grid point (nx, ny >= 2; smaller values are raised to 2).
  DensityGrid(const std::function<double(double, double)>& density, double x0, double x1, int nx,
              double y0, double y1, int ny);

  /// Coordinates of grid point (i, j), and the density values.
  double x(int i) const { return x0_ + i * (x1_ - x0_) / (nx_ - 1); }
  double y(int j) const { return y0_ + j * (y1_ - y0_) / (ny_ - 1); }
  const std::vector<double>& values() const { return v_; }

  /// Density levels t_k such that {density ≥ t_k} holds fraction fractions[k] of the grid's
  /// mass (highest-density regions, e.g. {0.5, 0.9, 0.99}); same order as fractions.
  std::vector<double> hpd_levels(const std::vector<double>& fractions) const;

  /// Writes "x y density" lines, one blank line after each x scan: gnuplot's grid format
  /// (splot ... with contour, or plot ... with image). Returns false on an I/O error.
  bool write_gnuplot(const std::string& path) const;

 private:
  double x0_, x1_, y0_, y1_;
  int nx_, ny_;
  std::vector<double> v_;
};

}  // namespace sgmcmc::common
