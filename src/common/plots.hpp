// SPDX-License-Identifier: MIT
// Host-only small-multiple figures through gnuplot: 1-D histograms against a true density, and
// 2-D paths or scatters over the contours of a true density. Each writes NAME.gp, data, NAME.png.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "common/density_grid.hpp"
#include "common/gnuplot.hpp"
#include "common/histogram.hpp"

namespace sgmcmc::common {

/// One small multiple. Titles and notes are gnuplot "enhanced" text: write _ ^ @ & as \\_ etc.
struct Panel {
  std::string title;                            ///< panel title
  std::string color = "#1f77b4";                ///< "#rrggbb"
  std::string note;                             ///< a line of text inside the panel (optional)
  const Histogram* hist = nullptr;              ///< 1-D figures: the sample's histogram
  const std::vector<double>* points = nullptr;  ///< 2-D figures: consecutive (x, y) pairs
  std::size_t max_points = 0;  ///< 2-D: plot at most this many, evenly spaced (0: all)
  bool free_y = false;         ///< 1-D: autoscale y (e.g. a chain collapsed to a spike)
};

/// Layout and labelling shared by every panel of a figure.
struct Figure {
  std::string name;   ///< file stem: NAME.png, NAME.gp, NAME*.dat in the directory
  std::string title;  ///< figure title (enhanced text)
  int rows = 2;       ///< grid of panels
  int cols = 4;
  int width = 1600;  ///< pixels
  int height = 800;
  std::string xlabel = "θ";
  std::string ylabel = "density";
  double x0 = -3.0, x1 = 3.0;     ///< x range of every panel
  double y0 = 0.0, y1 = 0.0;      ///< y range; y1 <= y0: 1-D uses 1.3 × max pdf, 2-D autoscales
  std::string key = "top right";  ///< gnuplot key position in every panel
  std::string text;               ///< drawn in the first free cell if rows × cols > panels;
                                  ///< lines separated by '\n'
};

/// Histograms of each panel's sample (filled outline, scaled to a density) with the normalised
/// pdf overlaid in black, one panel per sample. Writes NAME.dat (each bin's left and right edge,
/// one density column per panel), NAME_pdf.dat, NAME.gp, and runs gnuplot into NAME.png.
/// False (with *error set when error is not null) when a file cannot be written or gnuplot fails.
bool plot_histograms(const Gnuplot& gp, const std::string& dir, const Figure& fig,
                     const std::vector<Panel>& panels, const std::function<double(double)>& pdf,
                     std::string* error = nullptr);

/// How plot_over_contours draws each panel's points.
enum class PointStyle {
  Path,     ///< joined in order, start marked with a circle and end with a cross
  Scatter,  ///< small translucent dots
};

/// Contours of grid at the given density levels (grey; legend `contour_title`), with each panel's
/// points on top. Writes NAME_density.dat, NAME_contours.dat (by gnuplot), NAME_<k>.dat,
/// NAME.gp and NAME.png.
bool plot_over_contours(const Gnuplot& gp, const std::string& dir, const Figure& fig,
                        const std::vector<Panel>& panels, const DensityGrid& grid,
                        const std::vector<double>& levels, const std::string& contour_title,
                        PointStyle style, std::string* error = nullptr);

}  // namespace sgmcmc::common
