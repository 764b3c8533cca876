// SPDX-License-Identifier: MIT
// Host-only strict CSV loader for the logistic-regression data sets, and their preprocessing.
#pragma once

// Never thrown from: everything returns a result with ok/error, so the library builds and runs
// under -fno-exceptions (an out-of-memory std::bad_alloc then terminates, as anywhere else).
//
// Accepted format (data/logreg/README.md), checked strictly:
//   * line 1 is a header of column names, each [A-Za-z_][A-Za-z0-9_.-]*, all distinct; the last
//     one is exactly `y` (the label); at least one feature column;
//   * at least one data row; every data row has exactly as many comma-separated fields as the
//     header; no quoting, no surrounding spaces, no empty fields;
//   * every feature field is a whole decimal number as read by std::from_chars (optional '-',
//     digits, optional fraction and exponent; no '+', no leading/trailing characters) and finite;
//   * every label field is exactly `0` or `1`;
//   * lines end in "\n"; a "\r\n" line end is also accepted (one '\r' directly before the '\n'
//     or before the end of the file is dropped); any other '\r' is an error; the final line end
//     is optional, an empty line anywhere is an error;
//   * a line holds at most kMaxLineBytes bytes (its end excluded).
// Error messages read "<name>:<line>:<column>: <what>", line and column 1-based, the column
// counting comma-separated fields. File-level errors of load_csv (cannot open, read error,
// larger than 1 GiB) have no position: "<name>: <what>". On error the dataset is empty. Memory:
// the data set plus one line; the text is never held whole.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sgmcmc::data {

/// Longest accepted line in bytes, line end excluded: 64 KiB.
inline constexpr std::size_t kMaxLineBytes = 64 * 1024;

/// A labelled data set: `rows` examples of `cols` features each plus a 0/1 label.
struct Dataset {
  std::vector<std::string> header;  ///< feature column names (size cols); the label `y` excluded
  std::size_t rows = 0;             ///< number of examples
  std::size_t cols = 0;             ///< number of features (label excluded)
  std::vector<double> x;            ///< features, row-major: x[r * cols + c]
  std::vector<int> y;               ///< labels, 0 or 1 (size rows)

  /// Feature c of row r.
  double at(std::size_t r, std::size_t c) const noexcept { return x[r * cols + c]; }
  /// Number of rows whose label equals `label`.
  std::size_t count_label(int label) const noexcept;
};

/// Outcome of loading or parsing: on success ok is true and error empty; on failure ok is false,
/// error holds one "<name>:<line>:<column>: <what>" message and data is empty.
struct LoadResult {
  bool ok = false;
  std::string error;
  Dataset data;
};

/// Parses CSV text in the format above; `name` (usually the file name) prefixes error messages.
LoadResult parse_csv(std::string_view text, std::string_view name);

/// The same parser, fed the text in pieces of any size: after feed(p1), feed(p2), ..., finish()
/// returns exactly parse_csv(p1 + p2 + ..., name). It checks each line as soon as its end
/// arrives and stops at the first error, and it keeps at most kMaxLineBytes + 2 bytes of an
/// unfinished line (enough to decide that a longer one is too long), so its memory is the data
/// set plus one line whatever the input.
class CsvParser {
 public:
  /// `name` prefixes error messages (copied).
  explicit CsvParser(std::string_view name);
  /// Parses the lines that `bytes` completes and keeps an unfinished last line for later.
  /// Returns false once an error has been found (later calls then do nothing).
  bool feed(std::string_view bytes);
  /// Ends the text (its last line needs no line end) and returns the result; call once.
  LoadResult finish();

 private:
  bool take(std::string_view line);  // one line, its '\n' removed
  bool fail(std::size_t column, const std::string& what);

  std::string name_;
  std::string pending_;  // an unfinished line, at most kMaxLineBytes + 2 bytes
  Dataset data_;
  std::size_t n_fields_ = 0;  // per line, label included
  std::size_t line_no_ = 0;
  bool any_bytes_ = false;
  bool failed_ = false;
  LoadResult result_;
};

/// Reads the file at `path` and parses it as it reads (CsvParser); errors name the file's base
/// name. A regular file over 1 GiB is refused from its size before any byte is read; any other
/// input (a pipe, a device) is refused once more than 1 GiB has been read; reading stops at the
/// first error, e.g. an over-long line (so /dev/zero costs about 128 KiB of reading).
LoadResult load_csv(const std::string& path);

/// Outcome of a preprocessing step: on failure ok is false, error says why and the data set is
/// left exactly as it was.
struct PrepResult {
  bool ok = false;
  std::string error;
};

/// Column means and standard deviations used by standardise_columns.
struct Standardisation {
  std::vector<double> mean;  ///< per feature column
  std::vector<double> sd;    ///< per feature column, n-1 denominator
};

/// Standardises every feature column to mean 0 and standard deviation 1 over all rows (two-pass,
/// n-1 denominator, as MATLAB `std`). Fails, changing nothing, when there are fewer than 2 rows or
/// a column has zero variance (sd <= 64 eps max|x_c|, which a constant column always meets).
/// When `stats` is not null it receives the means and sds that were used.
PrepResult standardise_columns(Dataset& d, Standardisation* stats = nullptr);

/// Prepends a feature column of ones named "(intercept)" (a name no CSV header can hold).
void add_intercept(Dataset& d);

/// Ripley's cubic basis (data README step 3): replaces the two features z1, z2 by
/// [z1, z2, z1^2, z2^2, z1^3, z2^3] (no cross terms, powers not re-standardised). Fails, changing
/// nothing, unless the data set has exactly 2 features. Apply after standardise_columns.
PrepResult ripley_cubic(Dataset& d);

/// A train/test partition of a data set.
struct SplitResult {
  bool ok = false;
  std::string error;
  Dataset train;
  Dataset test;
};

/// Deterministic random split: round(train_fraction * rows) rows go to train, the rest to test,
/// chosen by a Fisher-Yates shuffle driven by splitmix64(seed) with unbiased bounded integers, so
/// the split is identical on every platform. Each part keeps the source row order. Fails unless
/// 0 < train_fraction < 1 and both parts are non-empty.
SplitResult train_test_split(const Dataset& d, double train_fraction, std::uint64_t seed);

/// splitmix64 (Steele, Lea & Flood 2014): the portable generator behind train_test_split.
struct SplitMix64 {
  std::uint64_t state;
  /// Next 64-bit word.
  std::uint64_t next() noexcept;
  /// Uniform integer in [0, bound), bound >= 1, without modulo bias (Lemire 2019, 32-bit form).
  std::uint32_t below(std::uint32_t bound) noexcept;
};

}  // namespace sgmcmc::data
