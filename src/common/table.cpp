// SPDX-License-Identifier: MIT
// Text and Markdown rendering of report tables; printf-to-string.
#include "common/table.hpp"

#include <algorithm>
#include <cstdarg>
#include <cstdio>

namespace sgmcmc::common {

void Table::add_column(const std::string& header, Align align) {
  columns_.push_back({header, align});
}

void Table::add_row(const std::vector<std::string>& cells) {
  std::vector<std::string> row(columns_.size());
  for (std::size_t c = 0; c < row.size() && c < cells.size(); ++c) row[c] = cells[c];
  if (row.empty()) return;
  rows_.push_back(std::move(row));
}

void Table::add_rule() {
  rows_.emplace_back();
}

std::size_t display_width(const std::string& s) {
  std::size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0U) != 0x80U ? 1 : 0;
  return n;
}

namespace {
std::string pad(const std::string& s, std::size_t width, Table::Align align) {
  const std::size_t w = display_width(s);
  const std::string fill(width > w ? width - w : 0, ' ');
  return align == Table::Align::Left ? s + fill : fill + s;
}
}  // namespace

std::string Table::text() const {
  std::vector<std::size_t> width(columns_.size());
  for (std::size_t c = 0; c < columns_.size(); ++c) {
    width[c] = display_width(columns_[c].header);
    for (const auto& r : rows_) {
      if (!r.empty()) width[c] = std::max(width[c], display_width(r[c]));
    }
  }
  std::size_t total = 0;
  for (std::size_t c = 0; c < width.size(); ++c) total += width[c] + (c ? 2 : 0);
  std::string rule;
  for (std::size_t k = 0; k < total; ++k) rule += "─";
  auto line = [&](const std::vector<std::string>& cells, bool header) {
    std::string s;
    for (std::size_t c = 0; c < columns_.size(); ++c) {
      if (c) s += "  ";
      s += pad(cells[c], width[c], header ? Align::Left : columns_[c].align);
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s + "\n";
  };
  std::vector<std::string> head;
  for (const auto& col : columns_) head.push_back(col.header);
  std::string out = line(head, true) + rule + "\n";
  for (const auto& r : rows_) out += r.empty() ? rule + "\n" : line(r, false);
  return out;
}

std::string Table::markdown() const {
  std::string out = "|";
  for (const auto& col : columns_) out += " " + col.header + " |";
  out += "\n|";
  for (const auto& col : columns_) out += col.align == Align::Left ? ":---|" : "---:|";
  out += "\n";
  for (const auto& r : rows_) {
    if (r.empty()) continue;
    out += "|";
    for (const auto& cell : r) out += " " + cell + " |";
    out += "\n";
  }
  return out;
}

std::string format(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  va_list copy;
  va_copy(copy, args);
  const int n = std::vsnprintf(nullptr, 0, fmt, copy);
  va_end(copy);
  std::string s(n > 0 ? static_cast<std::size_t>(n) : 0, '\0');
  if (n > 0) std::vsnprintf(&s[0], s.size() + 1, fmt, args);
  va_end(args);
  return s;
}

}  // namespace sgmcmc::common
