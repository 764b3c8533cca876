// SPDX-License-Identifier: MIT
// Step sizes for the stochastic-gradient samplers without a sweep: a starting rule from the
// curvature scale, and an adaptation that measures the sampler's own bias through the
// configurational temperature and rescales h until that bias meets a tolerance.
#pragma once

// Why a temperature. A stochastic-gradient sampler has no accept step to tune against: its error
// is a bias of its stationary law, from discretisation and from uncorrected gradient noise. Both
// show up in one observable. For any density π ∝ e^{−U} that decays at infinity and any constant c,
// integration by parts gives, for every coordinate j,
//   E_π[(θ_j − c_j) ∂_jU(θ)] = 1                                     (configurational temperature)
// and an unbiased gradient estimate may replace ∂_jU (its noise has mean zero given θ). On a
// Gaussian target the left side under a sampler's stationary law is exactly Var_h(θ_j)/Var_π(θ_j):
// the excess T_j − 1 is the variance inflation the step size causes. For SGHMC (kick–drift, fixed
// α = hC) both the discretisation bias (≈ h²/4 on a unit-curvature mode) and the gradient-noise
// heat hV/(2C) = h²V/(2α) grow like h²; for SGLD like h. So, measured over a window of the chain,
//   h ← h · (ε / (T̄ − 1))^{1/p},   p = 2 (SGHMC), 1 (SGLD),
// moves the excess to the tolerance ε in one step when the power law holds, and a few windows
// otherwise; growth and shrinkage per window are capped.
//
// The starting rule. In coordinates where the posterior is roughly standardised (a Preconditioned
// model whose LLᵀ approximates the covariance), the curvature scale is λ ≈ 1: SGHMC starts at
// h = ρ/√λ with ρ = 0.5 (phase advance per step of the stiffest mode) and C = α/h with α = 0.1
// (momentum decay per step); SGLD at h = ρ²/(2λ). Outside such coordinates pass a bound on the
// Hessian's largest eigenvalue as λ (logistic regression: λ_max(XᵀX)/4 + 1/s²).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "sgmcmc/core/model.hpp"
#include "sgmcmc/core/types.hpp"

namespace sgmcmc {

/// Running estimate of the configurational temperature T_j = mean over steps of
/// (θ_j − c_j) g_j, g the gradient the sampler used at θ (see the header comment). Fixed size.
template <class Scalar, int Dim>
class ConfigurationalTemperature {
 public:
  static_assert(Dim > 0, "Dim must be positive");
  using Vec = Vector<Scalar, Dim>;

  ConfigurationalTemperature() noexcept { reset(Vec::Zero()); }

  /// Forgets every sample; c becomes the new centre (any constant: the posterior mean or a mode
  /// gives the least noisy estimate).
  template <class C>
  void reset(const Eigen::MatrixBase<C>& centre) noexcept {
    centre_ = centre;
    sum_.setZero();
    count_ = 0;
  }
  /// Forgets every sample, keeping the centre.
  void clear() noexcept {
    sum_.setZero();
    count_ = 0;
  }

  /// Adds one (θ, g) pair (g: the gradient of U, or an unbiased estimate of it, at θ).
  template <class T, class G>
  void add(const T& theta, const G& g) noexcept {
    for (Index j = 0; j < Dim; ++j)
      sum_[j] += (Scalar(theta.coeff(j)) - centre_[j]) * Scalar(g.coeff(j));
    ++count_;
  }

  /// Pairs added since the last reset.
  std::uint64_t count() const noexcept { return count_; }
  /// T_j per coordinate (NaN before the first pair).
  Vec temperature() const noexcept {
    if (count_ == 0) return Vec::Constant(std::numeric_limits<Scalar>::quiet_NaN());
    return sum_ / Scalar(count_);
  }
  /// The mean of T_j over coordinates: its excess over 1 is the average variance inflation.
  Scalar mean_temperature() const noexcept {
    if (count_ == 0) return std::numeric_limits<Scalar>::quiet_NaN();
    return sum_.sum() / (Scalar(count_) * Scalar(Dim));
  }
  /// The largest T_j: the worst coordinate's inflation, which a mean over many well-sampled
  /// coordinates can hide (a few stiff or one-sided directions carry the bias).
  Scalar max_temperature() const noexcept {
    if (count_ == 0) return std::numeric_limits<Scalar>::quiet_NaN();
    return sum_.maxCoeff() / Scalar(count_);
  }

 private:
  Vec centre_;
  Vec sum_;
  std::uint64_t count_ = 0;
};

/// A model adaptor that feeds every (θ, ∇Ũ(θ)) it computes to a ConfigurationalTemperature (and,
/// if given, copies ∇Ũ to *last: the paired noise estimate below compares it with a second
/// batch). Use it with samplers that evaluate one gradient per step at the chain's position (SGLD;
/// SGHMC, SGNHT kick–drift), so that the pairs follow the chain; the model, the estimator and
/// *last are held by pointer and must outlive the adaptor.
template <class Model, class Scalar, int Dim>
class TemperatureProbe {
 public:
  TemperatureProbe(const Model& model, ConfigurationalTemperature<Scalar, Dim>* estimate,
                   Vector<Scalar, Dim>* last = nullptr) noexcept
      : model_(&model), estimate_(estimate), last_(last) {}

  template <class Theta, class G>
  void gradient(const Theta& theta, G& g) const noexcept {
    detail::call_gradient<Scalar, Dim>(*model_, theta.data(), g.data());
    if (estimate_ != nullptr) estimate_->add(theta, g);
    if (last_ != nullptr) *last_ = g;
  }
  const Model& model() const noexcept { return *model_; }

 private:
  const Model* model_;
  ConfigurationalTemperature<Scalar, Dim>* estimate_;
  Vector<Scalar, Dim>* last_;
};

/// Diagonal estimate V̂ of a stochastic gradient's noise covariance in the sampler's own
/// coordinates (through any adaptor: preconditioning, control variates), from pairs of gradients
/// at the same point with independent batches: E[(g₁ − g₂)²/2 | θ] = V(θ) per coordinate. Pairs
/// enter with weight max(λ, 1/t) (a running mean for the first 1/λ pairs, then forgetting), so
/// V̂ follows the chain. Unlike GradientNoiseEstimator (data/gradient_noise.hpp) it needs no
/// per-example gradients, at the price of one extra gradient per pair.
template <class Scalar, int Dim>
class PairedNoiseEstimate {
 public:
  static_assert(Dim > 0, "Dim must be positive");
  using Vec = Vector<Scalar, Dim>;

  /// λ ∈ [0, 1] (0: a running mean forever); out of range is taken as 0.
  explicit PairedNoiseEstimate(Scalar smoothing = Scalar(0.02)) noexcept
      : smoothing_(smoothing >= Scalar(0) && smoothing <= Scalar(1) ? smoothing : Scalar(0)) {
    reset();
  }
  void reset() noexcept {
    vhat_.setZero();
    count_ = 0;
  }
  /// Folds in one pair; ignored (false) if it is not finite.
  template <class A, class B>
  bool add(const Eigen::MatrixBase<A>& g1, const Eigen::MatrixBase<B>& g2) noexcept {
    const Vec v = Scalar(0.5) * (g1 - g2).cwiseAbs2();
    if (!detail::all_finite(v)) return false;
    ++count_;
    const Scalar w = std::max(smoothing_, Scalar(1) / Scalar(count_));
    vhat_ = (Scalar(1) - w) * vhat_ + w * v;
    return true;
  }
  /// V̂ (zero before the first pair).
  const Vec& estimate() const noexcept { return vhat_; }
  std::uint64_t count() const noexcept { return count_; }

 private:
  Scalar smoothing_;
  Vec vhat_;
  std::uint64_t count_ = 0;
};

/// Parameters of the starting rule and of the temperature adaptation (header comment).
template <class Scalar>
struct SGStepSizeParams {
  Scalar phase{Scalar(0.5)};       ///< ρ = h√λ: SGHMC's starting phase advance per step
  Scalar decay{Scalar(0.1)};       ///< α = hC: SGHMC's momentum decay per step (kept fixed)
  Scalar tolerance{Scalar(0.02)};  ///< ε: the excess temperature T̄ − 1 aimed at
  Scalar max_growth{Scalar(2)};    ///< largest factor h may grow by in one adaptation
  Scalar max_shrink{Scalar(4)};    ///< largest factor h may shrink by in one adaptation
};

/// SGHMC's starting h = ρ/√λ for curvature scale λ > 0 (then C = α/h).
template <class Scalar>
Scalar sghmc_initial_step(Scalar curvature, const SGStepSizeParams<Scalar>& p = {}) noexcept {
  return p.phase / std::sqrt(curvature);
}
/// SGLD's starting h = ρ²/(2λ): the overdamped step with the same per-step variance bias as
/// SGHMC's starting rule at α = 1/2 (≈ h λ/2 against h²λ/4).
template <class Scalar>
Scalar sgld_initial_step(Scalar curvature, const SGStepSizeParams<Scalar>& p = {}) noexcept {
  return p.phase * p.phase / (Scalar(2) * curvature);
}

/// One adaptation of h from a window's mean temperature: h (ε/(T̄ − 1))^{1/order}, the factor
/// clamped to [1/max_shrink, max_growth]; an excess ≤ 0 (within noise of none) grows h by
/// max_growth; a non-finite temperature shrinks it by max_shrink. order: 2 for SGHMC, SGNHT
/// (kick–drift at fixed α), 1 for SGLD.
template <class Scalar>
Scalar adapt_sg_step(Scalar h, Scalar mean_temperature, Scalar order,
                     const SGStepSizeParams<Scalar>& p = {}) noexcept {
  if (!std::isfinite(mean_temperature)) return h / p.max_shrink;
  const Scalar excess = mean_temperature - Scalar(1);
  if (!(excess > Scalar(0))) return h * p.max_growth;
  Scalar f = std::pow(p.tolerance / excess, Scalar(1) / order);
  f = f > p.max_growth ? p.max_growth : f;
  f = f < Scalar(1) / p.max_shrink ? Scalar(1) / p.max_shrink : f;
  return h * f;
}

}  // namespace sgmcmc
