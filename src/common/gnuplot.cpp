// SPDX-License-Identifier: MIT
// gnuplot probing and running through /bin/sh (popen/system); data and script file writers.
#include "common/gnuplot.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace sgmcmc::common {

Gnuplot Gnuplot::detect() {
  Gnuplot g;
  std::FILE* p = popen("gnuplot --version 2>/dev/null", "r");
  if (!p) return g;
  char line[256] = {};
  const bool got = std::fgets(line, sizeof line, p) != nullptr;
  const int rc = pclose(p);
  if (!got || rc != 0) return g;
  g.found = true;
  g.version = line;
  while (!g.version.empty() && (g.version.back() == '\n' || g.version.back() == '\r')) {
    g.version.pop_back();
  }
  g.cairo = std::system("gnuplot -e 'set terminal pngcairo' >/dev/null 2>&1") == 0;
  return g;
}

std::string Gnuplot::png_terminal(int width, int height, int font_points) const {
  const std::string size = std::to_string(width) + "," + std::to_string(height);
  if (cairo) {
    return "set terminal pngcairo size " + size + " enhanced font \"DejaVu Sans," +
           std::to_string(font_points) + "\"";
  }
  return "set terminal png size " + size + " enhanced";
}

bool Gnuplot::run(const std::string& dir, const std::string& script) const {
  if (!found) return false;
  const std::string cmd = "cd " + shell_quote(dir) + " && gnuplot " + shell_quote(script) + " >" +
                          shell_quote(script + ".log") + " 2>&1";
  const bool ok = std::system(cmd.c_str()) == 0;
  std::error_code ec;  // an empty log says nothing: remove it
  const std::filesystem::path log = std::filesystem::path(dir) / (script + ".log");
  if (std::filesystem::exists(log, ec) && std::filesystem::file_size(log, ec) == 0 && !ec) {
    std::filesystem::remove(log, ec);
  }
  return ok;
}

bool write_columns(const std::string& path, const std::string& header,
                   const std::vector<std::vector<double>>& columns) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) return false;
  std::fprintf(f, "# %s\n", header.c_str());
  std::size_t rows = columns.empty() ? 0 : columns.front().size();
  for (const auto& c : columns) rows = c.size() < rows ? c.size() : rows;
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t c = 0; c < columns.size(); ++c) {
      std::fprintf(f, c == 0 ? "%.9g" : " %.9g", columns[c][r]);
    }
    std::fputc('\n', f);
  }
  return std::fclose(f) == 0;
}

bool write_text(const std::string& path, const std::string& text) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) return false;
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  return std::fclose(f) == 0 && ok;
}

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) {
    if (c == '\'') {
      q += "'\\''";
    } else {
      q += c;
    }
  }
  return q + "'";
}

std::string gp_string(const std::string& s) {
  std::string q = "\"";
  for (char c : s) {
    if (c == '\\' || c == '"') q += '\\';
    q += c;
  }
  return q + "\"";
}

}  // namespace sgmcmc::common
