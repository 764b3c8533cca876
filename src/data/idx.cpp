// SPDX-License-Identifier: MIT
// Strict IDX loader for unsigned-byte images and labels, raw or gzip through zlib (see idx.hpp).
#include "data/idx.hpp"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <utility>

namespace sgmcmc::data {
namespace {

// The decompressed IDX stream of a file's bytes: the bytes themselves, or one gzip member
// inflated on demand. A gzip fault stops the stream and is kept as "gzip byte K: what".
class IdxStream {
 public:
  explicit IdxStream(std::string_view bytes) : bytes_(bytes) {
    gzip_ = bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
            static_cast<unsigned char>(bytes[1]) == 0x8b;
    if (!gzip_) return;
    zs_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
    zs_.avail_in = static_cast<uInt>(bytes.size());    // at most kMaxIdxBytes
    if (inflateInit2(&zs_, 16 + MAX_WBITS) != Z_OK) {  // 16 +: gzip wrapper only
      fail("zlib could not start (out of memory)");
    } else {
      inflating_ = true;
    }
  }
  ~IdxStream() {
    if (inflating_) inflateEnd(&zs_);
  }
  IdxStream(const IdxStream&) = delete;
  IdxStream& operator=(const IdxStream&) = delete;

  // Copies up to n next bytes of the stream to dst and returns how many; fewer than n means the
  // stream ended or failed().
  std::size_t read(std::uint8_t* dst, std::size_t n) {
    if (!gzip_) {
      const std::size_t got = std::min(n, bytes_.size() - position_);
      std::copy_n(bytes_.data() + position_, got, reinterpret_cast<char*>(dst));
      position_ += got;
      return got;
    }
    std::size_t got = 0;
    while (got < n && !ended_ && fault_.empty()) {
      const std::size_t want = std::min<std::size_t>(n - got, std::size_t(1) << 30);
      zs_.next_out = dst + got;
      zs_.avail_out = static_cast<uInt>(want);
      const int rc = inflate(&zs_, Z_NO_FLUSH);
      got += want - zs_.avail_out;
      if (rc == Z_STREAM_END) {
        ended_ = true;
        if (zs_.avail_in != 0) {
          fail(std::to_string(zs_.avail_in) + " bytes after the end of the gzip stream");
        }
      } else if (rc == Z_BUF_ERROR) {  // no progress: every compressed byte is used
        fail("the compressed data ends before the gzip stream does (truncated file)");
      } else if (rc == Z_DATA_ERROR || rc == Z_NEED_DICT) {
        fail(std::string("corrupt gzip stream (zlib: ") +
             (zs_.msg != nullptr ? zs_.msg : "invalid data") + ")");
      } else if (rc == Z_MEM_ERROR) {
        fail("zlib ran out of memory");
      } else if (rc != Z_OK) {
        fail("zlib error " + std::to_string(rc));
      }
    }
    position_ += got;
    return got;
  }

  // Reads the stream to its end and returns how many bytes that was.
  std::size_t drain() {
    std::array<std::uint8_t, 1 << 16> sink;
    std::size_t total = 0;
    for (;;) {
      const std::size_t got = read(sink.data(), sink.size());
      total += got;
      if (got < sink.size()) return total;
    }
  }

  // Bytes of the IDX stream delivered so far.
  std::size_t position() const noexcept { return position_; }
  // Empty, or the gzip fault that stopped the stream: "gzip byte K: what".
  const std::string& fault() const noexcept { return fault_; }

 private:
  void fail(const std::string& what) {
    fault_ = "gzip byte " + std::to_string(zs_.total_in) + ": " + what;
  }

  std::string_view bytes_;
  bool gzip_ = false;
  bool inflating_ = false;
  bool ended_ = false;
  std::size_t position_ = 0;
  z_stream zs_{};
  std::string fault_;
};

std::string hex(unsigned value, int digits) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out = "0x";
  for (int i = digits - 1; i >= 0; --i) out += kDigits[(value >> (4 * i)) & 15];
  return out;
}

const char* type_name(unsigned code) {
  switch (code) {
    case 0x08:
      return "unsigned byte";
    case 0x09:
      return "signed byte";
    case 0x0B:
      return "16-bit integer";
    case 0x0C:
      return "32-bit integer";
    case 0x0D:
      return "32-bit float";
    case 0x0E:
      return "64-bit double";
    default:
      return "no IDX type";
  }
}

std::uint32_t big_endian(const std::uint8_t* p) noexcept {
  return (std::uint32_t(p[0]) << 24) | (std::uint32_t(p[1]) << 16) | (std::uint32_t(p[2]) << 8) |
         std::uint32_t(p[3]);
}

std::string at(std::string_view name, std::size_t offset, const std::string& what) {
  return std::string(name) + ": byte " + std::to_string(offset) + ": " + what;
}

// What the header must hold for one kind of file.
struct Layout {
  unsigned dims;             // number of dimensions, 1 or 3
  std::size_t expected[3];   // required dimension values, 0 = any
  const char* dim_names[3];  // for messages
  const char* item;          // "image" or "label"
};

// Reads and checks the header and data of one IDX stream; on success `data` holds the data
// section and `dims` the dimensions. Returns an empty string or the first fault in stream order.
template <class Bytes>
std::string read_idx(std::string_view bytes, std::string_view name, const Layout& layout,
                     unsigned num_classes, std::uint32_t (&dims)[3], Bytes& data) {
  if (bytes.size() > kMaxIdxBytes) return std::string(name) + ": input larger than 1 GiB";
  IdxStream s(bytes);
  const std::size_t header_size = 4 + 4 * std::size_t(layout.dims);
  std::uint8_t header[16] = {};
  const std::size_t got = s.read(header, header_size);

  if ((got > 0 && header[0] != 0) || (got > 1 && header[1] != 0)) {
    const unsigned first = got > 1 ? (unsigned(header[0]) << 8) | header[1] : header[0];
    return at(
        name, 0,
        "magic number starts " + hex(first, got > 1 ? 4 : 2) + ", not 0x0000 (not an IDX file)");
  }
  if (got > 2 && header[2] != 0x08) {
    return at(name, 2,
              "data type " + hex(header[2], 2) + " (" + type_name(header[2]) +
                  ") is not 0x08 (unsigned byte)");
  }
  if (got > 3 && header[3] != layout.dims) {
    return at(name, 3,
              std::to_string(header[3]) + " dimensions, expected " + std::to_string(layout.dims) +
                  " for " + layout.item + "s");
  }
  for (unsigned d = 0; d < layout.dims; ++d) {
    const std::size_t offset = 4 + 4 * std::size_t(d);
    if (got < offset + 4) break;
    dims[d] = big_endian(header + offset);
    if (dims[d] == 0) return at(name, offset, std::string(layout.dim_names[d]) + " is 0");
    if (layout.expected[d] != 0 && dims[d] != layout.expected[d]) {
      return at(name, offset,
                std::string(layout.dim_names[d]) + " is " + std::to_string(dims[d]) +
                    ", expected " + std::to_string(layout.expected[d]));
    }
  }
  if (got < header_size) {
    if (!s.fault().empty()) return std::string(name) + ": " + s.fault();
    return at(name, got,
              "the stream ends inside the " + std::to_string(header_size) + "-byte IDX header");
  }

  std::uint64_t size = 1;  // each factor < 2^32 and the running product <= 2^30: no overflow
  for (unsigned d = 0; d < layout.dims; ++d) {
    size *= dims[d];
    if (size > kMaxIdxBytes) {
      std::string shape = std::to_string(dims[0]) + " " + layout.item + "s";
      if (layout.dims == 3) {
        shape += " of " + std::to_string(dims[1]) + " x " + std::to_string(dims[2]) + " bytes";
      }
      return at(name, 4, shape + " exceed the 1 GiB limit");
    }
  }
  const std::size_t item_size = static_cast<std::size_t>(size) / dims[0];

  // The buffer grows with the data that arrives (doubling from 64 KiB), so a short file whose
  // header announces 1 GiB costs what the file holds, not 1 GiB.
  const auto announced = static_cast<std::size_t>(size);
  Bytes body;
  std::size_t body_got = 0;
  while (body_got < announced) {
    const std::size_t chunk =
        std::min(announced - body_got, std::max(body_got, std::size_t(1) << 16));
    body.resize(body_got + chunk);
    const std::size_t got = s.read(body.data() + body_got, chunk);
    body_got += got;
    if (got < chunk) break;
  }
  for (std::size_t i = 0; num_classes < 256 && i < body_got; ++i) {
    if (body[i] >= num_classes) {
      return at(name, header_size + i,
                "label " + std::to_string(body[i]) + " of item " + std::to_string(i) +
                    " is not a class in 0.." + std::to_string(num_classes - 1));
    }
  }
  if (body_got < announced) {
    if (!s.fault().empty()) return std::string(name) + ": " + s.fault();
    return at(name, header_size + body_got,
              "the stream ends inside " + std::string(layout.item) + " " +
                  std::to_string(body_got / item_size) + " of " + std::to_string(dims[0]) +
                  " (the header announces " + std::to_string(header_size + announced) + " bytes)");
  }
  const std::size_t extra = s.drain();
  if (!s.fault().empty()) return std::string(name) + ": " + s.fault();
  if (extra > 0) {
    return at(name, header_size + body.size(),
              std::to_string(extra) + " trailing bytes after the last " + layout.item +
                  " (the header announces " + std::to_string(header_size + body.size()) +
                  " bytes)");
  }
  data = std::move(body);
  return {};
}

std::string_view base_name(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? std::string_view(path)
                                    : std::string_view(path).substr(slash + 1);
}

// Reads the whole file at `path` into `out`; returns an empty string or a file-level message.
std::string read_file(const std::string& path, std::string& out) {
  const std::string name(base_name(path));
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return name + ": cannot open " + path;
  std::string error;
  if (std::fseek(f, 0, SEEK_END) != 0) {
    error = name + ": cannot seek in " + path;
  } else {
    const long size = std::ftell(f);
    if (size < 0) {
      error = name + ": cannot tell the size of " + path;
    } else if (static_cast<unsigned long>(size) > kMaxIdxBytes) {
      error = name + ": file larger than 1 GiB";
    } else {
      std::rewind(f);
      out.resize(static_cast<std::size_t>(size));
      if (std::fread(out.data(), 1, out.size(), f) != out.size() || std::ferror(f) != 0) {
        error = name + ": read error on " + path;
        out.clear();
      }
    }
  }
  std::fclose(f);
  return error;
}

}  // namespace

IdxImagesResult parse_idx_images(std::string_view bytes, std::string_view name,
                                 std::size_t expected_rows, std::size_t expected_cols) {
  const Layout layout{
      3, {0, expected_rows, expected_cols}, {"image count", "rows", "columns"}, "image"};
  std::uint32_t dims[3] = {};
  IdxImagesResult r;
  r.error = read_idx(bytes, name, layout, 256, dims, r.data.pixels);
  if (!r.error.empty()) return r;
  r.ok = true;
  r.data.count = dims[0];
  r.data.rows = dims[1];
  r.data.cols = dims[2];
  return r;
}

IdxLabelsResult parse_idx_labels(std::string_view bytes, std::string_view name,
                                 unsigned num_classes) {
  IdxLabelsResult r;
  if (num_classes < 1 || num_classes > 256) {
    r.error =
        std::string(name) + ": num_classes must lie in 1..256, got " + std::to_string(num_classes);
    return r;
  }
  const Layout layout{1, {0, 0, 0}, {"label count", "", ""}, "label"};
  std::uint32_t dims[3] = {};
  r.error = read_idx(bytes, name, layout, num_classes, dims, r.data.labels);
  if (!r.error.empty()) return r;
  r.ok = true;
  r.data.count = dims[0];
  return r;
}

IdxImagesResult load_idx_images(const std::string& path, std::size_t expected_rows,
                                std::size_t expected_cols) {
  std::string bytes;
  IdxImagesResult r;
  r.error = read_file(path, bytes);
  if (!r.error.empty()) return r;
  return parse_idx_images(bytes, base_name(path), expected_rows, expected_cols);
}

IdxLabelsResult load_idx_labels(const std::string& path, unsigned num_classes) {
  std::string bytes;
  IdxLabelsResult r;
  r.error = read_file(path, bytes);
  if (!r.error.empty()) return r;
  return parse_idx_labels(bytes, base_name(path), num_classes);
}

IdxPairResult load_idx_pair(const std::string& images_path, const std::string& labels_path,
                            std::size_t expected_rows, std::size_t expected_cols,
                            unsigned num_classes) {
  IdxPairResult r;
  IdxImagesResult images = load_idx_images(images_path, expected_rows, expected_cols);
  if (!images.ok) {
    r.error = std::move(images.error);
    return r;
  }
  IdxLabelsResult labels = load_idx_labels(labels_path, num_classes);
  if (!labels.ok) {
    r.error = std::move(labels.error);
    return r;
  }
  if (labels.data.count != images.data.count) {
    r.error = at(base_name(labels_path), 4,
                 std::to_string(labels.data.count) + " labels, but " +
                     std::string(base_name(images_path)) + " holds " +
                     std::to_string(images.data.count) + " images");
    return r;
  }
  r.ok = true;
  r.images = std::move(images.data);
  r.labels = std::move(labels.data);
  return r;
}

IdxPairResult load_fashion_mnist(const std::string& directory, bool training) {
  const std::string prefix = directory + (training ? "/train" : "/t10k");
  return load_idx_pair(prefix + "-images-idx3-ubyte.gz", prefix + "-labels-idx1-ubyte.gz", 28, 28,
                       10);
}

}  // namespace sgmcmc::data
