// SPDX-License-Identifier: MIT
// Strict CSV loader and preprocessing for the logistic-regression data sets (see csv.hpp).
#include "data/csv.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <system_error>
#include <unordered_set>
#include <utility>

#include <sys/stat.h>  // fstat: a regular file's size before reading it (POSIX)

namespace sgmcmc::data {
namespace {

constexpr std::size_t kMaxFileBytes = std::size_t(1) << 30;  // 1 GiB
constexpr std::size_t kMaxQuoted = 40;                       // field text shown in messages

// 'text' with non-printable bytes as \xNN, cut at kMaxQuoted bytes.
std::string quoted(std::string_view field) {
  static constexpr char hex[] = "0123456789abcdef";
  std::string out = "'";
  const std::size_t n = std::min(field.size(), kMaxQuoted);
  for (std::size_t i = 0; i < n; ++i) {
    const auto c = static_cast<unsigned char>(field[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  if (field.size() > n) out += "...";
  out += "'";
  return out;
}

LoadResult failure(std::string_view name, std::size_t line, std::size_t column,
                   const std::string& what) {
  LoadResult r;
  r.ok = false;
  r.error.append(name.data(), name.size());
  if (line > 0) r.error += ':' + std::to_string(line) + ':' + std::to_string(column);
  r.error += ": " + what;
  return r;
}

bool is_name_start(char c) noexcept {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}
bool is_name_char(char c) noexcept {
  return is_name_start(c) || (c >= '0' && c <= '9') || c == '.' || c == '-';
}
bool is_valid_name(std::string_view s) noexcept {
  if (s.empty() || !is_name_start(s[0])) return false;
  return std::all_of(s.begin() + 1, s.end(), is_name_char);
}

// Calls f(field_index, field) for each comma-separated field of `line`, stopping early (and
// returning false) when f returns false.
template <class F>
bool for_each_field(std::string_view line, F&& f) {
  std::size_t column = 0;
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = line.find(',', start);
    const std::size_t end = comma == std::string_view::npos ? line.size() : comma;
    if (!f(column, line.substr(start, end - start))) return false;
    if (comma == std::string_view::npos) return true;
    start = comma + 1;
    ++column;
  }
}

std::size_t count_fields(std::string_view line) noexcept {
  return 1 + static_cast<std::size_t>(std::count(line.begin(), line.end(), ','));
}

}  // namespace

std::size_t Dataset::count_label(int label) const noexcept {
  return static_cast<std::size_t>(std::count(y.begin(), y.end(), label));
}

CsvParser::CsvParser(std::string_view name) : name_(name) {}

bool CsvParser::fail(std::size_t column, const std::string& what) {
  result_ = failure(name_, line_no_, column, what);
  failed_ = true;
  data_ = Dataset();
  pending_.clear();
  return false;
}

bool CsvParser::feed(std::string_view bytes) {
  // An unfinished line of kMaxLineBytes + 2 bytes is too long whatever follows (one '\r' may
  // still be dropped from it), and its first kMaxLineBytes + 1 bytes fix the error's column.
  constexpr std::size_t kDecisive = kMaxLineBytes + 2;
  if (failed_) return false;
  any_bytes_ = any_bytes_ || !bytes.empty();
  while (!bytes.empty()) {
    const std::size_t nl = bytes.find('\n');
    const std::string_view piece = bytes.substr(0, nl);
    if (nl == std::string_view::npos) {
      pending_.append(piece.substr(0, kDecisive - pending_.size()));
      return pending_.size() < kDecisive || take(pending_);
    }
    bytes.remove_prefix(nl + 1);
    if (pending_.empty()) {
      if (!take(piece)) return false;
    } else {
      pending_.append(piece.substr(0, kDecisive - pending_.size()));
      if (!take(pending_)) return false;
      pending_.clear();
    }
  }
  return true;
}

LoadResult CsvParser::finish() {
  if (failed_) return std::move(result_);
  if (!any_bytes_) return failure(name_, 1, 1, "empty file (expected a header row)");
  if (!pending_.empty() && !take(pending_)) return std::move(result_);
  pending_.clear();
  if (data_.rows == 0) return failure(name_, line_no_ + 1, 1, "no data rows after the header");
  LoadResult r;
  r.ok = true;
  r.data = std::move(data_);
  return r;
}

bool CsvParser::take(std::string_view line) {
  ++line_no_;
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);  // accept "\r\n"
  Dataset& d = data_;

  if (line.size() > kMaxLineBytes) {
    return fail(count_fields(line.substr(0, kMaxLineBytes + 1)),
                "line longer than " + std::to_string(kMaxLineBytes) + " bytes");
  }
  if (line.empty()) return fail(1, "empty line");

  if (line_no_ == 1) {  // header
    n_fields_ = count_fields(line);
    std::unordered_set<std::string_view> seen;
    std::string error;
    std::size_t error_column = 0;
    for_each_field(line, [&](std::size_t c, std::string_view field) {
      if (field.empty()) {
        error = "empty column name";
      } else if (!is_valid_name(field)) {
        error = "column name " + quoted(field) +
                " is not a name [A-Za-z_][A-Za-z0-9_.-]* (missing header row?)";
      } else if (!seen.insert(field).second) {
        error = "duplicate column name " + quoted(field);
      }
      error_column = c + 1;
      return error.empty();
    });
    if (!error.empty()) return fail(error_column, error);
    const std::size_t last = line.rfind(',');
    const std::string_view label = last == std::string_view::npos ? line : line.substr(last + 1);
    if (label != "y") {
      return fail(n_fields_, "last column is " + quoted(label) + ", expected the label column 'y'");
    }
    if (n_fields_ < 2) return fail(1, "no feature columns before the label 'y'");
    d.cols = n_fields_ - 1;
    for_each_field(line, [&](std::size_t c, std::string_view field) {
      if (c < d.cols) d.header.emplace_back(field);
      return true;
    });
    return true;
  }

  const std::size_t found = count_fields(line);
  if (found != n_fields_) {
    if (found > n_fields_) {
      return fail(n_fields_ + 1, "too many fields: expected " + std::to_string(n_fields_) +
                                     ", found " + std::to_string(found));
    }
    return fail(found + 1, "too few fields: expected " + std::to_string(n_fields_) + ", found " +
                               std::to_string(found) +
                               (found + 1 == n_fields_ ? " (missing label?)" : ""));
  }
  std::string error;
  std::size_t error_column = 0;
  for_each_field(line, [&](std::size_t c, std::string_view field) {
    error_column = c + 1;
    if (field.empty()) {
      error = "empty field";
    } else if (c == d.cols) {
      if (field == "0" || field == "1") {
        d.y.push_back(field[0] - '0');
      } else {
        error = "label " + quoted(field) + " is not 0 or 1";
      }
    } else {
      double v = 0;
      const char* first = field.data();
      const char* last = first + field.size();
      const auto [ptr, ec] = std::from_chars(first, last, v);
      if (ec == std::errc::result_out_of_range) {
        error = "field " + quoted(field) + " is out of the range of double";
      } else if (ec != std::errc() || ptr != last) {
        error = "field " + quoted(field) + " is not a number";
      } else if (!std::isfinite(v)) {
        error = "field " + quoted(field) + " is not finite";
      } else {
        d.x.push_back(v);
      }
    }
    return error.empty();
  });
  if (!error.empty()) return fail(error_column, error);
  ++d.rows;
  return true;
}

LoadResult parse_csv(std::string_view text, std::string_view name) {
  CsvParser parser(name);
  parser.feed(text);
  return parser.finish();
}

LoadResult load_csv(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  const std::string_view name = slash == std::string::npos
                                    ? std::string_view(path)
                                    : std::string_view(path).substr(slash + 1);
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return failure(name, 0, 0, "cannot open " + path);
  struct stat st {};
  if (::fstat(::fileno(f), &st) == 0 && S_ISREG(st.st_mode) &&
      std::uintmax_t(st.st_size) > kMaxFileBytes) {
    std::fclose(f);
    return failure(name, 0, 0, "file larger than 1 GiB");
  }
  CsvParser parser(name);
  char buffer[1 << 16];
  std::size_t total = 0;  // also bounds a file that grows while it is read, and endless inputs
  bool too_big = false;
  for (;;) {
    const std::size_t got = std::fread(buffer, 1, sizeof buffer, f);
    total += got;
    if (total > kMaxFileBytes) {
      too_big = true;
      break;
    }
    if (!parser.feed(std::string_view(buffer, got)) || got < sizeof buffer) break;
  }
  const bool read_error = std::ferror(f) != 0;
  std::fclose(f);
  if (too_big) return failure(name, 0, 0, "file larger than 1 GiB");
  if (read_error) return failure(name, 0, 0, "read error on " + path);
  return parser.finish();
}

PrepResult standardise_columns(Dataset& d, Standardisation* stats) {
  PrepResult r;
  if (d.rows < 2) {
    r.error = "standardise: need at least 2 rows, have " + std::to_string(d.rows);
    return r;
  }
  Standardisation s;
  s.mean.assign(d.cols, 0.0);
  s.sd.assign(d.cols, 0.0);
  for (std::size_t c = 0; c < d.cols; ++c) {
    double sum = 0;
    double max_abs = 0;
    for (std::size_t i = 0; i < d.rows; ++i) {
      sum += d.at(i, c);
      max_abs = std::max(max_abs, std::abs(d.at(i, c)));
    }
    const double mean = sum / static_cast<double>(d.rows);
    double ss = 0;
    for (std::size_t i = 0; i < d.rows; ++i) ss += (d.at(i, c) - mean) * (d.at(i, c) - mean);
    const double sd = std::sqrt(ss / static_cast<double>(d.rows - 1));
    if (!(sd > 64 * std::numeric_limits<double>::epsilon() * max_abs) || !std::isfinite(sd)) {
      r.error = "standardise: column " + std::to_string(c + 1) + " '" + d.header[c] +
                "' has zero variance";
      return r;
    }
    s.mean[c] = mean;
    s.sd[c] = sd;
  }
  for (std::size_t i = 0; i < d.rows; ++i) {
    for (std::size_t c = 0; c < d.cols; ++c) {
      double& v = d.x[i * d.cols + c];
      v = (v - s.mean[c]) / s.sd[c];
    }
  }
  if (stats != nullptr) *stats = std::move(s);
  r.ok = true;
  return r;
}

void add_intercept(Dataset& d) {
  std::vector<double> x;
  x.reserve(d.rows * (d.cols + 1));
  for (std::size_t i = 0; i < d.rows; ++i) {
    x.push_back(1.0);
    x.insert(x.end(), d.x.begin() + static_cast<std::ptrdiff_t>(i * d.cols),
             d.x.begin() + static_cast<std::ptrdiff_t>((i + 1) * d.cols));
  }
  d.x = std::move(x);
  d.header.insert(d.header.begin(), "(intercept)");
  ++d.cols;
}

PrepResult ripley_cubic(Dataset& d) {
  PrepResult r;
  if (d.cols != 2) {
    r.error = "ripley_cubic: expected 2 features, have " + std::to_string(d.cols);
    return r;
  }
  std::vector<double> x;
  x.reserve(d.rows * 6);
  for (std::size_t i = 0; i < d.rows; ++i) {
    const double z1 = d.at(i, 0);
    const double z2 = d.at(i, 1);
    const double row[6] = {z1, z2, z1 * z1, z2 * z2, z1 * z1 * z1, z2 * z2 * z2};
    for (double v : row) {
      if (!std::isfinite(v)) {  // found by the fuzzer: |z| > 5.6e102 overflows the cube
        r.error = "ripley_cubic: row " + std::to_string(i + 1) +
                  ": a cubed feature overflows (standardise the columns first)";
        return r;
      }
    }
    x.insert(x.end(), row, row + 6);
  }
  const std::string a = d.header[0];
  const std::string b = d.header[1];
  d.header = {a, b, a + "^2", b + "^2", a + "^3", b + "^3"};
  d.x = std::move(x);
  d.cols = 6;
  r.ok = true;
  return r;
}

std::uint64_t SplitMix64::next() noexcept {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

std::uint32_t SplitMix64::below(std::uint32_t bound) noexcept {
  std::uint64_t m = (next() >> 32) * std::uint64_t(bound);
  auto low = static_cast<std::uint32_t>(m);
  if (low < bound) {
    const std::uint32_t threshold = (0u - bound) % bound;
    while (low < threshold) {
      m = (next() >> 32) * std::uint64_t(bound);
      low = static_cast<std::uint32_t>(m);
    }
  }
  return static_cast<std::uint32_t>(m >> 32);
}

SplitResult train_test_split(const Dataset& d, double train_fraction, std::uint64_t seed) {
  SplitResult r;
  if (!(train_fraction > 0.0 && train_fraction < 1.0)) {
    r.error = "train_test_split: train_fraction must lie in (0, 1)";
    return r;
  }
  if (d.rows > std::numeric_limits<std::uint32_t>::max()) {
    r.error = "train_test_split: more than 2^32 - 1 rows";
    return r;
  }
  const auto n_train = static_cast<std::size_t>(train_fraction * static_cast<double>(d.rows) + 0.5);
  if (n_train == 0 || n_train >= d.rows) {
    r.error = "train_test_split: a part would be empty (" + std::to_string(d.rows) + " rows)";
    return r;
  }
  std::vector<std::uint32_t> perm(d.rows);
  for (std::size_t i = 0; i < d.rows; ++i) perm[i] = static_cast<std::uint32_t>(i);
  SplitMix64 g{seed};
  for (std::size_t i = d.rows - 1; i > 0; --i) {
    std::swap(perm[i], perm[g.below(static_cast<std::uint32_t>(i + 1))]);
  }
  std::sort(perm.begin(), perm.begin() + static_cast<std::ptrdiff_t>(n_train));
  std::sort(perm.begin() + static_cast<std::ptrdiff_t>(n_train), perm.end());
  auto take = [&d](const std::uint32_t* first, const std::uint32_t* last) {
    Dataset part;
    part.header = d.header;
    part.cols = d.cols;
    part.rows = static_cast<std::size_t>(last - first);
    part.x.reserve(part.rows * d.cols);
    part.y.reserve(part.rows);
    for (const std::uint32_t* it = first; it != last; ++it) {
      const std::size_t i = *it;
      part.x.insert(part.x.end(), d.x.begin() + static_cast<std::ptrdiff_t>(i * d.cols),
                    d.x.begin() + static_cast<std::ptrdiff_t>((i + 1) * d.cols));
      part.y.push_back(d.y[i]);
    }
    return part;
  };
  r.train = take(perm.data(), perm.data() + n_train);
  r.test = take(perm.data() + n_train, perm.data() + perm.size());
  r.ok = true;
  return r;
}

}  // namespace sgmcmc::data
