// SPDX-License-Identifier: MIT
// Strict IDX loader: good files load raw and gzip; every malformed header, body and gzip layer is
// rejected with "file: byte N:" (or "gzip byte N:") and no data; Debian's FashionMNIST loads.
#include <doctest/doctest.h>
#include <zlib.h>

#include <sys/stat.h>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "data/idx.hpp"

using sgmcmc::data::IdxImagesResult;
using sgmcmc::data::IdxLabelsResult;
using sgmcmc::data::parse_idx_images;
using sgmcmc::data::parse_idx_labels;

namespace {

void put32(std::string& s, std::uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) s += static_cast<char>((v >> shift) & 0xff);
}

// An IDX image file: magic 00 00 08 03, the three dimensions, then `body`.
std::string images_file(std::uint32_t count, std::uint32_t rows, std::uint32_t cols,
                        const std::string& body) {
  std::string s("\0\0\x08\x03", 4);
  put32(s, count);
  put32(s, rows);
  put32(s, cols);
  return s + body;
}

// An IDX label file: magic 00 00 08 01, the count, then `body`.
std::string labels_file(std::uint32_t count, const std::string& body) {
  std::string s("\0\0\x08\x01", 4);
  put32(s, count);
  return s + body;
}

// `n` bytes 0, 1, 2, ... (mod 251).
std::string ramp(std::size_t n) {
  std::string s(n, '\0');
  for (std::size_t i = 0; i < n; ++i) s[i] = static_cast<char>(i % 251);
  return s;
}

// One gzip member holding `raw` (zlib's deflate with the gzip wrapper).
std::string gzip(const std::string& raw) {
  z_stream zs{};
  REQUIRE(deflateInit2(&zs, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) == Z_OK);
  std::string out(deflateBound(&zs, static_cast<uLong>(raw.size())) + 64, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(raw.data()));
  zs.avail_in = static_cast<uInt>(raw.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  REQUIRE(deflate(&zs, Z_FINISH) == Z_STREAM_END);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

void expect_nothing(const IdxImagesResult& r) {
  CHECK_FALSE(r.ok);
  CHECK(r.data.count == 0);
  CHECK(r.data.rows == 0);
  CHECK(r.data.cols == 0);
  CHECK(r.data.pixels.empty());
}
void expect_nothing(const IdxLabelsResult& r) {
  CHECK_FALSE(r.ok);
  CHECK(r.data.count == 0);
  CHECK(r.data.labels.empty());
}

// A rejected image file, raw and gzip-wrapped: the same "t.idx: <position>: ... <what>" message
// (offsets count the decompressed stream) and nothing partial.
void expect_images_error(const std::string& raw, std::string_view position, std::string_view what,
                         std::size_t rows = 0, std::size_t cols = 0) {
  for (const std::string& bytes : {raw, gzip(raw)}) {
    const IdxImagesResult r = parse_idx_images(bytes, "t.idx", rows, cols);
    INFO("error: ", r.error);
    INFO("gzip: ", bytes.size() != raw.size() || bytes != raw);
    CHECK(r.error.rfind("t.idx: " + std::string(position) + ": ", 0) == 0);
    CHECK(r.error.find(what) != std::string::npos);
    expect_nothing(r);
  }
}

void expect_labels_error(const std::string& raw, std::string_view position, std::string_view what,
                         unsigned classes = 10) {
  for (const std::string& bytes : {raw, gzip(raw)}) {
    const IdxLabelsResult r = parse_idx_labels(bytes, "t.idx", classes);
    INFO("error: ", r.error);
    CHECK(r.error.rfind("t.idx: " + std::string(position) + ": ", 0) == 0);
    CHECK(r.error.find(what) != std::string::npos);
    expect_nothing(r);
  }
}

// A gzip-layer fault: "t.idx: gzip byte N: ... <what>" and nothing partial, for both kinds.
void expect_gzip_error(const std::string& bytes, std::string_view what) {
  const IdxImagesResult r = parse_idx_images(bytes, "t.idx");
  INFO("error: ", r.error);
  CHECK(r.error.rfind("t.idx: gzip byte ", 0) == 0);
  CHECK(r.error.find(what) != std::string::npos);
  expect_nothing(r);
}

void write_file(const std::string& path, const std::string& bytes) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  REQUIRE(f != nullptr);
  REQUIRE(std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size());
  REQUIRE(std::fclose(f) == 0);
}

std::string temp_path(const char* file) {
  return std::string(SGMCMC_TEST_TMP_DIR) + "/" + file;
}

}  // namespace

TEST_CASE("good image and label files load, raw and gzip, with their shapes and bytes") {
  const std::string body = ramp(3 * 4 * 5);
  for (const std::string& bytes : {images_file(3, 4, 5, body), gzip(images_file(3, 4, 5, body))}) {
    const IdxImagesResult r = parse_idx_images(bytes, "t.idx");
    INFO(r.error);
    REQUIRE(r.ok);
    CHECK(r.error.empty());
    CHECK(r.data.count == 3);
    CHECK(r.data.rows == 4);
    CHECK(r.data.cols == 5);
    CHECK(r.data.image_size() == 20);
    CHECK(std::string(r.data.pixels.begin(), r.data.pixels.end()) == body);
    CHECK(r.data.image(2)[0] == 40);
    CHECK(parse_idx_images(bytes, "t.idx", 4, 5).ok);  // the expected shape holds
  }
  const std::string labels("\x09\x00\x03\x07", 4);
  for (const std::string& bytes : {labels_file(4, labels), gzip(labels_file(4, labels))}) {
    const IdxLabelsResult r = parse_idx_labels(bytes, "t.idx");
    INFO(r.error);
    REQUIRE(r.ok);
    CHECK(r.data.count == 4);
    CHECK(r.data.labels == std::vector<std::uint8_t>{9, 0, 3, 7});
  }
  // 256 classes accept every byte value.
  CHECK(parse_idx_labels(labels_file(1, "\xff"), "t.idx", 256).ok);
}

TEST_CASE("a bad magic number, data type or dimension count is rejected at its byte") {
  const std::string good = images_file(1, 2, 2, "abcd");
  struct Case {
    std::size_t index;  // header byte replaced
    char value;
    const char* position;
    const char* what;
  };
  for (const Case& c : {
           Case{0, 'P', "byte 0", "magic number starts 0x5000, not 0x0000 (not an IDX file)"},
           Case{1, 1, "byte 0", "magic number starts 0x0001"},
           Case{2, 0x0D, "byte 2", "data type 0x0d (32-bit float) is not 0x08 (unsigned byte)"},
           Case{2, 0x42, "byte 2", "data type 0x42 (no IDX type)"},
           Case{3, 1, "byte 3", "1 dimensions, expected 3 for images"},
       }) {
    std::string s = good;
    s[c.index] = c.value;
    expect_images_error(s, c.position, c.what);
  }
  // A label file given as images, and the reverse.
  expect_images_error(labels_file(1, "\x01"), "byte 3", "1 dimensions, expected 3 for images");
  expect_labels_error(good, "byte 3", "3 dimensions, expected 1 for labels");
  // A PNG is not an IDX file; neither is text.
  expect_images_error(std::string("\x89PNG\r\n\x1a\n", 8), "byte 0", "not an IDX file");
  expect_labels_error("hello", "byte 0", "magic number starts 0x6865");
}

TEST_CASE("zero, unexpected and oversized dimensions are rejected at their bytes") {
  expect_images_error(images_file(0, 2, 2, ""), "byte 4", "image count is 0");
  expect_images_error(images_file(1, 0, 2, ""), "byte 8", "rows is 0");
  expect_images_error(images_file(1, 2, 0, ""), "byte 12", "columns is 0");
  expect_labels_error(labels_file(0, ""), "byte 4", "label count is 0");
  expect_images_error(images_file(1, 27, 28, std::string(27 * 28, 'x')), "byte 8",
                      "rows is 27, expected 28", 28, 28);
  expect_images_error(images_file(1, 28, 29, std::string(28 * 29, 'x')), "byte 12",
                      "columns is 29, expected 28", 28, 28);
  // Sizes the loader refuses before allocating anything.
  expect_images_error(images_file(0xffffffffu, 28, 28, ""), "byte 4",
                      "4294967295 images of 28 x 28 bytes exceed the 1 GiB limit");
  expect_images_error(images_file(2, 0xffffffffu, 0xffffffffu, ""), "byte 4",
                      "exceed the 1 GiB limit");
  expect_labels_error(labels_file((1u << 30) + 1, ""), "byte 4",
                      "1073741825 labels exceed the 1 GiB limit");
}

TEST_CASE("a stream that ends inside the header or the data is rejected where it ends") {
  const std::string good = images_file(2, 2, 3, "abcdefghijkl");
  for (std::size_t cut : {0, 1, 3, 4, 9, 15}) {
    INFO("cut at ", cut);
    expect_images_error(good.substr(0, cut), "byte " + std::to_string(cut),
                        "the stream ends inside the 16-byte IDX header");
  }
  expect_images_error(good.substr(0, 16), "byte 16",
                      "the stream ends inside image 0 of 2 (the header announces 28 bytes)");
  expect_images_error(good.substr(0, 25), "byte 25", "the stream ends inside image 1 of 2");
  expect_labels_error(labels_file(3, "\x01\x02"), "byte 10",
                      "the stream ends inside label 2 of 3 (the header announces 11 bytes)");
  expect_labels_error(labels_file(3, "").substr(0, 5), "byte 5",
                      "the stream ends inside the 8-byte IDX header");
}

TEST_CASE("bytes after the announced data are rejected") {
  expect_images_error(images_file(1, 2, 2, "abcdX"), "byte 20",
                      "1 trailing bytes after the last image (the header announces 20 bytes)");
  expect_images_error(images_file(1, 2, 2, "abcd" + std::string(70000, 'z')), "byte 20",
                      "70000 trailing bytes");
  expect_labels_error(labels_file(1, "\x01\x01"), "byte 9",
                      "1 trailing bytes after the last label");
}

TEST_CASE("a label outside the classes is rejected at its byte, before a truncation after it") {
  expect_labels_error(labels_file(3, "\x01\x0a\x02"), "byte 9",
                      "label 10 of item 1 is not a class in 0..9");
  expect_labels_error(labels_file(3, "\x01\x02\x05"), "byte 10",
                      "label 5 of item 2 is not a class in 0..4", 5);
  expect_labels_error(labels_file(4, std::string("\x00\xff", 2)), "byte 9", "label 255 of item 1");
  const IdxLabelsResult r = parse_idx_labels(labels_file(1, "\x01"), "t.idx", 0);
  CHECK(r.error == "t.idx: num_classes must lie in 1..256, got 0");
  expect_nothing(r);
}

TEST_CASE("faults of the gzip layer are reported as gzip faults with the compressed offset") {
  const std::string raw = images_file(4, 8, 8, ramp(256));
  const std::string gz = gzip(raw);
  REQUIRE(parse_idx_images(gz, "t.idx").ok);

  // Truncated .gz files: cut inside the deflate data and inside the 8-byte trailer.
  for (std::size_t keep : {std::size_t(12), gz.size() / 2, gz.size() - 5, gz.size() - 1}) {
    INFO("kept ", keep, " of ", gz.size(), " bytes");
    expect_gzip_error(gz.substr(0, keep), "truncated file");
  }
  // The CRC-32 and length in the trailer are checked.
  std::string bad = gz;
  bad[bad.size() - 6] ^= 0x01;
  expect_gzip_error(bad, "corrupt gzip stream (zlib: incorrect data check)");
  bad = gz;
  bad[bad.size() - 2] ^= 0x01;
  expect_gzip_error(bad, "corrupt gzip stream (zlib: incorrect length check)");
  // A bad compression method in the gzip header, and a bad deflate block type.
  bad = gz;
  bad[2] = 7;
  expect_gzip_error(bad, "corrupt gzip stream (zlib: unknown compression method)");
  bad = gz;
  bad[10] = static_cast<char>(0x07);  // first block header: BFINAL=1, BTYPE=11 (reserved)
  expect_gzip_error(bad, "corrupt gzip stream (zlib: invalid block type)");
  // Anything after the gzip member, including a second member, is an error.
  expect_gzip_error(gz + "x", "1 bytes after the end of the gzip stream");
  expect_gzip_error(gz + gz, std::to_string(gz.size()) + " bytes after the end of the gzip stream");
  const IdxImagesResult r = parse_idx_images(gz + "x", "t.idx");
  CHECK(r.error.rfind("t.idx: gzip byte " + std::to_string(gz.size()) + ": ", 0) == 0);
  // A gzip fault that stops the stream inside the header or data is still a gzip fault.
  expect_gzip_error(gzip(raw.substr(0, 10)).substr(0, 12), "truncated file");
}

TEST_CASE("files: open failures, the base name in messages, and pair count agreement") {
  const IdxImagesResult missing = sgmcmc::data::load_idx_images("/nonexistent/dir/x-images.gz");
  CHECK(missing.error == "x-images.gz: cannot open /nonexistent/dir/x-images.gz");
  expect_nothing(missing);

  const std::string images = temp_path("idx_test_images.gz");
  const std::string labels = temp_path("idx_test_labels");
  const std::string short_labels = temp_path("idx_test_labels_short");
  write_file(images, gzip(images_file(3, 2, 2, ramp(12))));
  write_file(labels, labels_file(3, std::string("\x00\x01\x02", 3)));
  write_file(short_labels, labels_file(2, std::string("\x00\x01", 2)));

  const auto pair = sgmcmc::data::load_idx_pair(images, labels, 2, 2, 3);
  INFO(pair.error);
  REQUIRE(pair.ok);
  CHECK(pair.images.count == 3);
  CHECK(pair.labels.labels == std::vector<std::uint8_t>{0, 1, 2});

  const auto mismatch = sgmcmc::data::load_idx_pair(images, short_labels);
  CHECK(mismatch.error ==
        "idx_test_labels_short: byte 4: 2 labels, but idx_test_images.gz holds 3 images");
  CHECK_FALSE(mismatch.ok);
  CHECK(mismatch.images.pixels.empty());
  CHECK(mismatch.labels.labels.empty());

  const auto wrong_shape = sgmcmc::data::load_idx_pair(images, labels, 28, 28);
  CHECK(wrong_shape.error == "idx_test_images.gz: byte 8: rows is 2, expected 28");
  const auto wrong_class = sgmcmc::data::load_idx_pair(images, labels, 0, 0, 2);
  CHECK(wrong_class.error == "idx_test_labels: byte 10: label 2 of item 2 is not a class in 0..1");
  for (const auto& p : {images, labels, short_labels}) std::remove(p.c_str());
}

TEST_CASE("the huge-page allocator: large blocks 2 MiB-aligned, small ones ordinary, bytes kept") {
  using Bytes = std::vector<std::uint8_t, sgmcmc::data::HugePageAllocator<std::uint8_t>>;
  constexpr std::size_t huge = sgmcmc::data::kHugePageBytes;
  for (const std::size_t n : {std::size_t(1), std::size_t(4096), huge - 1, huge, 3 * huge + 5}) {
    Bytes v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::uint8_t>(i * 7);
    if (n >= huge) CHECK(reinterpret_cast<std::uintptr_t>(v.data()) % huge == 0);
    Bytes w = v;  // a copy and a growth through the threshold keep every byte
    w.resize(n + huge);
    bool same = true;
    for (std::size_t i = 0; i < n; ++i) same = same && w[i] == static_cast<std::uint8_t>(i * 7);
    CHECK(same);
    CHECK(reinterpret_cast<std::uintptr_t>(w.data()) % huge == 0);
  }
}

TEST_CASE("Debian's FashionMNIST (dataset-fashion-mnist) loads with balanced classes") {
  struct stat info {};
  const std::string dir = sgmcmc::data::kFashionMnistDir;
  if (stat((dir + "/t10k-images-idx3-ubyte.gz").c_str(), &info) != 0) {
    MESSAGE("skipped: " << dir << " is absent (Debian package dataset-fashion-mnist)");
    return;
  }
  for (const bool training : {false, true}) {
    const auto r = sgmcmc::data::load_fashion_mnist(dir, training);
    INFO(r.error);
    REQUIRE(r.ok);
    const std::size_t n = training ? 60000 : 10000;
    CHECK(r.images.count == n);
    CHECK(r.images.rows == 28);
    CHECK(r.images.cols == 28);
    CHECK(r.images.pixels.size() == n * 784);
    // 7.8 and 47 MB: in 2 MiB-aligned, huge-page-advised storage (data/huge_pages.hpp).
    CHECK(reinterpret_cast<std::uintptr_t>(r.images.pixels.data()) % sgmcmc::data::kHugePageBytes ==
          0);
    CHECK(r.labels.count == n);
    std::size_t per_class[10] = {};
    for (std::uint8_t y : r.labels.labels) ++per_class[y];
    for (std::size_t c = 0; c < 10; ++c) CHECK(per_class[c] == n / 10);
    std::size_t zeros = 0;
    for (std::uint8_t p : r.images.pixels) zeros += p == 0;
    // FashionMNIST is about half background (measured 0.502 on the training set).
    CHECK(double(zeros) / double(r.images.pixels.size()) == doctest::Approx(0.5).epsilon(0.05));
  }
}
