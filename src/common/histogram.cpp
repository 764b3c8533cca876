// SPDX-License-Identifier: MIT
// Fixed-grid histograms, quadrature cell masses and the KL protocol (MATH.md §5.3).
#include "common/histogram.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "common/quadrature.hpp"

namespace sgmcmc::common {

int Axis::index(double x) const {
  if (!(x >= lo && x < hi)) return -1;  // also rejects NaN
  const int i = static_cast<int>((x - lo) / width());
  return std::min(i, bins - 1);  // rounding at the right edge
}

Histogram::Histogram(const Axis& x) : dims_(1), x_(x), y_{0.0, 1.0, 1} {
  counts_.assign(static_cast<std::size_t>(x_.bins) + 1, 0.0);
}

Histogram::Histogram(const Axis& x, const Axis& y) : dims_(2), x_(x), y_(y) {
  counts_.assign(static_cast<std::size_t>(x_.bins) * static_cast<std::size_t>(y_.bins) + 1, 0.0);
}

void Histogram::add(double x) {
  const int i = x_.index(x);
  counts_[i < 0 ? outside_cell() : static_cast<std::size_t>(i)] += 1.0;
  total_ += 1.0;
}

void Histogram::add(double x, double y) {
  const int i = x_.index(x);
  const int j = y_.index(y);
  const std::size_t cell =
      (i < 0 || j < 0) ? outside_cell()
                       : static_cast<std::size_t>(i) * y_.bins + static_cast<std::size_t>(j);
  counts_[cell] += 1.0;
  total_ += 1.0;
}

void Histogram::add_all(const double* values, std::size_t n) {
  for (std::size_t k = 0; k < n; ++k) {
    if (dims_ == 1) {
      add(values[k]);
    } else {
      add(values[2 * k], values[2 * k + 1]);
    }
  }
}

void Histogram::clear() {
  std::fill(counts_.begin(), counts_.end(), 0.0);
  total_ = 0.0;
}

double Histogram::density(std::size_t cell) const {
  if (total_ <= 0.0 || cell >= grid_cells()) return 0.0;
  return counts_[cell] / (total_ * cell_area());
}

namespace {
/// Fills the last (outside) entry of masses with 1 - Σ(grid), clamped at 0.
void close_masses(std::vector<double>& masses) {
  double in_grid = 0.0;
  for (std::size_t k = 0; k + 1 < masses.size(); ++k) in_grid += masses[k];
  masses.back() = std::max(0.0, 1.0 - in_grid);
}
}  // namespace

std::vector<double> cell_masses_1d(const Histogram& h, const std::function<double(double)>& density,
                                   double z, int n) {
  const GaussLegendre rule(n);
  const Axis& ax = h.x_axis();
  std::vector<double> masses(h.counts().size(), 0.0);
  for (int i = 0; i < ax.bins; ++i) {
    masses[static_cast<std::size_t>(i)] = rule.integrate(density, ax.left(i), ax.left(i + 1)) / z;
  }
  close_masses(masses);
  return masses;
}

std::vector<double> cell_masses_2d(const Histogram& h,
                                   const std::function<double(double, double)>& density, double z,
                                   int n) {
  const GaussLegendre rule(n);
  const Axis& ax = h.x_axis();
  const Axis& ay = h.y_axis();
  std::vector<double> masses(h.counts().size(), 0.0);
  for (int i = 0; i < ax.bins; ++i) {
    for (int j = 0; j < ay.bins; ++j) {
      const std::size_t cell = static_cast<std::size_t>(i) * ay.bins + static_cast<std::size_t>(j);
      masses[cell] =
          rule.integrate2(density, ax.left(i), ax.left(i + 1), ay.left(j), ay.left(j + 1)) / z;
    }
  }
  close_masses(masses);
  return masses;
}

double kl_true_vs_sample(const std::vector<double>& p, const Histogram& h, double empty_count) {
  const double total = h.total();
  if (total <= 0.0 || p.size() != h.counts().size()) {
    return std::numeric_limits<double>::infinity();
  }
  double kl = 0.0;
  for (std::size_t k = 0; k < p.size(); ++k) {
    if (p[k] <= 0.0) continue;
    const double q = std::max(h.counts()[k], empty_count) / total;
    kl += p[k] * std::log(p[k] / q);
  }
  return kl;
}

}  // namespace sgmcmc::common
