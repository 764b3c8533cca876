// SPDX-License-Identifier: MIT
// Host-only strict loader for IDX files of unsigned bytes (MNIST, FashionMNIST), raw or gzip.
#pragma once

// Never thrown from: everything returns a result with ok/error, so it builds and runs under
// -fno-exceptions (an out-of-memory std::bad_alloc then terminates, as anywhere else).
//
// Accepted format (LeCun's IDX; only the unsigned-byte type), checked strictly:
//   * bytes 0-1 are zero, byte 2 is the type code 0x08 (unsigned byte), byte 3 the number of
//     dimensions: 3 for images (count, rows, cols), 1 for labels (count);
//   * the dimensions follow as big-endian 32-bit words; each is at least 1, and the data
//     (their product, in bytes) is at most kMaxIdxBytes;
//   * exactly that many data bytes follow the header: a shorter stream is truncated, a longer one
//     has trailing bytes, and both are errors;
//   * a label is a class in 0..num_classes-1;
//   * a file that starts with the gzip magic 1f 8b is one gzip member (RFC 1952) inflated by
//     zlib, whose CRC-32 and length must check; bytes after that member are an error. Any other
//     file is read as raw IDX.
// Error messages read "<name>: byte <offset>: <what>", the offset counted in the IDX stream
// (after decompression; for a raw file the file offset); a fault of the gzip layer reads
// "<name>: gzip byte <offset>: <what>", the offset in the compressed file where zlib stopped.
// File-level errors (cannot open, read error, file too large) read "<name>: <what>". On error
// the result holds no data: counts are 0 and the vectors empty.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "data/huge_pages.hpp"

namespace sgmcmc::data {

/// Largest accepted IDX data section and largest accepted file: 1 GiB.
inline constexpr std::size_t kMaxIdxBytes = std::size_t(1) << 30;

/// Images of rows × cols unsigned-byte pixels, stored image after image, each row-major.
struct IdxImages {
  std::size_t count = 0;  ///< number of images
  std::size_t rows = 0;   ///< pixel rows per image
  std::size_t cols = 0;   ///< pixel columns per image
  /// count · rows · cols bytes; in huge pages where the system has them (data/huge_pages.hpp):
  /// a minibatch reads images at random, one TLB miss per image with 4 KiB pages.
  std::vector<std::uint8_t, HugePageAllocator<std::uint8_t>> pixels;

  /// Bytes per image, rows · cols.
  std::size_t image_size() const noexcept { return rows * cols; }
  /// First pixel of image i (i < count).
  const std::uint8_t* image(std::size_t i) const noexcept {
    return pixels.data() + i * image_size();
  }
};

/// Class labels, one byte each.
struct IdxLabels {
  std::size_t count = 0;             ///< number of labels
  std::vector<std::uint8_t> labels;  ///< count classes, each < the num_classes it was loaded with
};

/// Outcome of loading images: ok and an empty error, or not ok, one message and no data.
struct IdxImagesResult {
  bool ok = false;
  std::string error;
  IdxImages data;
};

/// Outcome of loading labels: ok and an empty error, or not ok, one message and no data.
struct IdxLabelsResult {
  bool ok = false;
  std::string error;
  IdxLabels data;
};

/// Outcome of loading an image file and its label file: both or nothing.
struct IdxPairResult {
  bool ok = false;
  std::string error;
  IdxImages images;
  IdxLabels labels;
};

/// Parses an image file's bytes (raw or gzip). `name` prefixes messages; expected_rows and
/// expected_cols, when not 0, are required values of the two image dimensions.
IdxImagesResult parse_idx_images(std::string_view bytes, std::string_view name,
                                 std::size_t expected_rows = 0, std::size_t expected_cols = 0);

/// Parses a label file's bytes (raw or gzip); every label must be below num_classes (1..256).
IdxLabelsResult parse_idx_labels(std::string_view bytes, std::string_view name,
                                 unsigned num_classes = 10);

/// Reads and parses the image file at `path`; messages name the file's base name.
IdxImagesResult load_idx_images(const std::string& path, std::size_t expected_rows = 0,
                                std::size_t expected_cols = 0);

/// Reads and parses the label file at `path`; messages name the file's base name.
IdxLabelsResult load_idx_labels(const std::string& path, unsigned num_classes = 10);

/// Loads images and labels and checks that they hold the same number of items (a mismatch is
/// reported against the label file's count, byte 4).
IdxPairResult load_idx_pair(const std::string& images_path, const std::string& labels_path,
                            std::size_t expected_rows = 0, std::size_t expected_cols = 0,
                            unsigned num_classes = 10);

/// FashionMNIST from a directory holding Debian's dataset-fashion-mnist files: the training set
/// (train-*-ubyte.gz, 60000 items) or the test set (t10k-*-ubyte.gz, 10000), 28 × 28, 10 classes.
IdxPairResult load_fashion_mnist(const std::string& directory, bool training);

/// Where Debian's package dataset-fashion-mnist installs the four files.
inline constexpr const char* kFashionMnistDir = "/usr/share/datasets/fashion-mnist";

}  // namespace sgmcmc::data
