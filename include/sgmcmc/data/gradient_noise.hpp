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

/// Online diagonal estimate V̂ of the minibatch gradient's covariance, plus the PSD-safe policy.
/// Fixed size, no heap. Class invariant: estimate() ≥ 0 element-wise and finite.
template <class Scalar, int Dim>
class GradientNoiseEstimator {
 public:
  static_assert(Dim > 0, "Dim must be positive");
  using Vec = Vector<Scalar, Dim>;

  struct Params {
    /// λ ∈ [0, 1]: batch t enters with weight max(λ, 1/t); 0 keeps a running mean forever.
    Scalar smoothing{Scalar(0.02)};
    /// κ ∈ (0, 1]: V̂ is limited to κ times the sampler's limit.
    Scalar limit_fraction{Scalar(1)};
    NoiseLimitPolicy policy{NoiseLimitPolicy::Clip};
  };

  GradientNoiseEstimator() noexcept : GradientNoiseEstimator(Params{}) {}
  explicit GradientNoiseEstimator(const Params& p) noexcept : p_(p) {
    valid_ = p.smoothing >= Scalar(0) && p.smoothing <= Scalar(1) && p.limit_fraction > Scalar(0) &&
             p.limit_fraction <= Scalar(1);
    reset();
  }

  /// False when Params are out of range (then end_batch never updates and V̂ stays 0).
  bool valid() const noexcept { return valid_; }
  const Params& params() const noexcept { return p_; }

  /// Forgets every batch and every counter.
  void reset() noexcept {
    vhat_.setZero();
    last_.setZero();
    shift_.setZero();
    batches_ = 0;
    applied_ = limited_steps_ = limited_coords_ = fallbacks_ = 0;
    begin_batch();
  }

  /// Starts a batch (discards a partly accumulated one).
  void begin_batch() noexcept {
    sum_.setZero();
    sq_.setZero();
    count_ = 0;
  }
  /// Adds one per-example gradient a_i (a summand of the minibatch sum, before the N/n scaling).
  /// Sums are kept relative to the batch's first example, so that a large common mean does not
  /// cancel: two vector updates per example.
  void add(const Vec& a) noexcept {
    if (count_ == 0) shift_ = a;
    const Vec d = a - shift_;
    sum_ += d;
    sq_ += d.cwiseAbs2();
    ++count_;
  }
  /// Folds the batch into V̂ for a data set of n_rows rows. Returns false, leaving V̂ unchanged,
  /// for an invalid estimator, fewer than 2 examples, n_rows below the batch size, or a
  /// non-finite value.
  bool end_batch(std::size_t n_rows) noexcept {
    const std::size_t n = count_;
    const Vec m2 = (sq_ - sum_.cwiseAbs2() / Scalar(n > 0 ? n : 1)).cwiseMax(Scalar(0));
    begin_batch();
    if (!valid_ || n < 2 || n_rows < n) return false;
    const Scalar big_n = Scalar(n_rows);
    const Scalar factor = big_n * (big_n - Scalar(n)) / (Scalar(n) * Scalar(n - 1));
    const Vec vb = factor * m2;
    if (!vb.allFinite()) return false;
    last_ = vb;
    ++batches_;
    const Scalar w = std::max(p_.smoothing, Scalar(1) / Scalar(batches_));
    vhat_ = (Scalar(1) - w) * vhat_ + w * last_;
    return true;
  }

  /// V̂: zero until the first batch.
  const Vec& estimate() const noexcept { return vhat_; }
  /// The latest batch's own estimate N(N − n)/n · s².
  const Vec& last_batch() const noexcept { return last_; }
  /// Number of batches folded in.
  std::uint64_t batches() const noexcept { return batches_; }

  /// V̂ after the policy for the given per-coordinate limit (limit_i ≥ 0); *was_limited (when
  /// not null) says whether any coordinate was above κ·limit_i.
  Vec limited(const Vec& limit, bool* was_limited = nullptr,
              Index* coords = nullptr) const noexcept {
    const Vec cap = p_.limit_fraction * limit.cwiseMax(Scalar(0));
    Index over = 0;
    for (Index i = 0; i < Dim; ++i) over += vhat_[i] > cap[i] ? 1 : 0;
    if (was_limited != nullptr) *was_limited = over > 0;
    if (coords != nullptr) *coords = over;
    if (over == 0) return vhat_;
    if (p_.policy == NoiseLimitPolicy::Clip) return vhat_.cwiseMin(cap);
    Scalar rho(1);
    for (Index i = 0; i < Dim; ++i) {
      if (vhat_[i] > cap[i]) rho = std::min(rho, cap[i] / vhat_[i]);
    }
    return rho * vhat_;
  }

  /// Hands V̂ (after the policy, limit from gradient_noise_limit or the caller) to the sampler
  /// through set_gradient_noise, with the halving fallback of the header comment. Returns the
  /// sampler's final status: Ok unless the sampler is invalid for another reason.
  template <class Sampler>
  Status apply(Sampler& sampler, const Vec& limit) noexcept {
    bool was_limited = false;
    Index over = 0;
    Vec v = limited(limit, &was_limited, &over);
    ++applied_;
    if (was_limited) {
      ++limited_steps_;
      limited_coords_ += static_cast<std::uint64_t>(over);
    }
    Status st = sampler.set_gradient_noise(v);
    if (st.code != StatusCode::NoiseNotPSD) return st;
    ++fallbacks_;
    for (int k = 0; k < 30 && st.code == StatusCode::NoiseNotPSD; ++k) {
      v *= Scalar(0.5);
      st = sampler.set_gradient_noise(v);
    }
    if (st.code == StatusCode::NoiseNotPSD) st = sampler.set_gradient_noise(Vec::Zero().eval());
    return st;
  }

  /// Number of apply() calls.
  std::uint64_t applied() const noexcept { return applied_; }
  /// apply() calls in which at least one coordinate was limited by the policy.
  std::uint64_t limited_steps() const noexcept { return limited_steps_; }
  /// Sum over apply() calls of the number of limited coordinates.
  std::uint64_t limited_coordinates() const noexcept { return limited_coords_; }
  /// apply() calls in which the sampler refused the policy's V̂ and the fallback ran.
  std::uint64_t fallbacks() const noexcept { return fallbacks_; }

 private:
  Params p_;
  bool valid_ = false;
  Vec vhat_;
  Vec last_;
  Vec shift_;
  Vec sum_;
  Vec sq_;
  std::size_t count_ = 0;
  std::uint64_t batches_ = 0;
  std::uint64_t applied_ = 0;
  std::uint64_t limited_steps_ = 0;
  std::uint64_t limited_coords_ = 0;
  std::uint64_t fallbacks_ = 0;
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
