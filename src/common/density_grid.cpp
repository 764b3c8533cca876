// SPDX-License-Identifier: MIT
// 2-D density grids for contour plots (highest-density-region levels, gnuplot grid files).
#include "common/density_grid.hpp"

#include <algorithm>
#include <cstdio>
#include <functional>

namespace sgmcmc::common {

DensityGrid::DensityGrid(const std::function<double(double, double)>& density, double x0, double x1,
                         int nx, double y0, double y1, int ny)
    : x0_(x0), x1_(x1), y0_(y0), y1_(y1), nx_(std::max(nx, 2)), ny_(std::max(ny, 2)) {
  v_.resize(static_cast<std::size_t>(nx_) * static_cast<std::size_t>(ny_));
  for (int i = 0; i < nx_; ++i) {
    for (int j = 0; j < ny_; ++j) {
      v_[static_cast<std::size_t>(i) * ny_ + static_cast<std::size_t>(j)] = density(x(i), y(j));
    }
  }
}

std::vector<double> DensityGrid::hpd_levels(const std::vector<double>& fractions) const {
  std::vector<double> sorted = v_;
  std::sort(sorted.begin(), sorted.end(), std::greater<double>());
  double total = 0.0;
  for (double v : sorted) total += v;
  std::vector<double> levels;
  for (double f : fractions) {
    double acc = 0.0;
    double level = sorted.empty() ? 0.0 : sorted.back();
    for (double v : sorted) {
      acc += v;
      if (acc >= f * total) {
        level = v;
        break;
      }
    }
    levels.push_back(level);
  }
  return levels;
}

bool DensityGrid::write_gnuplot(const std::string& path) const {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) return false;
  std::fprintf(f, "# x y density (unnormalised), %d x %d grid\n", nx_, ny_);
  for (int i = 0; i < nx_; ++i) {
    for (int j = 0; j < ny_; ++j) {
      std::fprintf(f, "%.6g %.6g %.8g\n", x(i), y(j),
                   v_[static_cast<std::size_t>(i) * ny_ + static_cast<std::size_t>(j)]);
    }
    std::fputc('\n', f);
  }
  return std::fclose(f) == 0;
}

}  // namespace sgmcmc::common
