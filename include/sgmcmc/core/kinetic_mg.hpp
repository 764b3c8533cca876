// SPDX-License-Identifier: MIT
// Monomial-gamma kinetic energies (MATH.md §3.1) and their softened forms K_c for a = 1, 2
// (§3.2): stable energies, gradients, Hessian diagonals, and exact draws via Gamma variates.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

#include "sgmcmc/core/math.hpp"
#include "sgmcmc/core/noise.hpp"
#include "sgmcmc/core/types.hpp"
#include "sgmcmc/port/rng.hpp"

namespace sgmcmc {

/// Default cap on the proposals of every rejection loop in this header (Marsaglia–Tsang, the
/// exp(−K_c) accept step); the single draws take it as their max_tries parameter. It bounds a
/// draw's time. With a good RNG a loop whose proposals are accepted with probability at least q
/// reaches the cap with probability at most (1 − q)^max_tries:
///   * Marsaglia–Tsang, any shape: q ≥ 0.95 (their efficiency bound for shape ≥ 1; shapes < 1 run
///     it at shape + 1), so (0.05)^1024 < 1e−1332;
///   * the exp(−K_c) accept step: q ≥ SoftMonomialGammaKinetic::accept_floor() (2^{−2/c} for
///     a = 1, e^{−2/c} for a = 2); (1 − q)^1024 < 2^−64 needs c ≥ 0.44 (a = 1) or c ≥ 0.64
///     (a = 2), e.g. < 1e−493 at c = 5. For a softer c pass max_tries ≥ 44.4 / q to sample1.
/// Reaching the cap is reported (a draw's *exhausted flag, false from sample(), CapReached from
/// the samplers): with the default and c ≥ 0.64 it means a failed RNG.
inline constexpr int kMaxRejectionTries = 1024;

namespace detail {
/// ln x for gamma_variate's positive arguments: log_positive (log's values for positive normal
/// x, without its special cases) in one function, since six inlined call sites cost the
/// Cortex-M4F 1.9 KB of flash at -O2. −inf below the smallest normal: only v = w³ gets there
/// (w = 1 + c·x, fused), where x ≈ −1/c = −3√d, and then x²/2 + d − dv + d ln v ≈ d (5.5 + ln v)
/// is below −54 in float (−468 in double) with any logarithm, under ln U for every uniform of up
/// to 64 bits: the same decisions as log's.
template <class S>
[[gnu::noinline]] S gamma_log(S x) noexcept {
  return select(x >= std::numeric_limits<S>::min(), log_positive(x),
                -std::numeric_limits<S>::infinity());
}
}  // namespace detail

/// One Gamma(shape, scale) variate (density ∝ x^{shape−1} e^{−x/scale}).
/// shape = 1 (exponential) and shape = 2 (sum of two exponentials) use closed forms of one or
/// two uniforms (bounded time); other shapes use Marsaglia & Tsang (2000), at most max_tries
/// proposals (two RNG words each), with the boost G(a) = G(a + 1) U^{1/a} for a < 1. Logarithms
/// by detail::gamma_log (log's values) and U^{1/a} = e^{ln U / a} by detail::exp_nonpositive
/// (core/math.hpp): no libm call and no errno, and on the Cortex-M4F no newlib logf and powf
/// (2.6–2.8 KB of flash; docs/PERFORMANCE.md "Cortex-M4F"). Returns NaN
/// for shape or scale not finite and > 0 or max_tries < 1 (no word drawn), and NaN with
/// *exhausted set to true (when given) if every proposal was rejected.
template <class Scalar, class Rng>
Scalar gamma_variate(Rng& rng, Scalar shape, Scalar scale, bool* exhausted = nullptr,
                     int max_tries = kMaxRejectionTries) noexcept {
  check_rng<Rng>();
  const auto log = [](Scalar x) noexcept { return detail::gamma_log(x); };
  if (!(shape > Scalar(0)) || !(scale > Scalar(0)) || !std::isfinite(shape) ||
      !std::isfinite(scale) || max_tries < 1) {
    return std::numeric_limits<Scalar>::quiet_NaN();
  }
  if (shape == Scalar(1)) return -scale * log(uniform_open01<Scalar>(rng));
  if (shape == Scalar(2)) {
    const Scalar u1 = uniform_open01<Scalar>(rng);
    const Scalar u2 = uniform_open01<Scalar>(rng);
    return -scale * (log(u1) + log(u2));
  }
  const bool boost = shape < Scalar(1);
  const Scalar a = boost ? shape + Scalar(1) : shape;
  const Scalar d = a - Scalar(1) / Scalar(3);
  const Scalar c = Scalar(1) / std::sqrt(Scalar(9) * d);
  for (int t = 0; t < max_tries; ++t) {
    const Scalar x = normal<Scalar>(rng);
    const Scalar w = Scalar(1) + c * x;
    if (!(w > Scalar(0))) continue;
    const Scalar v = w * w * w;
    const Scalar lu = log(uniform_open01<Scalar>(rng));
    if (lu < Scalar(0.5) * x * x + d - d * v + d * log(v)) {
      Scalar g = d * v;
      if (boost) g *= detail::exp_nonpositive(log(uniform_open01<Scalar>(rng)) / shape);
      return scale * g;
    }
  }
  if (exhausted) *exhausted = true;
  return std::numeric_limits<Scalar>::quiet_NaN();
}

/// A random sign ±1 from the top bit of one word.
template <class Scalar, class Rng>
Scalar random_sign(Rng& rng) noexcept {
  check_rng<Rng>();
  return (rng() >> 63) != 0 ? Scalar(1) : Scalar(-1);
}

/// Fills p[0, n) with kinetic.sample1(rng, &failed) draws, coordinate 0 first, and stops at the
/// first failed one (NaN, at most n·kMaxRejectionTries proposals in all). True iff all succeeded.
template <class Kinetic, class Rng, class Scalar>
bool sample_each(const Kinetic& kinetic, Rng& rng, Scalar* p, Index n) noexcept {
  for (Index i = 0; i < n; ++i) {
    bool failed = false;
    p[i] = kinetic.sample1(rng, &failed);
    if (failed) return false;
  }
  return true;
}

/// The monomial-gamma kinetic K(p; m, a) = Σ_i |p_i|^{1/a} / m (MATH.md §3.1), any a > 0,
/// unsoftened. Its gradient jumps at 0 (a = 1) or is unbounded there (a > 1), so samplers use
/// SoftMonomialGammaKinetic; this one is the proposal of its exact draw and a reference.
/// Class invariant: shape (a) and mass (m) finite and > 0 (checked by valid()).
template <class Scalar>
struct MonomialGammaKinetic {
  /// The fused engine computes gradient1 once per value of p (core/recipe.hpp, DhCache).
  static constexpr bool costly_gradient1 = true;
  Scalar shape{1};  ///< a: |p_i|^{1/a} ~ Gamma(a, m); a = 1/2 is Gaussian, 1 Laplace
  Scalar mass{1};   ///< m

  /// True iff a and m are finite and > 0.
  bool valid() const noexcept {
    return shape > Scalar(0) && mass > Scalar(0) && std::isfinite(shape) && std::isfinite(mass);
  }
  /// |p|^{1/a} / m for one coordinate.
  Scalar energy1(Scalar p) const noexcept {
    return std::pow(std::abs(p), Scalar(1) / shape) / mass;
  }
  /// sign(p) |p|^{1/a − 1} / (a m); 0 at p = 0 (the symmetric value: a subgradient for a = 1,
  /// and for a > 1 the derivative is unbounded there).
  Scalar gradient1(Scalar p) const noexcept {
    if (p == Scalar(0)) return Scalar(0);
    const Scalar q = std::abs(p);
    const Scalar g = std::pow(q, Scalar(1) / shape - Scalar(1)) / (shape * mass);
    return p > Scalar(0) ? g : -g;
  }
  /// (1/a)(1/a − 1)|p|^{1/a − 2} / m for p ≠ 0 (0 for a = 1; ±∞ at p = 0 otherwise).
  Scalar curvature1(Scalar p) const noexcept {
    const Scalar e = Scalar(1) / shape;
    if (e == Scalar(1)) return Scalar(0);
    return e * (e - Scalar(1)) * std::pow(std::abs(p), e - Scalar(2)) / mass;
  }
  /// Σ_i K(p_i).
  template <class X>
  Scalar energy(const Eigen::MatrixBase<X>& p) const noexcept {
    Scalar s(0);
    for (Index i = 0; i < p.size(); ++i) s += energy1(p[i]);
    return s;
  }
  /// ∇K as an Eigen expression.
  template <class X>
  auto gradient(const Eigen::MatrixBase<X>& p) const noexcept {
    const MonomialGammaKinetic k = *this;
    return p.derived().unaryExpr([k](Scalar v) { return k.gradient1(v); });
  }
  /// One exact draw: |p| = G^a, G ~ Gamma(a, m), random sign (MATH.md §3.1), at most max_tries
  /// Marsaglia–Tsang proposals. NaN, and *exhausted (when given) set to true, if a or m is
  /// invalid or max_tries < 1 (no word drawn) or the cap was reached.
  template <class Rng>
  Scalar sample1(Rng& rng, bool* exhausted = nullptr,
                 int max_tries = kMaxRejectionTries) const noexcept {
    bool capped = !valid() || max_tries < 1;
    const Scalar g = capped ? std::numeric_limits<Scalar>::quiet_NaN()
                            : gamma_variate<Scalar>(rng, shape, mass, &capped, max_tries);
    if (capped) {
      if (exhausted) *exhausted = true;
      return g;
    }
    const Scalar q = shape == Scalar(1) ? g : (shape == Scalar(2) ? g * g : std::pow(g, shape));
    return random_sign<Scalar>(rng) * q;
  }
  /// p_i ~ exp(−K) independently for every coordinate of p (a vector or map). Returns false if
  /// some draw failed (a, m invalid, or a draw reached the cap): that coordinate is then NaN and
  /// the draws stop there.
  template <class Rng, class X>
  bool sample(Rng& rng, X&& p) const noexcept {
    return sample_each(*this, rng, p.data(), p.size());
  }
};

/// The softened monomial-gamma kinetic K_c of MATH.md §3.2 for a ∈ {1, 2}, as in the SGMGT code:
///   a = 1:  K_c = |p|/m + (2/c) log(1 + e^{−c|p|/m})          (= (2/c) log 2cosh(cp/2m))
///   a = 2:  K_c = u + 4/(c(1 + e^{cu})),  u = √|p|/m
/// Everything is evaluated through exp of non-positive arguments, log1p and tanh, so no value
/// overflows for any finite p.
///
/// The guard at p = 0 for a = 2. With x = c√|p|/(2m), ∂²K_c = c³ tanh x (2x sech²x − tanh x) /
/// (32 m⁴ x³) ≈ c²/(16 m³ √|p|) → +∞ as p → 0 (integrable, so E ∂²K_c is finite). The Hessian
/// diagonal is therefore evaluated with x floored at kCurvatureFloor = 1e−3, i.e. at
/// |p| ≥ 4·10⁻⁶ m²/c²: it is capped at ≈ 1000 c³/(32 m⁴), and E_π ∂²K_c (which the thermostat
/// balances against E_π (∇K_c)²) moves by a relative ≈ 1e−3 (1.3e−3 at m = 1.2, c = 3, measured
/// by quadrature in tests/mg), below the O(h) discretisation bias at usual step sizes. The gradient
/// needs no floor: it is ψ·(tanh x / x)·c/(4m²) with ψ = tanh x, exactly 0 at p = 0 and ≈ c²
/// sign(p)√|p|/(8m³) near it. Even so an SGMGT chain with a = 2 should not start at p = 0 (the
/// capped curvature kicks the thermostat hard): start it from a draw of exp(−K_c). Class invariant:
/// shape ∈ {1, 2}, mass and softness finite and > 0 (checked by valid()).
template <class Scalar>
struct SoftMonomialGammaKinetic {
  /// The fused engine computes gradient1 once per value of p (core/recipe.hpp, DhCache).
  static constexpr bool costly_gradient1 = true;
  int shape{1};    ///< a ∈ {1, 2}
  Scalar mass{1};  ///< m
  Scalar softness{5};  ///< c: K_c → K as c → ∞ (0 < K_c − K ≤ 2 ln2/c for a = 1, 2/c for a = 2)

  /// Floor on x = c√|p|/(2m) in the a = 2 Hessian diagonal (see the class comment).
  static constexpr Scalar kCurvatureFloor = Scalar(1e-3);

  /// True iff a ∈ {1, 2} and m, c are finite and > 0.
  bool valid() const noexcept {
    return (shape == 1 || shape == 2) && mass > Scalar(0) && softness > Scalar(0) &&
           std::isfinite(mass) && std::isfinite(softness);
  }

  /// K_c for one coordinate.
  Scalar energy1(Scalar p) const noexcept {
    const Scalar c = softness;
    if (shape == 1) {
      const Scalar q = std::abs(p) / mass;
      return q + (Scalar(2) / c) * detail::log1p(detail::exp(-c * q));
    }
    const Scalar u = std::sqrt(std::abs(p)) / mass;
    const Scalar e = detail::exp(-c * u);
    return u + (Scalar(4) / c) * e / (Scalar(1) + e);
  }

  /// dK_c/dp for one coordinate: tanh(cp/2m)/m (a = 1); sign(p) ψ²/(2m√|p|) (a = 2).
  Scalar gradient1(Scalar p) const noexcept {
    const Scalar c = softness;
    const Scalar m = mass;
    if (shape == 1) return detail::tanh(c * p / (Scalar(2) * m)) / m;
    const Scalar x = c * std::sqrt(std::abs(p)) / (Scalar(2) * m);
    if (x == Scalar(0)) return Scalar(0);
    const Scalar psi = detail::tanh(x);
    const Scalar g = psi * (psi / x) * c / (Scalar(4) * m * m);
    return p > Scalar(0) ? g : -g;
  }

  /// d²K_c/dp² for one coordinate (the Hessian diagonal; K_c is separable). Always > 0 for
  /// a = 1; for a = 2 it is positive near 0 and negative in the tails, and capped near 0.
  Scalar curvature1(Scalar p) const noexcept {
    const Scalar c = softness;
    const Scalar m = mass;
    if (shape == 1) {
      const Scalar e = detail::exp(-c * std::abs(p) / m);  // sech²(y) = 4e^{−2|y|}/(1 + e^{−2|y|})²
      const Scalar d = Scalar(1) + e;
      return (c / (Scalar(2) * m * m)) * Scalar(4) * e / (d * d);
    }
    Scalar x = c * std::sqrt(std::abs(p)) / (Scalar(2) * m);
    if (x < kCurvatureFloor) x = kCurvatureFloor;
    const Scalar t = detail::tanh(x);
    const Scalar e = detail::exp(Scalar(-2) * x);
    const Scalar d = Scalar(1) + e;
    const Scalar sech2 = Scalar(4) * e / (d * d);
    const Scalar m2 = m * m;
    return (c * c * c) * t * (Scalar(2) * x * sech2 - t) / (Scalar(32) * m2 * m2 * x * x * x);
  }

  /// The SGMGT thermostat force (∇K_c)² − ∂²K_c for one coordinate (MATH.md §3.2).
  Scalar thermostat_force1(Scalar p) const noexcept {
    const Scalar g = gradient1(p);
    return g * g - curvature1(p);
  }

  /// log of the accept probability exp(K − K_c) ≤ 0 of the exact draw, for an MG draw whose
  /// Gamma variate is gm = |p|^{1/a} (so K(p) = gm/m).
  Scalar log_accept(Scalar gm) const noexcept {
    const Scalar c = softness;
    const Scalar q = gm / mass;
    if (shape == 1) return -(Scalar(2) / c) * detail::log1p(detail::exp(-c * q));
    const Scalar e = detail::exp(-c * q);
    return -(Scalar(4) / c) * e / (Scalar(1) + e);
  }

  /// Σ_i K(p_i).
  template <class X>
  Scalar energy(const Eigen::MatrixBase<X>& p) const noexcept {
    Scalar s(0);
    for (Index i = 0; i < p.size(); ++i) s += energy1(p[i]);
    return s;
  }
  /// ∇K_c as an Eigen expression (element-wise).
  template <class X>
  auto gradient(const Eigen::MatrixBase<X>& p) const noexcept {
    const SoftMonomialGammaKinetic k = *this;
    return p.derived().unaryExpr([k](Scalar v) { return k.gradient1(v); });
  }
  /// diag ∇²K_c as an Eigen expression.
  template <class X>
  auto curvature(const Eigen::MatrixBase<X>& p) const noexcept {
    const SoftMonomialGammaKinetic k = *this;
    return p.derived().unaryExpr([k](Scalar v) { return k.curvature1(v); });
  }
  /// (∇K_c)² − diag ∇²K_c as an Eigen expression.
  template <class X>
  auto thermostat_force(const Eigen::MatrixBase<X>& p) const noexcept {
    const SoftMonomialGammaKinetic k = *this;
    return p.derived().unaryExpr([k](Scalar v) { return k.thermostat_force1(v); });
  }

  /// The unsoftened kinetic with the same a and m: the proposal of the exact draw.
  MonomialGammaKinetic<Scalar> unsoftened() const noexcept { return {Scalar(shape), mass}; }

  /// Lower bound q on the accept probability of each proposal of the exact draw (sample1):
  /// 2^{−2/c} for a = 1, e^{−2/c} for a = 2 (from 0 < K_c − K ≤ 2 ln2/c, 2/c). A draw fails with
  /// probability at most (1 − q)^max_tries; max_tries ≥ 44.4 / q keeps that below 2^−64.
  Scalar accept_floor() const noexcept {
    const Scalar two_over_c = Scalar(2) / softness;
    return shape == 1 ? std::exp2(-two_over_c) : std::exp(-two_over_c);
  }

  /// One exact draw from exp(−K_c) (MATH.md §3.2): propose p from exp(−K) (|p| = G^a,
  /// G ~ Gamma(a, m), random sign) and accept with probability exp(K(p) − K_c(p)) ≥
  /// accept_floor(), at most max_tries proposals. If all are rejected (with a good RNG:
  /// probability ≤ (1 − accept_floor())^max_tries, see kMaxRejectionTries; an all-ones RNG, whose
  /// uniforms are ≈ 1, rejects every proposal) the last proposal is returned and *exhausted is
  /// set. For an invalid kinetic or max_tries < 1: NaN and *exhausted set, no word drawn.
  template <class Rng>
  Scalar sample1(Rng& rng, bool* exhausted = nullptr,
                 int max_tries = kMaxRejectionTries) const noexcept {
    Scalar p = std::numeric_limits<Scalar>::quiet_NaN();
    if (valid() && max_tries >= 1) {
      for (int t = 0; t < max_tries; ++t) {
        const Scalar g = gamma_variate<Scalar>(rng, Scalar(shape), mass);
        p = random_sign<Scalar>(rng) * (shape == 1 ? g : g * g);
        if (detail::log(uniform_open01<Scalar>(rng)) < log_accept(g)) return p;
      }
    }
    if (exhausted) *exhausted = true;
    return p;
  }
  /// p_i ~ exp(−K_c) independently for n scalars at p (the energy-term contract used by momentum
  /// refreshes). Returns false if some draw failed (reached the rejection cap: its value is then
  /// the last proposal, not an exact draw; the draws stop there).
  template <class Rng>
  bool sample(Rng& rng, Scalar* p, Index n) const noexcept {
    return sample_each(*this, rng, p, n);
  }
  template <class Rng, class X>
  bool sample(Rng& rng, X&& p) const noexcept {
    return sample(rng, p.data(), p.size());
  }
};

}  // namespace sgmcmc
