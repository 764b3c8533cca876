// SPDX-License-Identifier: MIT
// libFuzzer target: the strict IDX loader on arbitrary bytes, raw and gzip-wrapped, checking its
// promises (message format, nothing partial, shapes) and that gzip never changes the verdict.
#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "data/idx.hpp"

namespace {

void require(bool condition, const char* what) {
  if (!condition) {
    std::fprintf(stderr, "fuzz_idx: invariant violated: %s\n", what);
    std::abort();
  }
}

// One gzip member holding `raw`.
std::string gzip(std::string_view raw) {
  z_stream zs{};
  require(deflateInit2(&zs, 1, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) == Z_OK,
          "deflateInit2");
  std::string out(deflateBound(&zs, static_cast<uLong>(raw.size())) + 64, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(raw.data()));
  zs.avail_in = static_cast<uInt>(raw.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  require(deflate(&zs, Z_FINISH) == Z_STREAM_END, "deflate finishes");
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

// "fuzz.idx: byte N: what" or "fuzz.idx: gzip byte N: what", N decimal, what non-empty.
void check_message(const std::string& error) {
  const std::string prefix = "fuzz.idx: ";
  require(error.rfind(prefix, 0) == 0, "message starts with the name");
  std::size_t p = prefix.size();
  if (error.compare(p, 5, "gzip ") == 0) p += 5;
  require(error.compare(p, 5, "byte ") == 0, "message gives a byte offset");
  p += 5;
  const std::size_t digits = error.find_first_not_of("0123456789", p);
  require(digits != std::string::npos && digits > p, "offset is a number");
  require(error.compare(digits, 2, ": ") == 0 && error.size() > digits + 2,
          "offset is followed by what went wrong");
}

// The IDX bytes that describe these images (type 0x08, 3 dimensions).
std::string serialise(const sgmcmc::data::IdxImages& d) {
  std::string s("\0\0\x08\x03", 4);
  for (std::size_t v : {d.count, d.rows, d.cols}) {
    for (int shift = 24; shift >= 0; shift -= 8) s += static_cast<char>((v >> shift) & 0xff);
  }
  return s + std::string(d.pixels.begin(), d.pixels.end());
}

void check_images(std::string_view bytes, bool raw) {
  const auto r = sgmcmc::data::parse_idx_images(bytes, "fuzz.idx");
  if (!r.ok) {
    check_message(r.error);
    require(r.data.count == 0 && r.data.rows == 0 && r.data.cols == 0 && r.data.pixels.empty(),
            "a rejected image file returns nothing partial");
  } else {
    require(r.error.empty(), "success has no message");
    require(r.data.count >= 1 && r.data.rows >= 1 && r.data.cols >= 1, "dimensions >= 1");
    require(r.data.pixels.size() == r.data.count * r.data.rows * r.data.cols,
            "pixels hold count * rows * cols bytes");
    if (raw) require(serialise(r.data) == bytes, "an accepted raw file is exactly its data");
  }
  if (!raw) return;
  const auto z = sgmcmc::data::parse_idx_images(gzip(bytes), "fuzz.idx");
  require(z.ok == r.ok && z.data.pixels == r.data.pixels, "gzip gives the same images");
  // Offsets count the decompressed stream, so a fault of the IDX layer reads the same.
  require(z.error == r.error, "gzip gives the same message");
}

void check_labels(std::string_view bytes, bool raw) {
  const auto r = sgmcmc::data::parse_idx_labels(bytes, "fuzz.idx", 10);
  if (!r.ok) {
    check_message(r.error);
    require(r.data.count == 0 && r.data.labels.empty(),
            "a rejected label file returns nothing partial");
  } else {
    require(r.data.count >= 1 && r.data.labels.size() == r.data.count, "count labels");
    for (std::uint8_t y : r.data.labels) require(y < 10, "labels are classes 0..9");
  }
  if (!raw) return;
  const auto z = sgmcmc::data::parse_idx_labels(gzip(bytes), "fuzz.idx", 10);
  require(z.ok == r.ok && z.data.labels == r.data.labels && z.error == r.error,
          "gzip gives the same labels and message");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const bool raw = size < 2 || data[0] != 0x1f || data[1] != 0x8b;
  check_images(bytes, raw);
  check_labels(bytes, raw);
  return 0;
}
