// SPDX-License-Identifier: MIT
// libFuzzer target: parse_csv, the incremental CsvParser and the preprocessing helpers on
// arbitrary bytes, checking invariants.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <unordered_set>

#include "data/csv.hpp"

namespace {

void require(bool condition, const char* what) {
  if (!condition) {
    std::fprintf(stderr, "fuzz_csv: invariant violated: %s\n", what);
    std::abort();
  }
}

// A data set as parse_csv promises it on success.
void check_dataset(const sgmcmc::data::Dataset& d) {
  require(d.rows >= 1 && d.cols >= 1, "ok implies rows >= 1 and cols >= 1");
  require(d.x.size() == d.rows * d.cols, "ok implies x.size() == rows * cols");
  require(d.y.size() == d.rows, "ok implies y.size() == rows");
  require(d.header.size() == d.cols, "ok implies header.size() == cols");
  for (double v : d.x) require(std::isfinite(v), "features are finite");
  for (int label : d.y) require(label == 0 || label == 1, "labels are 0 or 1");
  require(d.count_label(0) + d.count_label(1) == d.rows, "label counts add up");
}

// The incremental parser, fed `text` in pieces of `piece` bytes, gives parse_csv's result.
void check_pieces(std::string_view text, std::size_t piece, const sgmcmc::data::LoadResult& r) {
  sgmcmc::data::CsvParser parser("fuzz.csv");
  for (std::size_t at = 0; at < text.size(); at += piece) parser.feed(text.substr(at, piece));
  const sgmcmc::data::LoadResult p = parser.finish();
  require(p.ok == r.ok && p.error == r.error, "pieces give the same outcome and message");
  require(p.data.rows == r.data.rows && p.data.cols == r.data.cols &&
              p.data.header == r.data.header && p.data.x == r.data.x && p.data.y == r.data.y,
          "pieces give the same data set");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  sgmcmc::data::LoadResult r = sgmcmc::data::parse_csv(text, "fuzz.csv");
  // load_csv reads through the same parser in 64 KiB pieces; split this input at a point that
  // depends on it, and into 1 to 4 byte pieces.
  check_pieces(text, size > 1 ? 1 + (size * 7919 + data[0]) % (size - 1) : 1, r);
  check_pieces(text, 1 + size % 4, r);
  if (!r.ok) {
    require(!r.error.empty(), "failure carries a message");
    require(r.error.rfind("fuzz.csv:", 0) == 0, "message starts with the file name");
    require(r.data.rows == 0 && r.data.cols == 0, "failure returns no shape");
    require(r.data.x.empty() && r.data.y.empty() && r.data.header.empty(),
            "failure returns nothing partial");
    return 0;
  }
  require(r.error.empty(), "success has no message");
  sgmcmc::data::Dataset& d = r.data;
  check_dataset(d);
  std::unordered_set<std::string_view> names;
  for (const auto& name : d.header) {
    require(!name.empty() && name != "y", "feature names are non-empty and not the label");
    require(names.insert(name).second, "feature names are distinct");
  }

  // Preprocessing never crashes and keeps the shape invariants.
  const std::vector<double> before = d.x;
  const auto s = sgmcmc::data::standardise_columns(d);
  if (!s.ok) require(d.x == before, "a failed standardisation changes nothing");
  check_dataset(d);
  if (d.cols == 2) {
    const std::vector<double> plain = d.x;
    if (!sgmcmc::data::ripley_cubic(d).ok) {
      require(d.x == plain && d.cols == 2, "a refused cubic expansion changes nothing");
    }
    check_dataset(d);
  }
  sgmcmc::data::add_intercept(d);
  check_dataset(d);
  const auto split = sgmcmc::data::train_test_split(d, 0.8, 1);
  if (split.ok) {
    check_dataset(split.train);
    check_dataset(split.test);
    require(split.train.rows + split.test.rows == d.rows, "split keeps every row");
  }
  return 0;
}
