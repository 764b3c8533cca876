// SPDX-License-Identifier: MIT
// Strict CSV loader: every malformed input is rejected with file:line:column, the shipped data
// sets load with the README's shapes and class counts, and the preprocessing helpers.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>

#include "data/csv.hpp"

using sgmcmc::data::Dataset;
using sgmcmc::data::LoadResult;
using sgmcmc::data::parse_csv;

namespace {

// CsvParser fed `text` in pieces of `size` bytes.
LoadResult parse_in_pieces(std::string_view text, std::size_t size) {
  sgmcmc::data::CsvParser parser("t.csv");
  for (std::size_t at = 0; at < text.size(); at += size) parser.feed(text.substr(at, size));
  return parser.finish();
}

// Two results are the same: outcome, message and every field of the data set.
void check_same(const LoadResult& a, const LoadResult& b) {
  CHECK(a.ok == b.ok);
  CHECK(a.error == b.error);
  CHECK(a.data.header == b.data.header);
  CHECK(a.data.rows == b.data.rows);
  CHECK(a.data.cols == b.data.cols);
  CHECK(a.data.x == b.data.x);
  CHECK(a.data.y == b.data.y);
}

// Feeding the text in pieces (one byte, a few bytes, the limit's neighbourhood) changes nothing.
void check_pieces(std::string_view text, const LoadResult& whole) {
  for (const std::size_t size :
       {std::size_t(1), std::size_t(2), std::size_t(7), sgmcmc::data::kMaxLineBytes + 1}) {
    CAPTURE(size);
    check_same(parse_in_pieces(text, size), whole);
  }
}

// A rejected input: ok false, nothing partial, and the message starts with the position.
void expect_error(std::string_view text, std::string_view position, std::string_view what) {
  const LoadResult r = parse_csv(text, "t.csv");
  check_pieces(text, r);
  INFO("input: ", std::string(text.substr(0, 80)));
  INFO("error: ", r.error);
  CHECK_FALSE(r.ok);
  CHECK(r.error.rfind(std::string("t.csv:") + std::string(position) + ": ", 0) == 0);
  CHECK(r.error.find(what) != std::string::npos);
  CHECK(r.data.rows == 0);
  CHECK(r.data.cols == 0);
  CHECK(r.data.x.empty());
  CHECK(r.data.y.empty());
  CHECK(r.data.header.empty());
}

std::string data_path(const char* file) {
  return std::string(SGMCMC_DATA_DIR) + "/logreg/" + file;
}

// Bytes this process has read so far through read(2) and its relatives, from any file, page
// cache or device (Linux: rchar in /proc/self/io); -1 when unavailable.
long long bytes_read_so_far() {
  std::FILE* f = std::fopen("/proc/self/io", "r");
  if (f == nullptr) return -1;
  char key[32];
  long long value = 0;
  long long rchar = -1;
  while (std::fscanf(f, "%31s %lld", key, &value) == 2) {
    if (std::strcmp(key, "rchar:") == 0) rchar = value;
  }
  std::fclose(f);
  return rchar;
}

// A file in the test's build folder: `head` written, then extended with zero bytes (a sparse
// hole, which costs no disk) to `size` bytes. Removed when the object goes out of scope.
struct TempFile {
  std::string path;
  TempFile(const char* name, std::string_view head, std::uintmax_t size)
      : path(std::string(SGMCMC_TEST_TMP_DIR) + "/" + name) {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    REQUIRE(f != nullptr);
    REQUIRE(std::fwrite(head.data(), 1, head.size(), f) == head.size());
    REQUIRE(std::fclose(f) == 0);
    std::error_code ec;
    if (size > head.size()) std::filesystem::resize_file(path, size, ec);
    REQUIRE_FALSE(ec);
  }
  ~TempFile() {
    std::error_code ec;
    std::filesystem::remove(path, ec);
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
};

}  // namespace

TEST_CASE("a well-formed file parses, with or without a final line end and with CR-LF") {
  for (const char* text : {"a,b_2,y\n1,-2.5e-1,0\n.5,3,1\n", "a,b_2,y\n1,-2.5e-1,0\n.5,3,1",
                           "a,b_2,y\r\n1,-2.5e-1,0\r\n.5,3,1\r\n"}) {
    const LoadResult r = parse_csv(text, "t.csv");
    INFO(r.error);
    REQUIRE(r.ok);
    check_pieces(text, r);
    CHECK(r.error.empty());
    CHECK(r.data.rows == 2);
    CHECK(r.data.cols == 2);
    CHECK(r.data.header == std::vector<std::string>{"a", "b_2"});
    CHECK(r.data.x == std::vector<double>{1.0, -0.25, 0.5, 3.0});
    CHECK(r.data.y == std::vector<int>{0, 1});
    CHECK(r.data.at(1, 0) == 0.5);
    CHECK(r.data.count_label(1) == 1);
  }
}

TEST_CASE("empty file and header-only file are rejected") {
  expect_error("", "1:1", "empty file");
  expect_error("a,b,y\n", "2:1", "no data rows");
  expect_error("a,b,y", "2:1", "no data rows");
}

TEST_CASE("wrong column counts are rejected at the first missing or extra field") {
  expect_error("a,b,y\n1,2,0\n1,2\n", "3:3",
               "too few fields: expected 3, found 2 (missing label?)");
  expect_error("a,b,c,y\n1,2,3,0\n1,0\n", "3:3", "too few fields: expected 4, found 2");
  expect_error("a,b,c,y\n1,2,3,0\n1\n", "3:2", "too few fields: expected 4, found 1");
  expect_error("a,b,y\n1,2,0,5\n", "2:4", "too many fields: expected 3, found 4");
  expect_error("a,b,y\n1,2,0,\n", "2:4", "too many fields");
}

TEST_CASE("non-numeric, empty and non-finite fields are rejected") {
  expect_error("a,b,y\n1,abc,0\n", "2:2", "field 'abc' is not a number");
  expect_error("a,b,y\n1,2,0\n1.5x,2,0\n", "3:1", "field '1.5x' is not a number");
  expect_error("a,b,y\n 1,2,0\n", "2:1", "field ' 1' is not a number");
  expect_error("a,b,y\n1,2 ,0\n", "2:2", "field '2 ' is not a number");
  expect_error("a,b,y\n+1,2,0\n", "2:1", "is not a number");
  expect_error("a,b,y\n1,0x10,0\n", "2:2", "is not a number");
  expect_error("a,b,y\n1,1e,0\n", "2:2", "is not a number");
  expect_error("a,b,y\n1,--1,0\n", "2:2", "is not a number");
  expect_error("a,b,y\n1,\"2\",0\n", "2:2", "is not a number");
  expect_error(std::string_view("a,b,y\n1,2\0,0\n", 13), "2:2", "field '2\\x00' is not a number");
  expect_error("a,b,y\n1,,0\n", "2:2", "empty field");
  expect_error("a,b,y\n,1,0\n", "2:1", "empty field");
  expect_error("a,b,y\n1,nan,0\n", "2:2", "field 'nan' is not finite");
  expect_error("a,b,y\n1,NaN,0\n", "2:2", "is not finite");
  expect_error("a,b,y\ninf,1,0\n", "2:1", "field 'inf' is not finite");
  expect_error("a,b,y\n1,-infinity,0\n", "2:2", "is not finite");
  expect_error("a,b,y\n1,1e999,0\n", "2:2", "field '1e999' is out of the range of double");
}

TEST_CASE("missing or invalid labels are rejected") {
  expect_error("a,b,y\n1,2,2\n", "2:3", "label '2' is not 0 or 1");
  expect_error("a,b,y\n1,2,1.0\n", "2:3", "label '1.0' is not 0 or 1");
  expect_error("a,b,y\n1,2,-1\n", "2:3", "label '-1' is not 0 or 1");
  expect_error("a,b,y\n1,2,\n", "2:3", "empty field");
  expect_error("a,b,y\n1,2\n", "2:3", "missing label?");
}

TEST_CASE("missing header, bad names, duplicates and a wrong label column are rejected") {
  expect_error("1,2,0\n3,4,1\n", "1:1", "column name '1' is not a name");
  expect_error("1,2,0\n3,4,1\n", "1:1", "(missing header row?)");
  expect_error("a,b,a,y\n1,2,3,0\n", "1:3", "duplicate column name 'a'");
  expect_error("a,y,y\n1,2,0\n", "1:3", "duplicate column name 'y'");
  expect_error("a,,y\n1,2,0\n", "1:2", "empty column name");
  expect_error("a,b c,y\n1,2,0\n", "1:2", "column name 'b c' is not a name");
  expect_error("a,b,label\n1,2,0\n", "1:3",
               "last column is 'label', expected the label column 'y'");
  expect_error("y\n1\n", "1:1", "no feature columns");
}

TEST_CASE("empty lines and stray carriage returns are rejected") {
  expect_error("a,y\n1,0\n\n2,1\n", "3:1", "empty line");
  expect_error("a,y\n1,0\n\n", "3:1", "empty line");
  expect_error("\na,y\n1,0\n", "1:1", "empty line");
  expect_error("a,y\n1\r,0\n", "2:1", "field '1\\x0d' is not a number");
  expect_error("a,y\r1,0\r", "1:2", "column name 'y\\x0d1' is not a name");  // CR-only line ends
  expect_error("a,y\n1,0\r\r\n", "2:2", "label '0\\x0d' is not 0 or 1");
}

TEST_CASE("overlong lines are rejected at the field where the limit is crossed") {
  const std::size_t limit = sgmcmc::data::kMaxLineBytes;
  // A 65534-digit zero plus ",0" is exactly at the limit.
  const std::string at_limit = "a,y\n" + std::string(limit - 2, '0') + ",0\n";
  CHECK(parse_csv(at_limit, "t.csv").ok);
  expect_error("a,y\n" + std::string(limit - 1, '1') + ",0\n", "2:2",
               "line longer than 65536 bytes");
  expect_error("a,y\n" + std::string(limit + 5, '1') + ",0\n", "2:1", "line longer than");
  std::string header = "a,";
  for (int i = 0; i < 20000; ++i) header += "c" + std::to_string(i) + ",";
  const std::size_t crossing =
      1 + std::size_t(std::count(header.begin(), header.begin() + long(limit) + 1, ','));
  expect_error(header + "y\n", "1:" + std::to_string(crossing), "line longer than");
  // CR-LF: the '\r' is part of the line end, not of the limit.
  const std::string crlf = "a,y\r\n" + std::string(limit - 2, '0') + ",0\r\n";
  CHECK(parse_csv(crlf, "t.csv").ok);
  check_pieces(crlf, parse_csv(crlf, "t.csv"));
  const std::string cr_end = "a,y\r\n" + std::string(limit - 2, '0') + ",0\r";
  CHECK(parse_csv(cr_end, "t.csv").ok);
  check_pieces(cr_end, parse_csv(cr_end, "t.csv"));
}

TEST_CASE("CsvParser stops at the first error and keeps at most one line") {
  sgmcmc::data::CsvParser parser("t.csv");
  CHECK(parser.feed("a,y\n1,0\n"));
  CHECK(parser.feed("1,"));
  CHECK_FALSE(parser.feed("2\n0,1\n"));  // line 3: label '2'
  CHECK_FALSE(parser.feed("anything"));  // nothing more is looked at
  const LoadResult r = parser.finish();
  CHECK_FALSE(r.ok);
  CHECK(r.error == "t.csv:3:2: label '2' is not 0 or 1");
  CHECK(r.data.rows == 0);
  CHECK(r.data.x.empty());
  // An unfinished line is refused as soon as it cannot fit, whatever would follow.
  sgmcmc::data::CsvParser endless("t.csv");
  CHECK(endless.feed("a,y\n"));
  CHECK(endless.feed(std::string(sgmcmc::data::kMaxLineBytes + 1, '1')));
  CHECK_FALSE(endless.feed("1"));
  CHECK(endless.finish().error == "t.csv:2:1: line longer than 65536 bytes");
}

TEST_CASE("long field text is shortened in messages") {
  const LoadResult r = parse_csv("a,y\n" + std::string(100, 'x') + ",0\n", "t.csv");
  CHECK_FALSE(r.ok);
  CHECK(r.error == "t.csv:2:1: field '" + std::string(40, 'x') + "...' is not a number");
}

TEST_CASE("load_csv names the file in errors and rejects a missing file") {
  const LoadResult r = sgmcmc::data::load_csv(data_path("no-such-file.csv"));
  CHECK_FALSE(r.ok);
  CHECK(r.error.rfind("no-such-file.csv: cannot open", 0) == 0);
  CHECK(r.data.rows == 0);
}

TEST_CASE("load_csv gives parse_csv's result, also for lines across its 64 KiB reads") {
  // Rows of varying length over 300 KiB, then a CR-LF row of exactly the limit, at several
  // offsets so that its end and its '\r' fall on both sides of a read boundary.
  const std::size_t limit = sgmcmc::data::kMaxLineBytes;
  for (const std::size_t shift : {0, 1, 2, 3, 40}) {
    std::string text = "a,b,y\r\n";
    for (int i = 0; text.size() < 300000 + shift; ++i) {
      text += std::to_string(i) + "," + std::string(std::size_t(1 + i % 97), '7') + "," +
              std::to_string(i % 2) + "\r\n";
    }
    text += "1," + std::string(limit - 4, '0') + ",0\r\n";
    for (const std::string tail : {"", "2,3,1", "2,3,1\r", "2,3\n", "\n"}) {
      CAPTURE(shift);
      CAPTURE(tail);
      const std::string all = text + tail;
      const TempFile file("t.csv", all, all.size());
      const LoadResult r = sgmcmc::data::load_csv(file.path);
      check_same(r, parse_csv(all, "t.csv"));
      INFO(r.error);
      CHECK(r.ok == (tail.find('\n') == std::string::npos));
    }
  }
}

// The loader's memory and reading are bounded by the 1 GiB and 64 KiB limits, not by the input:
// it used to read a whole over-limit file (2.1 GB peak RSS on a 1.1 GB file or /dev/zero) and
// a whole 100 MB one-line file before refusing them. "Reads little" is measured in bytes read
// (1 MiB allows the 64 KiB read buffer many times over), never in time.
namespace {

void expect_refused_after_little(const std::string& path, const std::string& error) {
  const long long before = bytes_read_so_far();
  REQUIRE(before >= 0);
  const LoadResult r = sgmcmc::data::load_csv(path);
  const long long bytes = bytes_read_so_far() - before;
  CHECK_FALSE(r.ok);
  CHECK(r.error == error);
  CHECK(r.data.rows == 0);
  CHECK(bytes < (1 << 20));
}

}  // namespace

TEST_CASE("load_csv refuses a file over 1 GiB from its size, without reading it") {
  const TempFile big("csv_test_big.csv", "a,y\n1,0\n", 1100000000);  // 1.1 GB, sparse
  expect_refused_after_little(big.path, "csv_test_big.csv: file larger than 1 GiB");
  // One byte over the limit is refused the same way; exactly 1 GiB is read, and stops at its
  // first over-long line (the zero bytes after "1,0\n" form line 3).
  const TempFile over("csv_test_over.csv", "a,y\n1,0\n", (std::uintmax_t(1) << 30) + 1);
  expect_refused_after_little(over.path, "csv_test_over.csv: file larger than 1 GiB");
  const TempFile at("csv_test_at.csv", "a,y\n1,0\n", std::uintmax_t(1) << 30);
  expect_refused_after_little(at.path, "csv_test_at.csv:3:1: line longer than 65536 bytes");
}

TEST_CASE("load_csv stops at the first over-long line without reading the rest") {
  // A 100 MB file whose third line is "3," and then 100 MB of zero bytes.
  const TempFile one_line("csv_test_line.csv", "a,b,y\n1,2,0\n3,", 100000000);
  expect_refused_after_little(one_line.path, "csv_test_line.csv:3:2: line longer than 65536 bytes");
}

TEST_CASE("load_csv refuses an endless input such as /dev/zero after reading little") {
  expect_refused_after_little("/dev/zero", "zero:1:1: line longer than 65536 bytes");
}

TEST_CASE("the shipped data sets load with the README's shapes and class counts") {
  struct Expected {
    const char* file;
    std::size_t rows, cols, ones, zeros;
  };
  const Expected table[] = {
      {"australian.csv", 690, 14, 307, 383}, {"german.csv", 1000, 24, 300, 700},
      {"heart.csv", 270, 13, 120, 150},      {"pima.csv", 532, 7, 177, 355},
      {"ripley.csv", 250, 2, 125, 125},      {"caravan.csv", 5822, 85, 348, 5474},
  };
  for (const Expected& e : table) {
    CAPTURE(e.file);
    LoadResult r = sgmcmc::data::load_csv(data_path(e.file));
    INFO(r.error);
    REQUIRE(r.ok);
    Dataset& d = r.data;
    CHECK(d.rows == e.rows);
    CHECK(d.cols == e.cols);
    CHECK(d.header.size() == e.cols);
    CHECK(d.x.size() == e.rows * e.cols);
    CHECK(d.y.size() == e.rows);
    CHECK(d.count_label(1) == e.ones);
    CHECK(d.count_label(0) == e.zeros);

    // Standardise (README step 2): every column then has mean 0 and sd 1 (n-1 denominator).
    sgmcmc::data::Standardisation stats;
    const auto s = sgmcmc::data::standardise_columns(d, &stats);
    INFO(s.error);
    REQUIRE(s.ok);
    CHECK(stats.mean.size() == e.cols);
    for (std::size_t c = 0; c < d.cols; ++c) {
      double sum = 0;
      double ss = 0;
      for (std::size_t i = 0; i < d.rows; ++i) sum += d.at(i, c);
      for (std::size_t i = 0; i < d.rows; ++i) ss += d.at(i, c) * d.at(i, c);
      CHECK(std::abs(sum / double(d.rows)) < 1e-12);
      CHECK(std::abs(ss / double(d.rows - 1) - 1.0) < 1e-12);
    }
  }
}

TEST_CASE("first row of a shipped file is read exactly") {
  const LoadResult r = sgmcmc::data::load_csv(data_path("pima.csv"));
  REQUIRE(r.ok);
  CHECK(r.data.header.front() == "npreg");
  CHECK(r.data.header.back() == "age");
  const double first[] = {5, 86, 68, 28, 30.2, 0.364, 24};
  for (std::size_t c = 0; c < 7; ++c) CHECK(r.data.at(0, c) == first[c]);
  CHECK(r.data.y[0] == 0);
}

TEST_CASE("Ripley: standardise, cubic expansion and intercept give the paper's D = 7") {
  LoadResult r = sgmcmc::data::load_csv(data_path("ripley.csv"));
  REQUIRE(r.ok);
  Dataset& d = r.data;
  REQUIRE(sgmcmc::data::standardise_columns(d).ok);
  const double z1 = d.at(3, 0);
  const double z2 = d.at(3, 1);
  REQUIRE(sgmcmc::data::ripley_cubic(d).ok);
  sgmcmc::data::add_intercept(d);
  CHECK(d.cols == 7);
  CHECK(d.x.size() == 250 * 7);
  CHECK(d.header ==
        std::vector<std::string>{"(intercept)", "xs", "ys", "xs^2", "ys^2", "xs^3", "ys^3"});
  const double expect[] = {1, z1, z2, z1 * z1, z2 * z2, z1 * z1 * z1, z2 * z2 * z2};
  for (std::size_t c = 0; c < 7; ++c) CHECK(d.at(3, c) == expect[c]);
  // Applying the cubic basis twice is refused and changes nothing.
  const auto again = sgmcmc::data::ripley_cubic(d);
  CHECK_FALSE(again.ok);
  CHECK(again.error.find("expected 2 features, have 7") != std::string::npos);
  CHECK(d.cols == 7);
}

TEST_CASE("standardise rejects zero-variance columns and too few rows, changing nothing") {
  LoadResult r = parse_csv("a,b,c,y\n1,0.1,3,0\n2,0.1,4,1\n3,0.1,5,0\n", "t.csv");
  REQUIRE(r.ok);
  const std::vector<double> before = r.data.x;
  const auto s = sgmcmc::data::standardise_columns(r.data);
  CHECK_FALSE(s.ok);
  CHECK(s.error == "standardise: column 2 'b' has zero variance");
  CHECK(r.data.x == before);

  LoadResult one = parse_csv("a,y\n1,0\n", "t.csv");
  REQUIRE(one.ok);
  CHECK_FALSE(sgmcmc::data::standardise_columns(one.data).ok);
}

TEST_CASE("train/test split is deterministic, disjoint, complete and order-preserving") {
  LoadResult r = sgmcmc::data::load_csv(data_path("german.csv"));
  REQUIRE(r.ok);
  const Dataset& d = r.data;
  // Tag every row with its index in an extra leading column, to trace rows through the split.
  Dataset tagged = d;
  sgmcmc::data::add_intercept(tagged);
  for (std::size_t i = 0; i < tagged.rows; ++i) tagged.x[i * tagged.cols] = double(i);

  const auto a = sgmcmc::data::train_test_split(tagged, 0.8, 42);
  const auto b = sgmcmc::data::train_test_split(tagged, 0.8, 42);
  const auto c = sgmcmc::data::train_test_split(tagged, 0.8, 43);
  REQUIRE(a.ok);
  REQUIRE(b.ok);
  REQUIRE(c.ok);
  CHECK(a.train.rows == 800);
  CHECK(a.test.rows == 200);
  CHECK(a.train.x == b.train.x);
  CHECK(a.test.y == b.test.y);
  CHECK(a.train.x != c.train.x);

  std::vector<int> seen(d.rows, 0);
  for (const Dataset* part : {&a.train, &a.test}) {
    double previous = -1;
    for (std::size_t i = 0; i < part->rows; ++i) {
      const double id = part->at(i, 0);
      CHECK(id > previous);  // source order kept
      previous = id;
      const auto row = static_cast<std::size_t>(id);
      ++seen[row];
      CHECK(part->y[i] == d.y[row]);
      for (std::size_t col = 0; col < d.cols; ++col) CHECK(part->at(i, col + 1) == d.at(row, col));
    }
  }
  for (int s : seen) CHECK(s == 1);

  CHECK_FALSE(sgmcmc::data::train_test_split(d, 0.0, 1).ok);
  CHECK_FALSE(sgmcmc::data::train_test_split(d, 1.0, 1).ok);
  CHECK_FALSE(sgmcmc::data::train_test_split(d, 0.0001, 1).ok);
}

TEST_CASE("splitmix64 matches its published reference values and below() is in range") {
  // First outputs of splitmix64 seeded with 1234567 (reference implementation by S. Vigna).
  sgmcmc::data::SplitMix64 g{1234567};
  CHECK(g.next() == 6457827717110365317ULL);
  CHECK(g.next() == 3203168211198807973ULL);
  sgmcmc::data::SplitMix64 h{7};
  for (std::uint32_t bound : {1u, 2u, 3u, 7u, 1000u, 0x80000001u, 0xffffffffu}) {
    for (int i = 0; i < 100; ++i) CHECK(h.below(bound) < bound);
  }
}

TEST_CASE("ripley_cubic refuses a feature whose cube overflows and changes nothing") {
  // Found by the fuzzer: 6.4e134 is a valid double, its cube is not.
  auto r = sgmcmc::data::parse_csv("a,b,y\n1,6.4e134,1\n2,1,0\n", "huge.csv");
  REQUIRE(r.ok);
  const std::vector<double> before = r.data.x;
  const auto c = sgmcmc::data::ripley_cubic(r.data);
  CHECK_FALSE(c.ok);
  CHECK(c.error.find("overflows") != std::string::npos);
  CHECK(r.data.x == before);
  CHECK(r.data.cols == 2);
}
