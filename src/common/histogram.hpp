// SPDX-License-Identifier: MIT
// Host-only fixed-grid histograms (1-D, 2-D) with an "outside" cell, true cell masses by
// quadrature, and the KL protocol of MATH.md §5.3 (KL(true ‖ sample), empty cells floored).
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

namespace sgmcmc::common {

/// Equal-width bins on [lo, hi) along one axis.
struct Axis {
  double lo = 0.0;  ///< left edge of bin 0
  double hi = 1.0;  ///< right edge of the last bin
  int bins = 1;     ///< number of bins, >= 1

  /// Width of every bin.
  double width() const { return (hi - lo) / bins; }
  /// Left edge of bin i (i == bins: the right edge of the axis).
  double left(int i) const { return lo + i * width(); }
  /// Centre of bin i.
  double center(int i) const { return lo + (i + 0.5) * width(); }
  /// The bin holding x, or -1 when x is outside [lo, hi) or not finite.
  int index(double x) const;
};

/// Counts over a 1-D or 2-D grid of equal cells plus one last cell for everything outside the
/// grid (and non-finite values). Cell (i, j) of a 2-D grid is i * y.bins + j.
/// Class invariant: counts().size() == grid_cells() + 1.
class Histogram {
 public:
  explicit Histogram(const Axis& x);        ///< 1-D
  Histogram(const Axis& x, const Axis& y);  ///< 2-D
  /// 1 or 2.
  int dims() const { return dims_; }
  /// The grid's axes (y_axis() is a dummy single bin for 1-D).
  const Axis& x_axis() const { return x_; }
  const Axis& y_axis() const { return y_; }
  /// Number of grid cells; the outside cell is the one index past them.
  std::size_t grid_cells() const { return counts_.size() - 1; }
  std::size_t outside_cell() const { return counts_.size() - 1; }
  /// Width (1-D) or area (2-D) of one grid cell.
  double cell_area() const { return dims_ == 1 ? x_.width() : x_.width() * y_.width(); }

  void add(double x);            ///< 1-D only
  void add(double x, double y);  ///< 2-D only
  /// Adds n points stored as n consecutive (x) or (x, y) tuples.
  void add_all(const double* values, std::size_t n);
  /// Zeroes every count.
  void clear();

  /// Count per cell (grid cells, then the outside cell), and their sum.
  const std::vector<double>& counts() const { return counts_; }
  double total() const { return total_; }
  /// count / (total · cell area) for a grid cell: a density estimate comparable to the pdf.
  double density(std::size_t cell) const;

 private:
  int dims_;
  Axis x_;
  Axis y_;
  std::vector<double> counts_;
  double total_ = 0.0;
};

/// Probability of every cell of h (the last entry: outside the grid) under the density
/// density(x) / z, by an n-point Gauss–Legendre rule on each bin. The outside mass is
/// 1 - Σ(grid), clamped at 0, so z must be the density's exact normaliser. h must be 1-D.
std::vector<double> cell_masses_1d(const Histogram& h, const std::function<double(double)>& density,
                                   double z, int n = 8);

/// 2-D counterpart: n×n tensor Gauss–Legendre on each cell. h must be 2-D.
std::vector<double> cell_masses_2d(const Histogram& h,
                                   const std::function<double(double, double)>& density, double z,
                                   int n = 8);

/// KL(p ‖ q̂) = Σ_i p_i log(p_i / q̂_i) over every cell with p_i > 0, where q̂_i = c_i / total is
/// the sample's cell frequency and an empty cell counts as `empty_count` draws (MATH.md §5.3:
/// a floor on empty bins; default half a draw). Returns +inf for an empty histogram.
double kl_true_vs_sample(const std::vector<double>& p, const Histogram& h,
                         double empty_count = 0.5);

}  // namespace sgmcmc::common
