// SPDX-License-Identifier: MIT
// Heap-free minibatch index sampling (epochs of a lazily shuffled permutation) and the model
// adaptor that turns per-example gradients into the minibatch gradient of U (MATH.md §5.3(b)).
#pragma once

// Example: Bayesian logistic regression on N rows, a batch of at most 32 rows per step.
//
//   struct LogReg {                                  // the user's per-example model
//     const double* x; const int* y;                 // row-major features, 0/1 labels
//     template <class S, int D>                      // adds -grad log p(y_i | x_i, theta)
//     void add_gradient(std::uint32_t i, const sgmcmc::Vector<S, D>& th,
//                       sgmcmc::Vector<S, D>& acc) const noexcept {
//       Eigen::Map<const Eigen::Matrix<double, D, 1>> xi(x + std::size_t(i) * D);
//       const S p = S(1) / (S(1) + std::exp(-xi.template cast<S>().dot(th)));
//       acc += (p - S(y[i])) * xi.template cast<S>();
//     }
//     template <class S, int D>                      // adds -grad log p(theta): N(0, 100 I)
//     void add_prior_gradient(const sgmcmc::Vector<S, D>& th,
//                             sgmcmc::Vector<S, D>& acc) const noexcept { acc += th / S(100); }
//   };
//
//   static std::uint32_t order[N];                   // caller-owned, N entries
//   sgmcmc::MinibatchSampler<32> batches(order, N, 32);
//   sgmcmc::MinibatchGradient<LogReg, 32> model(LogReg{x, y}, N);
//   for (...) {
//     if (batches.next(rng, model.batch()) != sgmcmc::StatusCode::Ok) break;  // failed RNG
//     sampler.step(z, model, rng);                   // model.gradient(theta, g) uses them
//   }

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <utility>

#include "sgmcmc/core/status.hpp"
#include "sgmcmc/core/types.hpp"
#include "sgmcmc/port/rng.hpp"

namespace sgmcmc {

/// Cap on the rejections of one uniform_below draw. A word is rejected with probability
/// (2^32 mod bound) / 2^32, which is below 1/2 for every bound (below bound / 2^32 in general), so
/// with a good RNG all 1 + kMaxIndexRejections words of a draw are rejected with probability below
/// 2^-65 (below 2^-1040 for bound <= 2^16). Reaching it means the RNG is stuck, e.g. an all-zero
/// word stream with a bound that is not a power of two, which would otherwise loop forever.
inline constexpr int kMaxIndexRejections = 64;

/// Uniform integer in [0, bound) into `out`, from the top 32 bits of the RNG's 64-bit words,
/// without modulo bias: Lemire's multiply-shift with rejection (Lemire 2019, "Fast random integer
/// generation in an interval"). Expected words per draw < 1 + bound / 2^32, at most
/// 1 + kMaxIndexRejections. Returns InvalidParameter for bound = 0 (no word drawn) and CapReached
/// when the cap is reached; `out` is written only on Ok. A single draw cannot tell a stuck RNG
/// that gives accepted words (e.g. all ones) from a good one: MinibatchSampler::next also watches
/// for repeated words.
template <class Rng>
Status uniform_below(Rng& rng, std::uint32_t bound, std::uint32_t& out) noexcept {
  check_rng<Rng>();
  if (bound == 0) return StatusCode::InvalidParameter;
  std::uint64_t m = (rng() >> 32) * std::uint64_t(bound);
  auto low = static_cast<std::uint32_t>(m);
  if (low < bound) {
    const std::uint32_t threshold = (0u - bound) % bound;  // 2^32 mod bound
    for (int rejections = 0; low < threshold; ++rejections) {
      if (rejections == kMaxIndexRejections) return StatusCode::CapReached;
      m = (rng() >> 32) * std::uint64_t(bound);
      low = static_cast<std::uint32_t>(m);
    }
  }
  out = static_cast<std::uint32_t>(m >> 32);
  return StatusCode::Ok;
}

namespace detail {

// Passes an RNG's words through and records whether two consecutive words were equal: the
// repetition count test of NIST SP 800-90B §4.4.1 with cutoff 2, its cutoff for full-entropy
// 64-bit words. A good RNG repeats a word with probability 2^-64 per pair; a stuck one (all
// zeros, all ones, any constant) does at its second word.
template <class Rng>
struct RepetitionWatch {
  using result_type = std::uint64_t;
  static constexpr result_type min() noexcept { return 0; }
  static constexpr result_type max() noexcept { return ~result_type(0); }

  Rng& rng;
  std::uint64_t last;
  bool have_last;
  bool repeated = false;

  result_type operator()() noexcept {
    const std::uint64_t word = rng();
    repeated = repeated || (have_last && word == last);
    last = word;
    have_last = true;
    return word;
  }
};

/// True when rows[0, count) are strictly increasing and all below `bound` (a census list); false
/// for a null list with count > 0.
inline bool increasing_below(const std::uint32_t* rows, std::size_t count,
                             std::size_t bound) noexcept {
  if (count > 0 && rows == nullptr) return false;
  for (std::size_t c = 0; c < count; ++c) {
    if (rows[c] >= bound || (c > 0 && rows[c] <= rows[c - 1])) return false;
  }
  return true;
}

}  // namespace detail

/// A minibatch: up to Capacity row indices, distinct, in a fixed-capacity array.
template <int Capacity>
struct IndexBatch {
  static_assert(Capacity >= 1, "sgmcmc: an IndexBatch needs Capacity >= 1");
  std::array<std::uint32_t, Capacity> index{};  ///< the rows; entries [0, size) are valid
  std::size_t size = 0;                         ///< number of rows in the batch

  /// Row k of the batch, k < size.
  std::uint32_t operator[](std::size_t k) const noexcept { return index[k]; }
  /// Iteration over the valid entries.
  const std::uint32_t* begin() const noexcept { return index.data(); }
  const std::uint32_t* end() const noexcept { return index.data() + size; }
};

/// Draws minibatches of `batch_size` distinct rows out of `n_rows`, epoch after epoch.
///
/// The caller owns an index buffer of n_rows entries; the sampler keeps a permutation of
/// 0..n_rows-1 in it and, for each batch, extends a Fisher-Yates shuffle by batch_size positions
/// (O(batch_size) time and RNG draws per batch, no heap). Consequences:
///   * no row appears twice in a batch;
///   * within one epoch the batches are disjoint; an epoch ends when fewer than batch_size rows
///     remain unused, so when batch_size divides n_rows every row appears exactly once per epoch,
///     and otherwise the n_rows mod batch_size left-over rows of each epoch are a uniformly random
///     set (they are simply not used in that epoch);
///   * every batch, on its own, is a uniformly random batch_size-subset of all rows, which is
///     what makes the minibatch gradient unbiased (MATH.md §5.3(b)).
/// The buffer contents are the sampler's state: do not modify it while the sampler is in use.
template <int Capacity>
class MinibatchSampler {
 public:
  static_assert(Capacity >= 1, "sgmcmc: MinibatchSampler needs Capacity >= 1");
  using Batch = IndexBatch<Capacity>;

  /// Takes the caller's buffer `indices` of n_rows entries and fills it with 0..n_rows-1.
  /// Check valid() afterwards: it fails for a null buffer, n_rows = 0 or >= 2^32, or a
  /// batch_size outside [1, min(Capacity, n_rows)]; next() on an invalid sampler returns
  /// InvalidParameter and an empty batch.
  MinibatchSampler(std::uint32_t* indices, std::size_t n_rows, std::size_t batch_size) noexcept
      : MinibatchSampler(indices, n_rows, batch_size, nullptr, 0) {}

  /// Batches from the rows of 0..n_rows-1 that are not in `excluded` (a census stratum,
  /// ControlVariateGradient::set_census: `count` indices in strictly increasing order, all below
  /// n_rows, count < n_rows). `indices` holds n_rows − count entries and is filled with the other
  /// rows; rows() and scale() then count those N − k rows. valid() also fails for an excluded list
  /// that breaks these rules, or a batch_size above n_rows − count.
  MinibatchSampler(std::uint32_t* indices, std::size_t n_rows, std::size_t batch_size,
                   const std::uint32_t* excluded, std::size_t count) noexcept
      : indices_(indices), n_rows_(count < n_rows ? n_rows - count : 0), batch_size_(batch_size) {
    valid_ = indices != nullptr && n_rows_ >= 1 &&
             n_rows <= std::numeric_limits<std::uint32_t>::max() && batch_size >= 1 &&
             batch_size <= std::size_t(Capacity) && batch_size <= n_rows_ &&
             detail::increasing_below(excluded, count, n_rows);
    if (!valid_) return;
    std::size_t c = 0, k = 0;
    for (std::size_t i = 0; i < n_rows; ++i) {
      if (c < count && excluded[c] == i) {
        ++c;
      } else {
        indices_[k++] = static_cast<std::uint32_t>(i);
      }
    }
  }

  /// True when the constructor's arguments were usable.
  bool valid() const noexcept { return valid_; }

  /// Writes the next batch into `out`. Returns Ok with out.size = batch_size; otherwise
  /// out.size = 0 and the sampler (permutation, position, epoch) is unchanged: InvalidParameter
  /// when !valid(), CapReached when a draw reaches kMaxIndexRejections or the RNG gives the same
  /// 64-bit word twice in a row (watched across calls, so a constant RNG fails from its second
  /// word on; a good RNG does so with probability 2^-64 per word). An empty batch makes the
  /// minibatch gradient NaN, so a step that ignores the code fails too (NonFiniteGradient). The
  /// code is a plain StatusCode, not the [[nodiscard]] Status, so callers may rely on that alone.
  template <class Rng>
  StatusCode next(Rng& rng, Batch& out) noexcept {
    check_rng<Rng>();
    out.size = 0;
    if (!valid_) return StatusCode::InvalidParameter;
    const bool new_epoch = position_ + batch_size_ > n_rows_;  // too few unused rows left
    const std::size_t start = new_epoch ? 0 : position_;
    // Draw every swap offset first (into out.index), and touch the permutation only once all of
    // them succeeded. The offsets do not depend on the permutation, so the draws are the same.
    // The bounds in locals: the RNG's state words have the type of these members, so the
    // compiler would otherwise reload both after every word and keep the state in memory.
    const std::size_t n = batch_size_;
    const std::size_t left = n_rows_ - start;
    detail::RepetitionWatch<Rng> watched{rng, last_word_, have_word_};
    Status drawn = StatusCode::Ok;
    for (std::size_t k = 0; k < n && drawn; ++k) {
      drawn = uniform_below(watched, static_cast<std::uint32_t>(left - k), out.index[k]);
      if (watched.repeated) drawn = StatusCode::CapReached;
    }
    last_word_ = watched.last;
    have_word_ = watched.have_last;
    if (!drawn) return drawn.code;
    for (std::size_t k = 0; k < n; ++k) {
      const std::size_t i = start + k;
      const std::size_t j = i + out.index[k];
      std::swap(indices_[i], indices_[j]);
      out.index[k] = indices_[i];
    }
    out.size = n;
    position_ = start + n;
    if (new_epoch) ++epoch_;
    return StatusCode::Ok;
  }

  /// The next batch, returned by value: size 0 on any failure (see next(rng, out)).
  template <class Rng>
  Batch next(Rng& rng) noexcept {
    Batch b;
    (void)next(rng, b);
    return b;
  }

  /// N / n, the factor that makes a batch sum an unbiased estimate of the full sum.
  template <class Scalar>
  Scalar scale() const noexcept {
    return Scalar(n_rows_) / Scalar(batch_size_);
  }

  /// Number of rows N the batches are drawn from (N − k with an excluded list).
  std::size_t rows() const noexcept { return n_rows_; }
  /// Batch size n.
  std::size_t batch_size() const noexcept { return batch_size_; }
  /// Number of completed epochs (starts at 0; counts up when a batch starts a new epoch).
  std::uint64_t epoch() const noexcept { return epoch_; }

 private:
  std::uint32_t* indices_;
  std::size_t n_rows_;
  std::size_t batch_size_;
  std::size_t position_ = 0;
  std::uint64_t epoch_ = 0;
  std::uint64_t last_word_ = 0;  // the RNG's last word seen by next(), for the repetition test
  bool have_word_ = false;
  bool valid_ = false;
};

/// The `count` rows of largest score[i], i < n_rows, written to out[0, count) in increasing
/// order of index (ties: the lower index first) — e.g. the census rows of
/// ControlVariateGradient::set_census by leverage. O(n_rows log count) time, no heap: `out` is the
/// workspace. InvalidParameter (out untouched) for count = 0 or > n_rows, n_rows ≥ 2³², a null
/// pointer, or a score that is NaN.
template <class Scalar>
Status largest_rows(const Scalar* score, std::size_t n_rows, std::size_t count,
                    std::uint32_t* out) noexcept {
  if (score == nullptr || out == nullptr || count == 0 || count > n_rows ||
      n_rows > std::numeric_limits<std::uint32_t>::max()) {
    return StatusCode::InvalidParameter;
  }
  for (std::size_t i = 0; i < n_rows; ++i) {
    if (!(score[i] == score[i])) return StatusCode::InvalidParameter;
  }
  // A heap of the best `count` rows so far with the weakest at the front.
  auto stronger = [score](std::uint32_t a, std::uint32_t b) {
    return score[a] > score[b] || (score[a] == score[b] && a < b);
  };
  for (std::size_t i = 0; i < n_rows; ++i) {
    const auto row = static_cast<std::uint32_t>(i);
    if (i < count) {
      out[i] = row;
      std::push_heap(out, out + i + 1, stronger);
    } else if (stronger(row, out[0])) {  // beats the weakest kept row
      std::pop_heap(out, out + count, stronger);
      out[count - 1] = row;
      std::push_heap(out, out + count, stronger);
    }
  }
  std::sort(out, out + count);
  return StatusCode::Ok;
}

/// The minibatch gradient of U (MATH.md §5.3(b)) from a per-example model:
///   grad U~(theta) = (N / n) * sum_{i in batch} (-grad log p(x_i | theta)) - grad log p(theta).
/// PerExample must provide, for the Eigen types of theta and out (Vector<Scalar, D>, or the maps
/// the samplers pass: write the hooks as templates, as LogisticRegression does),
///   void add_gradient(std::uint32_t i, const Theta& theta, Out& acc) const noexcept;
///                                            // acc += -grad log p(x_i | theta)
///   void add_prior_gradient(const Theta& theta, Out& acc) const noexcept;
///                                            // acc += -grad log p(theta)
/// An empty batch has no unbiased estimate: `out` is then filled with quiet NaN, which a
/// sampler's non-finite-gradient check rejects (leaving its state unchanged).
template <class PerExample, int Capacity, class Theta, class Out>
void minibatch_gradient(const PerExample& model, const IndexBatch<Capacity>& batch,
                        std::size_t n_rows, const Theta& theta, Out& out) noexcept {
  using Scalar = typename Out::Scalar;
  if (batch.size == 0) {
    out.setConstant(std::numeric_limits<Scalar>::quiet_NaN());
    return;
  }
  out.setZero();
  for (const std::uint32_t i : batch) model.add_gradient(i, theta, out);
  out *= Scalar(n_rows) / Scalar(batch.size);
  model.add_prior_gradient(theta, out);
}

/// Model adaptor: holds the per-example model, N and the current batch, and offers the
/// `gradient(theta, out)` every sampler calls. Fill batch() (e.g. with MinibatchSampler::next)
/// before each step; all gradient calls of that step then use the same rows.
template <class PerExample, int Capacity>
class MinibatchGradient {
 public:
  /// Wraps `model` (copied) for a data set of n_rows rows.
  MinibatchGradient(const PerExample& model, std::size_t n_rows) noexcept
      : model_(model), n_rows_(n_rows) {}

  /// The batch the next gradient calls use.
  IndexBatch<Capacity>& batch() noexcept { return batch_; }
  const IndexBatch<Capacity>& batch() const noexcept { return batch_; }

  /// The wrapped per-example model.
  const PerExample& model() const noexcept { return model_; }
  /// Number of rows N.
  std::size_t rows() const noexcept { return n_rows_; }

  /// out = grad U~(theta) on the current batch (see minibatch_gradient). With the samplers'
  /// maps when PerExample's hooks take them (any size, no copy); otherwise, for per-example
  /// models written for Vector<Scalar, D>, the engine copies θ (small d: core/model.hpp).
  template <class Theta, class Out>
  auto gradient(const Theta& theta, Out& out) const noexcept
      -> decltype(std::declval<const PerExample&>().add_gradient(std::uint32_t{}, theta, out),
                  std::declval<const PerExample&>().add_prior_gradient(theta, out), void()) {
    minibatch_gradient(model_, batch_, n_rows_, theta, out);
  }
  template <class Scalar, int D>
  void gradient(const Vector<Scalar, D>& theta, Vector<Scalar, D>& out) const noexcept {
    minibatch_gradient(model_, batch_, n_rows_, theta, out);
  }

 private:
  PerExample model_;
  std::size_t n_rows_;
  IndexBatch<Capacity> batch_;
};

}  // namespace sgmcmc
