// SPDX-License-Identifier: MIT
// Host-only plotting through gnuplot: probe the installation, write data and script files, run
// the script in the output directory. Callers degrade to "no plots" when gnuplot is missing.
#pragma once

#include <string>
#include <vector>

namespace sgmcmc::common {

/// What this host's gnuplot can do.
struct Gnuplot {
  bool found = false;   ///< `gnuplot` is on the PATH and runs
  bool cairo = false;   ///< the pngcairo terminal is present (else the libgd png terminal)
  std::string version;  ///< first line of `gnuplot --version`, e.g. "gnuplot 5.4 patchlevel 4"

  /// Probes the gnuplot on the PATH (runs it twice, silently).
  static Gnuplot detect();

  /// A `set terminal ...` line for a PNG of width × height pixels: pngcairo when present,
  /// else png.
  std::string png_terminal(int width, int height, int font_points = 10) const;

  /// Runs `gnuplot script` with dir as the working directory, so scripts use relative file
  /// names. gnuplot's messages go to dir/script.log (removed when empty). True when gnuplot
  /// exits with status 0.
  bool run(const std::string& dir, const std::string& script) const;
};

/// Writes equal-length columns as text: a "# header" line, then one row per line. Rows past the
/// shortest column are not written. Returns false on an I/O error.
bool write_columns(const std::string& path, const std::string& header,
                   const std::vector<std::vector<double>>& columns);

/// Writes text to path, replacing the file. Returns false on an I/O error.
bool write_text(const std::string& path, const std::string& text);

/// Quotes s for /bin/sh: 'it'\''s'.
std::string shell_quote(const std::string& s);

/// Quotes s as a gnuplot double-quoted string literal (backslash and quote escaped).
std::string gp_string(const std::string& s);

}  // namespace sgmcmc::common
