// SPDX-License-Identifier: MIT
// Host-only text tables for reports: aligned plain text for the terminal, Markdown for docs.
#pragma once

#include <string>
#include <vector>

namespace sgmcmc::common {

/// Columns with headers and alignment, rows of preformatted cells, and horizontal rules.
/// Widths count UTF-8 code points, so θ or ² in a cell do not break the alignment.
class Table {
 public:
  enum class Align { Left, Right };

  /// Appends a column; call before the first add_row.
  void add_column(const std::string& header, Align align = Align::Right);
  /// Appends a row; missing cells are blank, extra cells are dropped.
  void add_row(const std::vector<std::string>& cells);
  /// A horizontal rule before the next row (plain text only; Markdown has none).
  void add_rule();

  /// Plain text: header, a rule under it, the rows; columns separated by two spaces.
  std::string text() const;
  /// A GitHub-flavoured Markdown table.
  std::string markdown() const;

 private:
  struct Column {
    std::string header;
    Align align;
  };
  std::vector<Column> columns_;
  std::vector<std::vector<std::string>> rows_;  // an empty row is a rule
};

/// printf into a std::string.
std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

/// Number of UTF-8 code points in s (its display width for the text this project prints).
std::size_t display_width(const std::string& s);

}  // namespace sgmcmc::common
