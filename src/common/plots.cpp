// SPDX-License-Identifier: MIT
// Small-multiple gnuplot figures: histogram panels over a pdf, path/scatter panels over contours.
#include "common/plots.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "common/table.hpp"

namespace sgmcmc::common {
namespace {

/// gnuplot string literal with '\n' turned into the \n escape (multi-line labels).
std::string gp_text(const std::string& s) {
  std::string q = "\"";
  for (char c : s) {
    if (c == '\n') {
      q += "\\n";
      continue;
    }
    if (c == '\\' || c == '"') q += '\\';
    q += c;
  }
  return q + "\"";
}

bool fail(std::string* error, const std::string& what) {
  if (error) *error = what;
  return false;
}

/// Terminal, output, multiplot and the settings shared by every panel.
std::string preamble(const Gnuplot& gp, const Figure& fig) {
  std::string s;
  s += gp.png_terminal(fig.width, fig.height) + "\n";
  s += "set encoding utf8\n";
  s += "set output " + gp_string(fig.name + ".png") + "\n";
  return s;
}

std::string begin_multiplot(const Figure& fig) {
  std::string s;
  s += format("set multiplot layout %d,%d title %s font \",14\"\n", fig.rows, fig.cols,
              gp_text(fig.title).c_str());
  s += "set grid lc rgb \"#e0e0e0\"\n";
  s += "set tics font \",9\"\n";
  s += "set key " + fig.key + " font \",9\" samplen 2 spacing 1.0 opaque box lc rgb \"#cccccc\"\n";
  s += "set xlabel " + gp_text(fig.xlabel) + "\n";
  s += "set ylabel " + gp_text(fig.ylabel) + "\n";
  s += format("set xrange [%.9g:%.9g]\n", fig.x0, fig.x1);
  return s;
}

/// The text cell (if any room is left) and the end of the multiplot.
std::string end_multiplot(const Figure& fig, std::size_t panels) {
  std::string s;
  if (!fig.text.empty() && static_cast<std::size_t>(fig.rows * fig.cols) > panels) {
    s += "unset border\nunset tics\nunset xlabel\nunset ylabel\nunset grid\nunset key\n";
    s += "unset title\nunset label\n";
    s += "set label 99 " + gp_text(fig.text) +
         " at graph 0.02, graph 0.95 left front font \",10\"\n";
    s += "plot [0:1][0:1] NaN notitle\n";
  }
  s += "unset multiplot\n";
  return s;
}

std::string panel_head(const Panel& p) {
  std::string s = "set title " + gp_text(p.title) + " font \",11\"\n";
  s += "unset label 1\n";
  if (!p.note.empty()) {
    s += "set label 1 " + gp_text(p.note) +
         " at graph 0.03, graph 0.93 left front font \",9\" tc rgb \"#444444\"\n";
  }
  return s;
}

}  // namespace

bool plot_histograms(const Gnuplot& gp, const std::string& dir, const Figure& fig,
                     const std::vector<Panel>& panels, const std::function<double(double)>& pdf,
                     std::string* error) {
  if (panels.empty() || !panels.front().hist) return fail(error, "no histograms to plot");
  const Histogram& h0 = *panels.front().hist;
  const Axis ax = h0.x_axis();
  // The outline of each histogram as a path through both edges of every bin, so that fill and
  // outline are each one polygon (per-bin boxes leave anti-aliasing seams in the fill).
  std::vector<std::vector<double>> cols(1 + panels.size());
  for (int i = 0; i < ax.bins; ++i) {
    cols[0].push_back(ax.left(i));
    cols[0].push_back(ax.left(i + 1));
  }
  for (std::size_t k = 0; k < panels.size(); ++k) {
    const Histogram* h = panels[k].hist;
    if (!h || h->dims() != 1 || h->x_axis().bins != ax.bins || h->x_axis().lo != ax.lo ||
        h->x_axis().hi != ax.hi) {
      return fail(error, "histogram panels must share one 1-D axis");
    }
    for (int i = 0; i < ax.bins; ++i) {
      cols[k + 1].push_back(h->density(static_cast<std::size_t>(i)));
      cols[k + 1].push_back(cols[k + 1].back());
    }
  }
  std::string header = "x (each bin's left then right edge)";
  for (const auto& p : panels) header += " | " + p.title;
  if (!write_columns(dir + "/" + fig.name + ".dat", header, cols)) {
    return fail(error, "cannot write " + fig.name + ".dat");
  }
  std::vector<double> xs;
  std::vector<double> ys;
  double ymax = 0.0;
  const int n = 601;
  for (int i = 0; i < n; ++i) {
    const double x = fig.x0 + (fig.x1 - fig.x0) * i / (n - 1);
    xs.push_back(x);
    ys.push_back(pdf(x));
    ymax = std::max(ymax, ys.back());
  }
  if (!write_columns(dir + "/" + fig.name + "_pdf.dat", "x | exact density", {xs, ys})) {
    return fail(error, "cannot write " + fig.name + "_pdf.dat");
  }
  const double y1 = fig.y1 > fig.y0 ? fig.y1 : 1.3 * ymax;
  const std::string data = gp_string(fig.name + ".dat");
  std::string s = preamble(gp, fig) + begin_multiplot(fig);
  s += "set style fill solid 0.35 noborder\n";
  for (std::size_t k = 0; k < panels.size(); ++k) {
    const Panel& p = panels[k];
    s += panel_head(p);
    s += p.free_y ? "set yrange [0:*]\n" : format("set yrange [%.9g:%.9g]\n", fig.y0, y1);
    const std::string col = format("(column(%zu))", k + 2);
    s += "plot " + data + " using 1:" + col + " with filledcurves y1=0 lc rgb " +
         gp_string(p.color) + " notitle, \\\n";
    s += "     " + data + " using 1:" + col + " with lines lw 1.5 lc rgb " + gp_string(p.color) +
         " title \"sample\", \\\n";
    s += "     " + gp_string(fig.name + "_pdf.dat") +
         " using 1:2 with lines lw 2 lc rgb \"black\" title \"exact\"\n";
  }
  s += end_multiplot(fig, panels.size());
  const std::string script = fig.name + ".gp";
  if (!write_text(dir + "/" + script, s)) return fail(error, "cannot write " + script);
  if (!gp.run(dir, script)) {
    return fail(error, "gnuplot failed on " + script + " (see " + script + ".log)");
  }
  return true;
}

bool plot_over_contours(const Gnuplot& gp, const std::string& dir, const Figure& fig,
                        const std::vector<Panel>& panels, const DensityGrid& grid,
                        const std::vector<double>& levels, const std::string& contour_title,
                        PointStyle style, std::string* error) {
  if (!grid.write_gnuplot(dir + "/" + fig.name + "_density.dat")) {
    return fail(error, "cannot write " + fig.name + "_density.dat");
  }
  std::vector<std::size_t> written(panels.size(), 0);
  for (std::size_t k = 0; k < panels.size(); ++k) {
    const std::vector<double>* pts = panels[k].points;
    if (!pts) return fail(error, "a 2-D panel has no points");
    const std::size_t n = pts->size() / 2;
    const std::size_t stride =
        panels[k].max_points > 0 && n > panels[k].max_points ? n / panels[k].max_points : 1;
    std::vector<double> xs;
    std::vector<double> ys;
    for (std::size_t i = 0; i < n; i += stride) {
      xs.push_back((*pts)[2 * i]);
      ys.push_back((*pts)[2 * i + 1]);
    }
    written[k] = xs.size();
    if (xs.empty()) return fail(error, "a 2-D panel has no points");
    const std::string file = format("%s_%zu.dat", fig.name.c_str(), k);
    if (!write_columns(dir + "/" + file, "x y | " + panels[k].title, {xs, ys})) {
      return fail(error, "cannot write " + file);
    }
  }
  std::string s = preamble(gp, fig);
  // Contour lines of the density, traced once by gnuplot into a table.
  s += "set contour base\nunset surface\nset view map\nset cntrparam levels discrete ";
  for (std::size_t i = 0; i < levels.size(); ++i) s += format(i ? ", %.9g" : "%.9g", levels[i]);
  s += "\nset table " + gp_string(fig.name + "_contours.dat") + "\n";
  s += "splot " + gp_string(fig.name + "_density.dat") + " using 1:2:3 with lines notitle\n";
  s += "unset table\nunset contour\n";
  s += begin_multiplot(fig);
  s += fig.y1 > fig.y0 ? format("set yrange [%.9g:%.9g]\n", fig.y0, fig.y1) : "set yrange [*:*]\n";
  const std::string contours = gp_string(fig.name + "_contours.dat");
  for (std::size_t k = 0; k < panels.size(); ++k) {
    const Panel& p = panels[k];
    const std::string data = gp_string(format("%s_%zu.dat", fig.name.c_str(), k));
    s += panel_head(p);
    const std::string contour_plot = contours + " using 1:2 with lines lw 1 lc rgb " +
                                     (style == PointStyle::Path ? "\"#8c8c8c\"" : "\"#303030\"") +
                                     " title " + gp_text(contour_title);
    if (style == PointStyle::Path) {
      s += "plot " + contour_plot + ", \\\n";
      s += "     " + data + " using 1:2 with lines lw 1 lc rgb " + gp_string(p.color) +
           " notitle, \\\n";
      s += "     " + data + " using 1:2 with points pt 7 ps 0.35 lc rgb " + gp_string(p.color) +
           " title \"path\", \\\n";
      s += "     " + data +
           " every ::0::0 using 1:2 with points pt 6 ps 1.8 lw 2 lc rgb \"black\" title "
           "\"start\", \\\n";
      s += "     " + data + format(" every ::%zu::%zu", written[k] - 1, written[k] - 1) +
           " using 1:2 with points pt 2 ps 1.8 lw 2 lc rgb \"black\" title \"end\"\n";
    } else {
      std::string translucent = p.color;
      if (translucent.size() == 7) translucent = "#90" + translucent.substr(1);
      // Points first, contours on top: the contours stay visible through a dense cloud.
      s += "plot " + data + " using 1:2 with points pt 7 ps 0.3 lc rgb " + gp_string(translucent) +
           " title \"samples\", \\\n";
      s += "     " + contour_plot + "\n";
    }
  }
  s += end_multiplot(fig, panels.size());
  const std::string script = fig.name + ".gp";
  if (!write_text(dir + "/" + script, s)) return fail(error, "cannot write " + script);
  if (!gp.run(dir, script)) {
    return fail(error, "gnuplot failed on " + script + " (see " + script + ".log)");
  }
  return true;
}

}  // namespace sgmcmc::common
