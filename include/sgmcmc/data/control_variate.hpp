// SPDX-License-Identifier: MIT
// Control-variate minibatch gradients (SGLD-CV / SGHMC-CV, Baker, Fearnhead, Fox & Nemeth 2019):
// the full-data gradient at a fixed reference point plus the minibatch estimate of the change
// since then. Same per-example model concept as MinibatchGradient; heap-free.
#pragma once

// With a_i(θ) = −∇log p(x_i | θ) (per-example gradient), a reference point θ̂ and its full-data
// sum ĝ = Σ_{i=1}^N a_i(θ̂), computed once by set_reference, each step's gradient on a batch S of
// n rows drawn without replacement is
//   ∇Ũ(θ) = ĝ + (N/n) Σ_{i∈S} [a_i(θ) − a_i(θ̂)] − ∇log p(θ),
// unbiased for ∇U(θ) for any θ̂. Its noise is that of MinibatchGradient with a_i replaced by the
// differences d_i = a_i(θ) − a_i(θ̂) (MATH.md §5.3(b)): V = N(N − n)/n · S²_d, which vanishes at
// θ = θ̂ and grows like ‖θ − θ̂‖² for smooth a_i. Near a posterior mode θ̂ and at posterior scale it
// is smaller than the plain minibatch noise by about d / N for logistic regression (leverage
// averages d/N), which is what makes small batches accurate. Each step costs 2n per-example
// gradients (at θ and at θ̂) instead of n.
//
// A per-example model may also provide
//   void add_gradient_difference(std::uint32_t i, const Theta& θ, const Ref& θ̂, Out& acc) const;
//                                                       // acc += a_i(θ) − a_i(θ̂)
// for a cheaper difference (a generalised linear model needs one axpy instead of two); it is used
// when present. A model may also offer a per-row cache of the reference,
//   Scalar reference_term(std::uint32_t i, const Ref& θ̂) const;   // e.g. σ(x_iᵀθ̂) for a GLM
//   void add_cached_difference(std::uint32_t i, const Theta& θ, Scalar term, Out& acc) const;
//                                                       // acc += a_i(θ) − a_i(θ̂), term as above
//   void add_cached_differences(const std::uint32_t* first, const std::uint32_t* last,
//                               const Theta& θ, const Scalar* cache, Out& acc) const;
//                                  // optional: the same over rows [first, last), cache[i] = term
// and, given caller memory for one scalar per row (set_row_cache), the adaptor fills the cache in
// set_reference and each difference then costs what one plain per-example gradient costs.
//
// Gradient-noise estimate: with set_noise_estimator(&est), every gradient() call feeds the batch's
// d_i to a GradientNoiseEstimator (data/gradient_noise.hpp), which then estimates the diagonal of
// the CV gradient's own noise (the estimate the samplers' V̂ correction and the step-size rules
// want), instead of the plain minibatch noise.

#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>

#include "sgmcmc/core/status.hpp"
#include "sgmcmc/core/types.hpp"
#include "sgmcmc/data/gradient_noise.hpp"
#include "sgmcmc/data/minibatch.hpp"

namespace sgmcmc {

namespace detail {
/// Does the per-example model offer add_gradient_difference(i, θ, θ̂, acc)?
template <class M, class Theta, class Ref, class Out, class = void>
struct HasGradientDifference : std::false_type {};
template <class M, class Theta, class Ref, class Out>
struct HasGradientDifference<M, Theta, Ref, Out,
                             std::void_t<decltype(std::declval<const M&>().add_gradient_difference(
                                 std::uint32_t{}, std::declval<const Theta&>(),
                                 std::declval<const Ref&>(), std::declval<Out&>()))>>
    : std::true_type {};

/// Does the per-example model offer reference_term(i, θ̂) (a scalar per row, convertible to
/// Scalar)?
template <class M, class Scalar, class Ref, class = void>
struct HasReferenceTerm : std::false_type {};
template <class M, class Scalar, class Ref>
struct HasReferenceTerm<M, Scalar, Ref,
                        std::void_t<decltype(Scalar(std::declval<const M&>().reference_term(
                            std::uint32_t{}, std::declval<const Ref&>())))>> : std::true_type {};

/// Does it also offer add_cached_difference(i, θ, term, acc)?
template <class M, class Scalar, class Theta, class Ref, class Out, class = void>
struct HasCachedDifference : std::false_type {};
template <class M, class Scalar, class Theta, class Ref, class Out>
struct HasCachedDifference<
    M, Scalar, Theta, Ref, Out,
    std::void_t<decltype(std::declval<const M&>().add_cached_difference(
        std::uint32_t{}, std::declval<const Theta&>(), Scalar{}, std::declval<Out&>()))>>
    : HasReferenceTerm<M, Scalar, Ref> {};

/// Does it also offer the batch form add_cached_differences(first, last, θ, cache, acc)?
template <class M, class Scalar, class Theta, class Out, class = void>
struct HasCachedDifferences : std::false_type {};
template <class M, class Scalar, class Theta, class Out>
struct HasCachedDifferences<
    M, Scalar, Theta, Out,
    std::void_t<decltype(std::declval<const M&>().add_cached_differences(
        static_cast<const std::uint32_t*>(nullptr), static_cast<const std::uint32_t*>(nullptr),
        std::declval<const Theta&>(), static_cast<const Scalar*>(nullptr), std::declval<Out&>()))>>
    : std::true_type {};

}  // namespace detail

/// The control-variate gradient of U from a per-example model (the MinibatchGradient concept:
/// add_gradient(i, θ, acc) and add_prior_gradient(θ, acc), templates over the Eigen types).
/// Storage: storage_size scalars of caller memory aligned to kAlignBytes (two slots of θ̂ and ĝ,
/// so that a failed set_reference keeps the previous pair), kept alive by the caller;
/// OwnedControlVariateGradient holds them itself. Fill batch() before each step. Class invariant:
/// has_reference() iff set_reference succeeded; before that gradient() writes NaN (which every
/// sampler rejects, leaving its state unchanged).
template <class PerExample, int Capacity, class Scalar, int Dim>
class ControlVariateGradient {
 public:
  static_assert(Dim > 0, "Dim must be positive");
  using Vec = Vector<Scalar, Dim>;
  using Estimator = GradientNoiseEstimator<Scalar, Dim>;
  /// Scalars of caller memory: two slots of (θ̂, ĝ), each vector padded to alignment units.
  static constexpr std::size_t storage_size = 4 * detail::aligned_count<Scalar>(Dim);

  /// Wraps `model` (copied, as MinibatchGradient does) for a data set of n_rows rows.
  ControlVariateGradient(const PerExample& model, std::size_t n_rows, Scalar* memory) noexcept
      : model_(model), n_rows_(n_rows), mem_(memory) {}

  /// The batch the next gradient calls use.
  IndexBatch<Capacity>& batch() noexcept { return batch_; }
  const IndexBatch<Capacity>& batch() const noexcept { return batch_; }
  const PerExample& model() const noexcept { return model_; }
  std::size_t rows() const noexcept { return n_rows_; }

  /// θ̂ and ĝ = Σ_i a_i(θ̂) over all n_rows rows (one full pass). NonFiniteState if θ̂ is not
  /// finite, NonFiniteGradient if ĝ is not, InvalidParameter for n_rows = 0 or ≥ 2³²; the
  /// previous reference is then kept.
  template <class T>
  Status set_reference(const Eigen::MatrixBase<T>& theta_hat) noexcept {
    static_assert(T::SizeAtCompileTime == Dim, "θ̂ has the position's size");
    if (n_rows_ == 0 || n_rows_ > std::numeric_limits<std::uint32_t>::max()) {
      return StatusCode::InvalidParameter;
    }
    if (!detail::all_finite(theta_hat.derived())) return StatusCode::NonFiniteState;
    // The new pair goes to the slot not in use; it becomes active only if ĝ is finite.
    const int next = 1 - active_;
    VectorMap<Scalar, Dim> ref(slot(next, 0));
    VectorMap<Scalar, Dim> full(slot(next, 1));
    ref = theta_hat;
    full.setZero();
    const ConstVectorMap<Scalar, Dim> r(slot(next, 0));
    for (std::size_t i = 0; i < n_rows_; ++i) model_.add_gradient(std::uint32_t(i), r, full);
    if (!detail::all_finite(full)) return StatusCode::NonFiniteGradient;
    if (row_cache_ != nullptr && !fill_row_cache(r)) return StatusCode::NonFiniteGradient;
    active_ = next;
    has_reference_ = true;
    return StatusCode::Ok;
  }

  /// Scalars of caller memory set_row_cache needs: one per row.
  std::size_t row_cache_size() const noexcept { return n_rows_; }
  /// Gives the adaptor caller memory (`size` ≥ rows() scalars, kept alive and untouched by the
  /// caller while the adaptor is used) for a per-row cache of the reference, for per-example
  /// models that offer reference_term and add_cached_difference (the header comment;
  /// LogisticRegression does): set_reference fills it, and each difference then costs one
  /// per-example evaluation instead of two. With a reference already set the cache is filled at
  /// once. InvalidParameter for null memory or too small a size (nothing changes);
  /// NonFiniteGradient if a term is not finite (the cache is then not used). A set_reference that
  /// fails after it began to fill the cache keeps the previous reference, served without the
  /// cache (the same gradients, at two evaluations per row) until a set_reference succeeds.
  Status set_row_cache(Scalar* memory, std::size_t size) noexcept {
    static_assert(
        detail::HasCachedDifference<PerExample, Scalar, ConstVectorMap<Scalar, Dim>,
                                    ConstVectorMap<Scalar, Dim>, VectorMap<Scalar, Dim>>::value,
        "set_row_cache needs a per-example model with reference_term(i, θ̂) and "
        "add_cached_difference(i, θ, term, acc)");
    if (memory == nullptr || size < n_rows_) return StatusCode::InvalidParameter;
    row_cache_ = memory;
    cache_ready_ = false;
    if (has_reference_ && !fill_row_cache(reference())) return StatusCode::NonFiniteGradient;
    return StatusCode::Ok;
  }
  /// True when gradient() reads the per-row cache.
  bool row_cache_ready() const noexcept { return cache_ready_; }
  /// True once set_reference succeeded.
  bool has_reference() const noexcept { return has_reference_; }
  /// θ̂ and ĝ (valid when has_reference()).
  ConstVectorMap<Scalar, Dim> reference() const noexcept {
    return ConstVectorMap<Scalar, Dim>(slot(active_, 0));
  }
  ConstVectorMap<Scalar, Dim> reference_gradient() const noexcept {
    return ConstVectorMap<Scalar, Dim>(slot(active_, 1));
  }

  /// Rows summed exactly at every step (a census stratum; the batch is the §5.3(b) estimate over
  /// the other rows, MATH.md): `rows` lists `count` row indices in strictly increasing order,
  /// all < rows(), count < rows(), in caller memory kept alive and unchanged while the adaptor is
  /// used (nullptr with count 0 removes the census). The gradient is then
  ///   ĝ + Σ_{i∈census} d_i + ((N − k)/n) Σ_{i∈S} d_i − ∇log p(θ),   k = count,
  /// unbiased when the batch S is a uniform n-subset of the other N − k rows: draw it with a
  /// MinibatchSampler built over those rows (its excluding constructor). Rows of high leverage
  /// (largest_rows of x_iᵀ C x_i for a GLM, C the posterior covariance) then add no noise; on a
  /// data set with a few rows of extreme leverage this removes most of the gradient noise at a cost
  /// of k differences per step. InvalidParameter (census unchanged) for a list that breaks the
  /// rules above.
  Status set_census(const std::uint32_t* rows, std::size_t count) noexcept {
    if ((count > 0 && count >= n_rows_) || !detail::increasing_below(rows, count, n_rows_)) {
      return StatusCode::InvalidParameter;
    }
    census_ = count > 0 ? rows : nullptr;
    census_count_ = count;
    return StatusCode::Ok;
  }
  /// The census rows (set_census), and how many.
  const std::uint32_t* census() const noexcept { return census_; }
  std::size_t census_count() const noexcept { return census_count_; }
  /// Rows the batches are drawn from: rows() − census_count().
  std::size_t sampled_rows() const noexcept { return n_rows_ - census_count_; }

  /// Every later gradient() feeds the batch's differences d_i to *e (nullptr: none). The
  /// estimator is the caller's and must outlive this adaptor.
  void set_noise_estimator(Estimator* e) noexcept { estimator_ = e; }

  /// out = ĝ + (N/n) Σ_{i∈S} [a_i(θ) − a_i(θ̂)] − ∇log p(θ) on the current batch (see the header
  /// comment; with a census, set_census's form); NaN for an empty batch or without a reference.
  template <class Theta, class Out>
  void gradient(const Theta& theta, Out& out) const noexcept {
    if (batch_.size == 0 || !has_reference_) {
      out.setConstant(std::numeric_limits<Scalar>::quiet_NaN());
      return;
    }
    const ConstVectorMap<Scalar, Dim> ref(slot(active_, 0));
    if (estimator_ == nullptr) {
      out.setZero();
      add_differences(batch_.begin(), batch_.end(), theta, ref, out);
    } else {
      estimator_->begin_batch();
      out.setZero();
      Vec d;
      for (const std::uint32_t i : batch_) {
        d.setZero();
        add_difference(i, theta, ref, d);  // d_i = a_i(θ) − a_i(θ̂)
        out += d;
        estimator_->add(d);
      }
      static_cast<void>(estimator_->end_batch(sampled_rows()));
    }
    finish(theta, ref, out);
  }

 private:
  /// out += Σ_{i∈[first, last)} [a_i(θ) − a_i(θ̂)]: one difference per row from the row cache or
  /// the model's hook, else the reference sum subtracted by negating around it (no temporary
  /// vector, any Dim).
  template <class Theta, class Ref, class Out>
  void add_differences(const std::uint32_t* first, const std::uint32_t* last, const Theta& theta,
                       const Ref& ref, Out& out) const noexcept {
    constexpr bool cached = detail::HasCachedDifference<PerExample, Scalar, Theta, Ref, Out>::value;
    constexpr bool hook = detail::HasGradientDifference<PerExample, Theta, Ref, Out>::value;
    if constexpr (cached && detail::HasCachedDifferences<PerExample, Scalar, Theta, Out>::value) {
      if (cache_ready_) {
        model_.add_cached_differences(first, last, theta, row_cache_, out);
        return;
      }
    }
    if ((cached && cache_ready_) || hook) {
      for (const std::uint32_t* i = first; i != last; ++i) add_difference(*i, theta, ref, out);
    } else {
      out = -out;
      for (const std::uint32_t* i = first; i != last; ++i) model_.add_gradient(*i, ref, out);
      out = -out;
      for (const std::uint32_t* i = first; i != last; ++i) model_.add_gradient(*i, theta, out);
    }
  }

  /// acc += a_i(θ) − a_i(θ̂): from the row cache when it is ready, else the model's difference
  /// hook, else two per-example gradients (acc negated around the reference's).
  template <class Theta, class Ref, class Out>
  void add_difference(std::uint32_t i, const Theta& theta, const Ref& ref,
                      Out& acc) const noexcept {
    if constexpr (detail::HasCachedDifference<PerExample, Scalar, Theta, Ref, Out>::value) {
      if (cache_ready_) {
        model_.add_cached_difference(i, theta, row_cache_[i], acc);
        return;
      }
    }
    if constexpr (detail::HasGradientDifference<PerExample, Theta, Ref, Out>::value) {
      model_.add_gradient_difference(i, theta, ref, acc);
    } else {
      model_.add_gradient(i, theta, acc);
      acc = -acc;
      model_.add_gradient(i, ref, acc);
      acc = -acc;
    }
  }

  /// row_cache_[i] = reference_term(i, θ̂) for every row; false (and the cache not ready) if a
  /// term is not finite.
  template <class Ref>
  bool fill_row_cache(const Ref& theta_hat) noexcept {
    cache_ready_ = false;
    if constexpr (detail::HasReferenceTerm<PerExample, Scalar, Ref>::value) {
      Scalar check = 0;
      for (std::size_t i = 0; i < n_rows_; ++i) {
        row_cache_[i] = Scalar(model_.reference_term(std::uint32_t(i), theta_hat));
        check += row_cache_[i] - row_cache_[i];  // NaN iff some term is not finite
      }
      cache_ready_ = check == Scalar(0);
    }
    return cache_ready_;
  }

  /// out = ((N − k)/n) out + the census rows' differences + ĝ + prior gradient.
  template <class Theta, class Ref, class Out>
  void finish(const Theta& theta, const Ref& ref, Out& out) const noexcept {
    out *= Scalar(sampled_rows()) / Scalar(batch_.size);
    if (census_count_ > 0) add_differences(census_, census_ + census_count_, theta, ref, out);
    out += ConstVectorMap<Scalar, Dim>(slot(active_, 1));
    model_.add_prior_gradient(theta, out);
  }

  /// Vector k (0: θ̂, 1: ĝ) of slot s.
  Scalar* slot(int s, int k) const noexcept {
    return mem_ + std::size_t(2 * s + k) * detail::aligned_count<Scalar>(Dim);
  }

  PerExample model_;
  std::size_t n_rows_;
  Scalar* mem_;
  Estimator* estimator_ = nullptr;
  Scalar* row_cache_ = nullptr;            // caller memory, rows() scalars (set_row_cache)
  const std::uint32_t* census_ = nullptr;  // caller memory, census_count_ rows (set_census)
  std::size_t census_count_ = 0;
  bool cache_ready_ = false;  // row_cache_ holds reference_term(i, θ̂) of the active θ̂
  bool has_reference_ = false;
  int active_ = 0;
  IndexBatch<Capacity> batch_;
};

namespace detail {
/// Storage of OwnedControlVariateGradient, constructed before the adaptor that points into it.
template <class Scalar, std::size_t N>
struct ControlVariateStorage {
  alignas(kAlignBytes) Scalar cv_storage_[N] = {};
};
}  // namespace detail

/// ControlVariateGradient with its storage inside the object (4 · Dim scalars, padded).
template <class PerExample, int Capacity, class Scalar, int Dim>
class OwnedControlVariateGradient
    : private detail::ControlVariateStorage<
          Scalar, ControlVariateGradient<PerExample, Capacity, Scalar, Dim>::storage_size>,
      public ControlVariateGradient<PerExample, Capacity, Scalar, Dim> {
  using Base = ControlVariateGradient<PerExample, Capacity, Scalar, Dim>;
  using Storage = detail::ControlVariateStorage<Scalar, Base::storage_size>;

 public:
  OwnedControlVariateGradient(const PerExample& model, std::size_t n_rows) noexcept
      : Storage(), Base(model, n_rows, Storage::cv_storage_) {}
  OwnedControlVariateGradient(const OwnedControlVariateGradient&) = delete;
  OwnedControlVariateGradient& operator=(const OwnedControlVariateGradient&) = delete;
};

}  // namespace sgmcmc
