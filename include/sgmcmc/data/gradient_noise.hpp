// SPDX-License-Identifier: MIT
// Online estimate V̂ of the minibatch gradient's noise covariance (diagonal) from each batch's
// per-example gradients (MATH.md §1.2, §5.3(b)), and a PSD-safe policy for handing it to a sampler.
#pragma once

// The estimate. A minibatch of n rows drawn without replacement from N gives
//   ∇Ũ = (N/n) Σ_{i∈S} a_i + prior,   Cov = N²(N − n)/(n(N − 1)) · (1/N) Σ_i (a_i − ā)(a_i − ā)ᵀ
// (MATH.md §5.3(b)), a_i the per-example gradient −∇log p(x_i | θ). Its diagonal is
// N(N − n)/n · S², S² = (1/(N − 1)) Σ_i (a_i − ā)², and the sample variance s² of the batch (n − 1
// denominator) is an unbiased estimate of S² under sampling without replacement. So each batch
// gives an unbiased V_batch = N(N − n)/n · s² at the current θ; V̂ averages them over batches with
// weight max(λ, 1/t) for batch t: an exact running mean for the first 1/λ batches, then
// exponential forgetting with memory about 1/λ batches, so V̂ follows the chain as θ moves.
// V̂ from batches before step t is independent of step t's own gradient noise.
// Models that give only batch gradients (models/mlp.hpp) split each batch into K sub-batches of m
// rows and hand over the K sub-batch gradients instead: V_batch = (1 − n/N)/K · s² over those
// (end_subbatches). GradientNoiseEstimator holds its vectors by value (small d);
// GradientNoiseEstimatorMap keeps them in caller-owned memory (any d).
//
// The policy. A sampler accepts V̂ only if 2D − hB̂ ⪰ 0 (MATH.md §1.2); otherwise its
// set_gradient_noise returns NoiseNotPSD and every later step fails. For the momentum samplers
// B̂ = V̂ on the momentum block and D = C I (SGHMC) or A I (SGNHT), so the largest admissible
// value is V̂_i ≤ 2C/h per coordinate (gradient_noise_limit below). apply() hands the sampler
//   Clip (default): V̂_i ← min(V̂_i, κ·limit_i) per coordinate. A clipped coordinate gets no
//     injected noise at all (h(2C − hV̂_i) = 0 at κ = 1): the largest correction the step allows
//     there. The rest of the gradient noise, hV̂_i − 2C, is then uncorrected heat (MATH.md §1.3:
//     Var θ gains about h(V_i − V̂_i)/(2C)); the cure is a smaller h or a larger batch, which the
//     counters tell the caller to consider.
//   Shrink: V̂ ← ρV̂ with one ρ = min(1, min_i κ·limit_i / V̂_i) for all coordinates (keeps V̂'s
//     shape, under-corrects every coordinate when one is too large).
// Limits carry a margin of 8 ulp so that rounding in h(2C − hV̂) cannot make it negative. If the
// sampler still refuses (e.g. a limit that does not match it), apply() halves V̂ up to 30 times
// and finally sets V̂ = 0, which every valid sampler accepts; fallbacks() counts those steps.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "sgmcmc/core/status.hpp"
#include "sgmcmc/core/types.hpp"
#include "sgmcmc/data/minibatch.hpp"
#include "sgmcmc/samplers/sghmc.hpp"
#include "sgmcmc/samplers/sgld.hpp"
#include "sgmcmc/samplers/sgnht.hpp"

namespace sgmcmc {

/// What apply() does with coordinates of V̂ above the sampler's limit (see the header comment).
enum class NoiseLimitPolicy : std::uint8_t {
  Clip,    ///< each coordinate to min(V̂_i, κ·limit_i)
  Shrink,  ///< the whole vector by one factor, so that the tightest coordinate meets κ·limit_i
};

/// Parameters of the online V̂ estimate (both storages).
template <class Scalar>
struct GradientNoiseParams {
  /// λ ∈ [0, 1]: batch t enters with weight max(λ, 1/t); 0 keeps a running mean forever.
  Scalar smoothing{Scalar(0.02)};
  /// κ ∈ (0, 1]: V̂ is limited to κ times the sampler's limit.
  Scalar limit_fraction{Scalar(1)};
  NoiseLimitPolicy policy{NoiseLimitPolicy::Clip};
};

namespace detail {

/// The estimator's vectors held by value (small Dim): V̂, the last batch, the shift, Σ and Σ².
template <class Scalar, int Dim>
struct OwnedNoiseStorage {
  static constexpr int vectors = 5;
  Vector<Scalar, Dim> v[vectors];
  Scalar* ptr(int k) noexcept { return v[k].data(); }
  const Scalar* ptr(int k) const noexcept { return v[k].data(); }
};

/// The same vectors, plus the V̂ handed to the sampler, in caller-owned memory (any Dim). Each
/// vector starts on an alignment boundary (stride = Dim padded to whole alignment units), as the
/// aligned maps over them assume.
template <class Scalar, int Dim>
struct MappedNoiseStorage {
  static constexpr int vectors = 6;
  static constexpr std::size_t stride = aligned_count<Scalar>(std::size_t(Dim));
  Scalar* base;
  Scalar* ptr(int k) noexcept { return base + std::size_t(k) * stride; }
  const Scalar* ptr(int k) const noexcept { return base + std::size_t(k) * stride; }
};

/// The estimate and the policy written once over a storage: loops over coordinates, no
/// Dim-sized temporaries, so it serves d = 10⁵ as well as d = 4.
template <class Scalar, int Dim, class Storage>
class NoiseEstimatorCore {
 public:
  static_assert(Dim > 0, "Dim must be positive");
  using Params = GradientNoiseParams<Scalar>;

  /// False when Params are out of range (then end_batch never updates and V̂ stays 0).
  bool valid() const noexcept { return valid_; }
  const Params& params() const noexcept { return p_; }

  /// Forgets every batch and every counter.
  void reset() noexcept {
    for (int k = 0; k < Storage::vectors; ++k) fill(k, Scalar(0));
    batches_ = 0;
    applied_ = limited_steps_ = limited_coords_ = fallbacks_ = 0;
    begin_batch();
  }

  /// Starts a batch (discards a partly accumulated one).
  void begin_batch() noexcept {
    fill(kSum, Scalar(0));
    fill(kSq, Scalar(0));
    count_ = 0;
  }
  /// Adds one summand: a per-example gradient a_i (end_batch) or a sub-batch gradient
  /// (end_subbatches). Sums are kept relative to the batch's first summand, so that a large
  /// common mean does not cancel. a: any Eigen vector of size Dim (a map for large Dim).
  template <class X>
  void add(const Eigen::MatrixBase<X>& a) noexcept {
    static_assert(X::SizeAtCompileTime == Dim, "a summand has the position's size");
    Scalar* shift = s_.ptr(kShift);
    Scalar* sum = s_.ptr(kSum);
    Scalar* sq = s_.ptr(kSq);
    const X& x = a.derived();
    if (count_ == 0) {
      for (Index i = 0; i < Dim; ++i) shift[i] = x[i];
    }
    for (Index i = 0; i < Dim; ++i) {
      const Scalar d = x[i] - shift[i];
      sum[i] += d;
      sq[i] += d * d;
    }
    ++count_;
  }
  /// Folds a batch of per-example gradients a_i (summands of the minibatch sum, before the N/n
  /// scaling) into V̂ for a data set of n_rows rows: V_batch = N(N − n)/n · s². Returns false,
  /// leaving V̂ unchanged, for an invalid estimator, fewer than 2 examples, n_rows below the
  /// batch size, or a non-finite value.
  bool end_batch(std::size_t n_rows) noexcept {
    const std::size_t n = count_;
    if (!valid_ || n < 2 || n_rows < n) return discard();
    const Scalar big_n = Scalar(n_rows);
    return fold(big_n * (big_n - Scalar(n)) / (Scalar(n) * Scalar(n - 1)));
  }
  /// Folds a batch given as K ≥ 2 sub-batch gradients: each add() was a whole minibatch gradient
  /// ∇Ũ (N/m scaling and prior included) on its own m = rows_per_subbatch rows, the K sub-batches
  /// disjoint and together one batch of n = K m rows drawn without replacement. The gradient of
  /// the whole batch is their mean, whose covariance has the diagonal
  ///   V_batch = (1 − n/N) / K · s²,   s² the sample variance (K − 1) of the K gradients
  /// (unbiased: the sample variance of the K sub-batch sums estimates m S², MATH.md §5.3(b); with
  /// m = 1 this is end_batch's formula). For models that give only batch gradients, e.g.
  /// models/mlp.hpp: K passes of m rows cost about what one pass of n rows does. Same refusals as
  /// end_batch (n_rows below n, fewer than 2 sub-batches, rows_per_subbatch = 0, non-finite).
  bool end_subbatches(std::size_t n_rows, std::size_t rows_per_subbatch) noexcept {
    const std::size_t k = count_;
    const std::size_t n = k * rows_per_subbatch;
    if (!valid_ || k < 2 || rows_per_subbatch == 0 || n_rows < n) return discard();
    const Scalar fpc = Scalar(1) - Scalar(n) / Scalar(n_rows);
    return fold(fpc / (Scalar(k) * Scalar(k - 1)));
  }

  /// Number of batches folded in.
  std::uint64_t batches() const noexcept { return batches_; }
  /// Number of apply() calls.
  std::uint64_t applied() const noexcept { return applied_; }
  /// apply() calls in which at least one coordinate was limited by the policy.
  std::uint64_t limited_steps() const noexcept { return limited_steps_; }
  /// Sum over apply() calls of the number of limited coordinates.
  std::uint64_t limited_coordinates() const noexcept { return limited_coords_; }
  /// apply() calls in which the sampler refused the policy's V̂ and the fallback ran.
  std::uint64_t fallbacks() const noexcept { return fallbacks_; }

 protected:
  enum : int { kVhat = 0, kLast, kShift, kSum, kSq, kApplied };

  /// storage: nothing (owned vectors) or the caller's memory.
  template <class... StorageArgs>
  explicit NoiseEstimatorCore(const Params& p, StorageArgs... storage) noexcept
      : p_(p), s_{storage...} {
    valid_ = p.smoothing >= Scalar(0) && p.smoothing <= Scalar(1) && p.limit_fraction > Scalar(0) &&
             p.limit_fraction <= Scalar(1);
  }

  /// Writes the policy's V̂ for limit(i) into out; returns the number of limited coordinates.
  template <class Limit>
  Index limit_into(const Limit& limit, Scalar* out) const noexcept {
    const Scalar* v = s_.ptr(kVhat);
    auto cap = [&](Index i) {
      const Scalar l = limit(i);
      return p_.limit_fraction * (l > Scalar(0) ? l : Scalar(0));
    };
    Index over = 0;
    Scalar rho(1);
    for (Index i = 0; i < Dim; ++i) {
      const Scalar c = cap(i);
      if (v[i] > c) {
        ++over;
        rho = std::min(rho, c / v[i]);
      }
    }
    const bool clip = p_.policy == NoiseLimitPolicy::Clip;
    for (Index i = 0; i < Dim; ++i) {
      out[i] = over == 0 ? v[i] : clip ? std::min(v[i], cap(i)) : rho * v[i];
    }
    return over;
  }

  /// Counts one apply(), hands `set(scale)` (V̂ · scale) to the sampler and runs the halving
  /// fallback of the header comment; `zero()` sets V̂ = 0.
  template <class Set, class Zero>
  Status hand_over(Index over, Set&& set, Zero&& zero) noexcept {
    ++applied_;
    if (over > 0) {
      ++limited_steps_;
      limited_coords_ += static_cast<std::uint64_t>(over);
    }
    Status st = set(Scalar(1));
    if (st.code != StatusCode::NoiseNotPSD) return st;
    ++fallbacks_;
    for (int k = 0; k < 30 && st.code == StatusCode::NoiseNotPSD; ++k) st = set(Scalar(0.5));
    if (st.code == StatusCode::NoiseNotPSD) st = zero();
    return st;
  }

  Params p_;
  bool valid_ = false;
  Storage s_;

 private:
  void fill(int k, Scalar x) noexcept {
    Scalar* p = s_.ptr(k);
    for (Index i = 0; i < Dim; ++i) p[i] = x;
  }
  bool discard() noexcept {
    begin_batch();
    return false;
  }
  // V_batch = factor · M2 (M2 = Σ(a − ā)², clamped at 0), checked finite before anything changes.
  bool fold(Scalar factor) noexcept {
    const std::size_t n = count_;
    Scalar* sum = s_.ptr(kSum);
    const Scalar* sq = s_.ptr(kSq);
    bool finite = true;
    for (Index i = 0; i < Dim; ++i) {  // V_batch into the Σ buffer (reset below anyway)
      const Scalar m2 = std::max(sq[i] - sum[i] * sum[i] / Scalar(n), Scalar(0));
      sum[i] = factor * m2;
      finite = finite && std::isfinite(sum[i]);
    }
    if (!finite) return discard();
    ++batches_;
    const Scalar w = std::max(p_.smoothing, Scalar(1) / Scalar(batches_));
    Scalar* vhat = s_.ptr(kVhat);
    Scalar* last = s_.ptr(kLast);
    for (Index i = 0; i < Dim; ++i) {
      last[i] = sum[i];
      vhat[i] = (Scalar(1) - w) * vhat[i] + w * last[i];
    }
    begin_batch();
    return true;
  }

  std::size_t count_ = 0;
  std::uint64_t batches_ = 0;
  std::uint64_t applied_ = 0;
  std::uint64_t limited_steps_ = 0;
  std::uint64_t limited_coords_ = 0;
  std::uint64_t fallbacks_ = 0;
};

}  // namespace detail

/// Online diagonal estimate V̂ of the minibatch gradient's covariance, plus the PSD-safe policy.
/// Fixed size, held by value (small Dim; GradientNoiseEstimatorMap for any Dim), no heap.
/// Class invariant: estimate() ≥ 0 element-wise and finite.
template <class Scalar, int Dim>
class GradientNoiseEstimator
    : public detail::NoiseEstimatorCore<Scalar, Dim, detail::OwnedNoiseStorage<Scalar, Dim>> {
  using Core = detail::NoiseEstimatorCore<Scalar, Dim, detail::OwnedNoiseStorage<Scalar, Dim>>;

 public:
  using Vec = Vector<Scalar, Dim>;
  using Params = GradientNoiseParams<Scalar>;

  GradientNoiseEstimator() noexcept : GradientNoiseEstimator(Params{}) {}
  explicit GradientNoiseEstimator(const Params& p) noexcept : Core(p) { this->reset(); }

  /// V̂: zero until the first batch.
  const Vec& estimate() const noexcept { return this->s_.v[Core::kVhat]; }
  /// The latest batch's own estimate (N(N − n)/n · s², or the sub-batch form).
  const Vec& last_batch() const noexcept { return this->s_.v[Core::kLast]; }

  /// V̂ after the policy for the given per-coordinate limit (limit_i ≥ 0); *was_limited (when
  /// not null) says whether any coordinate was above κ·limit_i.
  Vec limited(const Vec& limit, bool* was_limited = nullptr,
              Index* coords = nullptr) const noexcept {
    Vec out;
    const Index over = this->limit_into([&](Index i) { return limit[i]; }, out.data());
    if (was_limited != nullptr) *was_limited = over > 0;
    if (coords != nullptr) *coords = over;
    return out;
  }

  /// Hands V̂ (after the policy, limit from gradient_noise_limit or the caller) to the sampler
  /// through set_gradient_noise, with the halving fallback of the header comment. Returns the
  /// sampler's final status: Ok unless the sampler is invalid for another reason.
  template <class Sampler>
  Status apply(Sampler& sampler, const Vec& limit) noexcept {
    Index over = 0;
    Vec v = limited(limit, nullptr, &over);
    return this->hand_over(
        over,
        [&](Scalar scale) {
          v *= scale;
          return sampler.set_gradient_noise(v);
        },
        [&] { return sampler.set_gradient_noise(Vec::Zero().eval()); });
  }
};

/// The same estimator with every vector in caller-owned memory, for any Dim (a 79 510-weight
/// network's V̂: Eigen refuses fixed-size objects over 128 KiB). The memory holds storage_size
/// scalars: V̂, the last batch, three accumulators and the V̂ that apply() hands to the sampler,
/// which keeps a reference to it (set_gradient_noise(ConstVectorMap)). Class invariant: as
/// GradientNoiseEstimator's.
template <class Scalar, int Dim>
class GradientNoiseEstimatorMap
    : public detail::NoiseEstimatorCore<Scalar, Dim, detail::MappedNoiseStorage<Scalar, Dim>> {
  using Core = detail::NoiseEstimatorCore<Scalar, Dim, detail::MappedNoiseStorage<Scalar, Dim>>;

 public:
  using Params = GradientNoiseParams<Scalar>;
  /// Scalars of caller memory the estimator needs (6 · Dim, each Dim padded to alignment units).
  static constexpr std::size_t storage_size =
      std::size_t(detail::MappedNoiseStorage<Scalar, Dim>::vectors) *
      detail::MappedNoiseStorage<Scalar, Dim>::stride;

  /// memory: storage_size scalars, kept alive by the caller, aligned to kAlignBytes (the maps
  /// the sampler reads assume it). Resets them.
  explicit GradientNoiseEstimatorMap(Scalar* memory, const Params& p = Params{}) noexcept
      : Core(p, memory) {
    this->reset();
  }

  /// V̂: zero until the first batch.
  ConstVectorMap<Scalar, Dim> estimate() const noexcept {
    return ConstVectorMap<Scalar, Dim>(this->s_.ptr(Core::kVhat));
  }
  /// The latest batch's own estimate.
  ConstVectorMap<Scalar, Dim> last_batch() const noexcept {
    return ConstVectorMap<Scalar, Dim>(this->s_.ptr(Core::kLast));
  }
  /// The V̂ last handed to a sampler by apply() (the memory the sampler reads).
  ConstVectorMap<Scalar, Dim> applied_values() const noexcept {
    return ConstVectorMap<Scalar, Dim>(this->s_.ptr(Core::kApplied));
  }

  /// As GradientNoiseEstimator::apply with one limit for every coordinate (all momentum
  /// samplers: momentum_noise_limit(h, C)): the policy's V̂ goes to this estimator's hand-over
  /// vector, which the sampler then reads by reference; the fallback halves it in place and
  /// finally sets V̂ = 0 (isotropic).
  template <class Sampler>
  Status apply(Sampler& sampler, Scalar limit) noexcept {
    Scalar* out = this->s_.ptr(Core::kApplied);
    const Index over = this->limit_into([limit](Index) { return limit; }, out);
    return this->hand_over(
        over,
        [&](Scalar scale) {
          if (scale != Scalar(1)) {
            for (Index i = 0; i < Dim; ++i) out[i] *= scale;
          }
          return sampler.set_gradient_noise(ConstVectorMap<Scalar, Dim>(out));
        },
        [&] { return sampler.set_gradient_noise(Scalar(0)); });
  }
};

/// Largest V̂ (per coordinate) with 2D − hB̂ ⪰ 0 for a momentum block D = d·I with B̂ = V̂
/// (SGHMC: d = C; SGNHT, SGMGT: d = A): 2d/h, less 8 ulp (see the header comment).
template <class Scalar>
Scalar momentum_noise_limit(Scalar step_size, Scalar diffusion) noexcept {
  const Scalar margin = Scalar(1) - Scalar(8) * std::numeric_limits<Scalar>::epsilon();
  return margin * Scalar(2) * diffusion / step_size;
}

/// The limit of SGHMC: V̂_i ≤ 2C/h (MATH.md §2.2, N(0, h(2C − hV̂))).
template <class Scalar, int Dim, class Integrator>
Vector<Scalar, Dim> gradient_noise_limit(const SGHMC<Scalar, Dim, Integrator>& s) noexcept {
  return Vector<Scalar, Dim>::Constant(momentum_noise_limit(s.step_size(), s.params().friction));
}
/// The limit of SGNHT: V̂_i ≤ 2A/h (MATH.md §2.2, N(0, h(2A − hV̂))).
template <class Scalar, int Dim, class Integrator>
Vector<Scalar, Dim> gradient_noise_limit(const SGNHT<Scalar, Dim, Integrator>& s) noexcept {
  return Vector<Scalar, Dim>::Constant(momentum_noise_limit(s.step_size(), s.params().diffusion));
}
/// The limit of SGLD with D₀ = s I: 2D₀ − hD₀V̂D₀ ⪰ 0 iff V̂_i ≤ 2/(h s) (MATH.md §2.2).
template <class Scalar, int Dim>
Vector<Scalar, Dim> gradient_noise_limit(const SGLD<Scalar, Dim, Scaled<Scalar>>& s) noexcept {
  const Scalar d0 = s.params().diffusion.value;
  return Vector<Scalar, Dim>::Constant(momentum_noise_limit(s.step_size(), Scalar(1) / d0));
}

/// MinibatchGradient (data/minibatch.hpp) that also feeds every per-example gradient of its
/// batch to a GradientNoiseEstimator: each gradient() call is one begin_batch / add / end_batch
/// round. Same per-example model concept, same result as minibatch_gradient (to rounding: the
/// sum is formed from the separate per-example vectors). The estimator is the caller's (held by
/// pointer, updated from the const gradient()); it must outlive this adaptor.
template <class PerExample, int Capacity, class Scalar, int Dim>
class NoiseTrackingGradient {
 public:
  using Vec = Vector<Scalar, Dim>;
  using Estimator = GradientNoiseEstimator<Scalar, Dim>;

  NoiseTrackingGradient(const PerExample& model, std::size_t n_rows, Estimator* estimator) noexcept
      : model_(model), n_rows_(n_rows), estimator_(estimator) {}

  /// The batch the next gradient call uses.
  IndexBatch<Capacity>& batch() noexcept { return batch_; }
  const IndexBatch<Capacity>& batch() const noexcept { return batch_; }
  const PerExample& model() const noexcept { return model_; }
  std::size_t rows() const noexcept { return n_rows_; }

  /// out = ∇Ũ(θ) on the current batch (NaN for an empty batch), V̂ updated from its rows. θ and
  /// out: Vec or the samplers' maps (PerExample's hooks must take them, as minibatch_gradient's
  /// do).
  template <class Theta, class Out>
  void gradient(const Theta& theta, Out& out) const noexcept {
    if (batch_.size == 0) {
      out.setConstant(std::numeric_limits<Scalar>::quiet_NaN());
      return;
    }
    if (estimator_ != nullptr) estimator_->begin_batch();
    out.setZero();
    Vec a;
    for (const std::uint32_t i : batch_) {
      a.setZero();
      model_.add_gradient(i, theta, a);
      out += a;
      if (estimator_ != nullptr) estimator_->add(a);
    }
    if (estimator_ != nullptr) static_cast<void>(estimator_->end_batch(n_rows_));
    out *= Scalar(n_rows_) / Scalar(batch_.size);
    model_.add_prior_gradient(theta, out);
  }

 private:
  PerExample model_;
  std::size_t n_rows_;
  Estimator* estimator_;
  IndexBatch<Capacity> batch_;
};

}  // namespace sgmcmc
