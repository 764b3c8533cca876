// SPDX-License-Identifier: MIT
// Test targets with known laws (MATH.md §5): Gaussians, the double well, the banana, a noisy-
// gradient wrapper (§5.3(a)), 1-D grid densities for exact draws, and linear-chain oracles (§1.3).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include <Eigen/Core>

#include "sgmcmc/core/types.hpp"
#include "sgmcmc/host/rng.hpp"

namespace sgmcmc::test {

// ---------------------------------------------------------------------------------------------
// Models: gradient(theta, grad) const writes ∇U, potential(theta) const returns U = −log density.
// Written as templates over the argument types (core/model.hpp): the engine passes Eigen maps of
// compile-time size, tests may pass fixed-size vectors.

/// Standard normal in Dim dimensions: U = θᵀθ / 2.
template <class Scalar, int Dim>
struct StandardNormal {
  template <class Theta, class Grad>
  void gradient(const Theta& theta, Grad& grad) const noexcept {
    grad = theta;
  }
  template <class Theta>
  Scalar potential(const Theta& theta) const noexcept {
    return theta.squaredNorm() / Scalar(2);
  }
};

/// The double well U = θ⁴ − 2θ² (MATH.md §5.1; the SGHMC paper's −2θ² + θ⁴ of §5.2 is the same
/// function). Modes ±1, barrier height 1. Oracles verified by shared/math/check_targets.py.
template <class Scalar>
struct DoubleWell {
  static constexpr double normaliser = 5.36516023783;      ///< Z = ∫ exp(−U)
  static constexpr double second_moment = 0.832745487128;  ///< E θ²
  static constexpr double fourth_moment = 1.08274548713;   ///< E θ⁴
  static double u(double x) noexcept { return x * x * x * x - 2.0 * x * x; }

  template <class Theta, class Grad>
  void gradient(const Theta& theta, Grad& grad) const noexcept {
    const Scalar x = theta[0];
    grad[0] = Scalar(4) * x * x * x - Scalar(4) * x;
  }
  template <class Theta>
  Scalar potential(const Theta& theta) const noexcept {
    const Scalar x2 = theta[0] * theta[0];
    return x2 * x2 - Scalar(2) * x2;
  }
};

/// Correlated 2-D Gaussian N(0, Σ), Σ = [[1, ρ], [ρ, 1]] (default ρ = 0.9, the SGHMC paper's
/// Fig. 3 target, MATH.md §5.2): U = θᵀΣ⁻¹θ / 2.
template <class Scalar>
struct CorrelatedGaussian2 {
  double rho = 0.9;

  /// Σ in double.
  Eigen::Matrix2d covariance() const noexcept {
    Eigen::Matrix2d s;
    s << 1.0, rho, rho, 1.0;
    return s;
  }
  /// Σ⁻¹ in double.
  Eigen::Matrix2d precision() const noexcept {
    Eigen::Matrix2d p;
    p << 1.0, -rho, -rho, 1.0;
    return p / (1.0 - rho * rho);
  }

  template <class Theta, class Grad>
  void gradient(const Theta& theta, Grad& grad) const noexcept {
    const Scalar k = Scalar(1.0 / (1.0 - rho * rho));
    const Scalar r = Scalar(rho);
    grad[0] = k * (theta[0] - r * theta[1]);
    grad[1] = k * (theta[1] - r * theta[0]);
  }
  template <class Theta>
  Scalar potential(const Theta& theta) const noexcept {
    const Scalar k = Scalar(1.0 / (1.0 - rho * rho));
    return k * (theta[0] * theta[0] - Scalar(2 * rho) * theta[0] * theta[1] + theta[1] * theta[1]) /
           Scalar(2);
  }
};

/// The banana of MATH.md §5.1: U = θ₁⁴/10 + (4(θ₂ + 1.2) − θ₁²)²/2.
/// θ₂ | θ₁ ~ N(θ₁²/4 − 1.2, 1/16), θ₁ ∝ exp(−θ₁⁴/10). Oracles from shared/math/check_targets.py.
template <class Scalar>
struct Banana {
  static constexpr double normaliser = 2.02013792639;     ///< Z
  static constexpr double theta1_second = 1.06881544366;  ///< E θ₁²
  static constexpr double theta2_mean = -0.932796139084;  ///< E θ₂
  /// The θ₁-marginal potential θ₁⁴/10.
  static double u1(double x) noexcept { return x * x * x * x / 10.0; }

  template <class Theta, class Grad>
  void gradient(const Theta& theta, Grad& grad) const noexcept {
    const Scalar a = theta[0];
    const Scalar s = Scalar(4) * (theta[1] + Scalar(1.2)) - a * a;
    grad[0] = Scalar(0.4) * a * a * a - Scalar(2) * a * s;
    grad[1] = Scalar(4) * s;
  }
  template <class Theta>
  Scalar potential(const Theta& theta) const noexcept {
    const Scalar a2 = theta[0] * theta[0];
    const Scalar s = Scalar(4) * (theta[1] + Scalar(1.2)) - a2;
    return a2 * a2 / Scalar(10) + s * s / Scalar(2);
  }
};

/// Additive Gaussian gradient noise (MATH.md §5.3(a)): gradient() returns ∇U(θ) + N(0, diag V),
/// a fresh draw per call from the wrapper's own RNG (mutable: gradient() stays const, as the
/// model concept requires). potential() is the noise-free U (full data), for HMC's test.
template <class Model, class Scalar, int Dim>
class NoisyGradient {
 public:
  /// @param[in] model the exact model; @param[in] v the noise variance per coordinate;
  /// @param[in] seed, stream: the wrapper's RNG (independent of the sampler's).
  NoisyGradient(const Model& model, const Vector<Scalar, Dim>& v, std::uint64_t seed,
                std::uint64_t stream = 0)
      : model_(model), sd_(v.cwiseSqrt()), rng_(seed, stream) {}
  /// Isotropic V = v I.
  NoisyGradient(const Model& model, Scalar v, std::uint64_t seed, std::uint64_t stream = 0)
      : NoisyGradient(model, Vector<Scalar, Dim>::Constant(v), seed, stream) {}

  template <class Theta, class Grad>
  void gradient(const Theta& theta, Grad& grad) const noexcept {
    model_.gradient(theta, grad);
    Vector<Scalar, Dim> z;
    rng_.fill_normal(z);
    grad += sd_.cwiseProduct(z);
  }
  template <class Theta>
  Scalar potential(const Theta& theta) const noexcept {
    return model_.potential(theta);
  }
  const Model& model() const noexcept { return model_; }

 private:
  Model model_;
  Vector<Scalar, Dim> sd_;
  mutable host::Rng rng_;
};

// ---------------------------------------------------------------------------------------------
// 1-D densities on a grid: exact bin masses by quadrature, CDF, and exact draws by inverse CDF.

/// exp(−U(x)) on [lo, hi], tabulated on `cells` cells with Simpson's rule per cell. The CDF is
/// the cumulative Simpson sum, linear inside a cell; quantile() inverts it (binary search + linear
/// interpolation): for cells of width 1e-4 the inverse-CDF error is O(1e-8) in x, far below
/// every tolerance that uses it.
class GridDensity {
 public:
  template <class U>
  GridDensity(const U& u, double lo, double hi, int cells) : lo_(lo), hi_(hi), cum_(cells + 1) {
    dx_ = (hi - lo) / cells;
    cum_[0] = 0.0;
    for (int i = 0; i < cells; ++i) {
      const double a = lo + i * dx_;
      const double b = a + dx_;
      cum_[static_cast<std::size_t>(i) + 1] =
          cum_[static_cast<std::size_t>(i)] +
          dx_ / 6.0 * (std::exp(-u(a)) + 4.0 * std::exp(-u(0.5 * (a + b))) + std::exp(-u(b)));
    }
    z_ = cum_.back();
    for (double& c : cum_) c /= z_;
  }

  /// ∫_lo^hi exp(−U): the normaliser when [lo, hi] holds all but a negligible mass.
  double normaliser() const noexcept { return z_; }

  /// F(x).
  double cdf(double x) const noexcept {
    if (x <= lo_) return 0.0;
    if (x >= hi_) return 1.0;
    const double s = (x - lo_) / dx_;
    const auto i = std::min(static_cast<std::size_t>(s), cum_.size() - 2);
    const double f = s - static_cast<double>(i);
    return cum_[i] + f * (cum_[i + 1] - cum_[i]);
  }

  /// F⁻¹(u), u in (0, 1).
  double quantile(double u) const noexcept {
    const auto it = std::upper_bound(cum_.begin(), cum_.end(), u);
    std::size_t i = static_cast<std::size_t>(it - cum_.begin());
    i = std::clamp<std::size_t>(i, 1, cum_.size() - 1) - 1;
    const double w = cum_[i + 1] - cum_[i];
    const double f = w > 0.0 ? (u - cum_[i]) / w : 0.5;
    return lo_ + (static_cast<double>(i) + f) * dx_;
  }

  /// One exact draw (inverse CDF of a 53-bit uniform in (0, 1)).
  template <class Rng>
  double draw(Rng& rng) const noexcept {
    const double u = (static_cast<double>(rng() >> 11) + 0.5) * 1.1102230246251565e-16;
    return quantile(u);
  }

 private:
  double lo_;
  double hi_;
  double dx_;
  double z_ = 1.0;
  std::vector<double> cum_;
};

/// True masses of `bins` equal bins on [lo, hi] of the density exp(−U) / z, each by composite
/// Simpson with `sub` sub-intervals (error ~ (w/sub)⁴ max|f⁗|: < 1e-12 for the targets here).
template <class U>
std::vector<double> bin_masses(const U& u, double z, double lo, double hi, int bins, int sub = 64) {
  std::vector<double> p(static_cast<std::size_t>(bins));
  const double w = (hi - lo) / bins;
  const double dx = w / sub;
  for (int b = 0; b < bins; ++b) {
    double s = 0.0;
    for (int k = 0; k < sub; ++k) {
      const double a = lo + b * w + k * dx;
      s += dx / 6.0 * (std::exp(-u(a)) + 4.0 * std::exp(-u(a + 0.5 * dx)) + std::exp(-u(a + dx)));
    }
    p[static_cast<std::size_t>(b)] = s / z;
  }
  return p;
}

// ---------------------------------------------------------------------------------------------
// Linear-Gaussian oracles (MATH.md §1.3, the matrices of shared/math/check_discrete.py):
// on a Gaussian target every sampler here is a linear recursion x' = A x + w, Cov w = W, whose
// exact stationary covariance S solves S = A S Aᵀ + W.

/// S = Σ_k A^k W (A^k)ᵀ by the doubling recursion S ← S + A S Aᵀ, A ← A², which converges
/// quadratically when the spectral radius ρ of A is below 1 (64 doublings sum 2⁶⁴ terms). If the
/// last doubling still changed S (relative 1e-9), or S exceeds 1e13 W (which needs 1 − ρ < 1e-13:
/// eigenvalues on the unit circle, e.g. naive SGHMC, where rounding in A^(2^k) would otherwise fake
/// convergence), there is no stationary law and every entry is NaN.
template <int N>
Eigen::Matrix<double, N, N> stationary_covariance(Eigen::Matrix<double, N, N> a,
                                                  Eigen::Matrix<double, N, N> w) {
  const double w0 = w.norm();
  double last = 0.0;
  for (int k = 0; k < 64; ++k) {
    const Eigen::Matrix<double, N, N> add = a * w * a.transpose();
    w += add;
    a = (a * a).eval();
    last = add.norm();
    if (!w.allFinite()) break;
  }
  if (!w.allFinite() || last > 1e-9 * w.norm() || w.norm() > 1e13 * w0) {
    w.setConstant(std::nan(""));
  }
  return w;
}

/// A linear recursion x' = A x + w, Cov w = W.
template <int N>
struct LinearChain {
  Eigen::Matrix<double, N, N> a;
  Eigen::Matrix<double, N, N> w;
  Eigen::Matrix<double, N, N> stationary() const { return stationary_covariance<N>(a, w); }

  /// Exact integrated autocorrelation time of the series x_i x_j in stationarity (x zero-mean
  /// Gaussian): with C(k) = Cov(x_{t+k}, x_t) = A^k S, Cov(x_i x_j at lag k) = C_ii(k) C_jj(k) +
  /// C_ij(k) C_ji(k), so τ = 1 + 2 Σ_{k≥1} that / (S_ii S_jj + S_ij²). Summed until the terms
  /// fall below 1e-14 of the lag-0 value (at most 10⁷ lags).
  double iact_product(int i, int j) const { return iact_impl(i, j, true); }
  /// Exact integrated autocorrelation time of x_i itself: τ = 1 + 2 Σ_k C_ii(k) / S_ii.
  double iact_linear(int i) const { return iact_impl(i, i, false); }

 private:
  double iact_impl(int i, int j, bool product) const {
    const Eigen::Matrix<double, N, N> s = stationary();
    const double c0 = product ? s(i, i) * s(j, j) + s(i, j) * s(i, j) : s(i, i);
    Eigen::Matrix<double, N, N> c = s;  // C(k), k = 0
    double sum = 0.0;
    for (int k = 1; k < 10000000; ++k) {
      c = (a * c).eval();
      const double term = product ? c(i, i) * c(j, j) + c(i, j) * c(j, i) : c(i, i);
      sum += term;
      if (std::abs(term) < 1e-14 * c0 && c.norm() < 1e-10 * s.norm()) break;
    }
    return 1.0 + 2.0 * sum / c0;
  }
};

/// SGLD (MATH.md §2.2) with D₀ = d0 I on U = θᵀPθ/2, gradient noise N(0, vI), correction V̂ = vhat
/// I: θ' = (I − h d0 P)θ + N(0, h(2d0 − h d0² vhat) I) + N(0, h² d0² v I). With d0 = 1, P = 1 this
/// gives Var θ = (2 + h(v − vhat)) / (2 − h) (MATH.md §1.3).
template <int D>
LinearChain<D> sgld_chain(const Eigen::Matrix<double, D, D>& p, double h, double d0, double v,
                          double vhat, bool cold = false) {
  using M = Eigen::Matrix<double, D, D>;
  LinearChain<D> c;
  c.a = M::Identity() - h * d0 * p;
  const double injected = cold ? 0.0 : h * (2.0 * d0 - h * d0 * d0 * vhat);
  c.w = (injected + h * h * d0 * d0 * v) * M::Identity();
  return c;
}

/// Update orders of the momentum samplers (MATH.md §1.3).
enum class Order { KickDrift, DriftKick, ExplicitEuler };

/// SGHMC with friction c, mass m on U = θᵀPθ/2, gradient noise N(0, vI), V̂ = vhat I, state
/// (θ, r). Momentum noise per step q = h(2c − h vhat) + h² v (cold: h² v only).
///   kick–drift:     r' = (1 − hc/m) r − hPθ + ξ;  θ' = θ + (h/m) r'
///   drift–kick:     θ' = θ + (h/m) r;  r' = (1 − hc/m) r − hPθ' + ξ   (gradient at the new θ)
///   explicit Euler: θ' = θ + (h/m) r;  r' = (1 − hc/m) r − hPθ + ξ
template <int D>
LinearChain<2 * D> sghmc_chain(const Eigen::Matrix<double, D, D>& p, double h, double c, double m,
                               double v, double vhat, Order order, bool cold = false) {
  const double q = (cold ? 0.0 : h * (2.0 * c - h * vhat)) + h * h * v;
  const double k = 1.0 - h * c / m;
  const double hm = h / m;
  LinearChain<2 * D> ch;
  ch.a.setZero();
  ch.w.setZero();
  // Entry by entry (block expressions of 1 x 1 blocks trip a GCC 12 -Warray-bounds false
  // positive inside Eigen's packet loads). Blocks: (θθ, θr; rθ, rr).
  for (int i = 0; i < D; ++i) {
    for (int j = 0; j < D; ++j) {
      const double id = i == j ? 1.0 : 0.0;
      switch (order) {
        case Order::KickDrift:
          ch.a(i, j) = id - h * hm * p(i, j);
          ch.a(i, D + j) = hm * k * id;
          ch.a(D + i, j) = -h * p(i, j);
          ch.a(D + i, D + j) = k * id;
          ch.w(i, j) = q * hm * hm * id;
          ch.w(i, D + j) = q * hm * id;
          ch.w(D + i, j) = q * hm * id;
          ch.w(D + i, D + j) = q * id;
          break;
        case Order::DriftKick:
          ch.a(i, j) = id;
          ch.a(i, D + j) = hm * id;
          ch.a(D + i, j) = -h * p(i, j);
          ch.a(D + i, D + j) = k * id - h * hm * p(i, j);
          ch.w(D + i, D + j) = q * id;
          break;
        case Order::ExplicitEuler:
          ch.a(i, j) = id;
          ch.a(i, D + j) = hm * id;
          ch.a(D + i, j) = -h * p(i, j);
          ch.a(D + i, D + j) = k * id;
          ch.w(D + i, D + j) = q * id;
          break;
      }
    }
  }
  return ch;
}

/// Unadjusted HMC (metropolis = false) on U = θ²/2, mass 1: L leapfrog steps map (θ, r) to
/// (aθ + br, ·); with r ~ N(0, 1) redrawn every step θ' = aθ + bζ, so Var θ = b² / (1 − a²).
inline double unadjusted_hmc_variance(double h, int steps) {
  Eigen::Matrix2d one;  // one leapfrog step on (θ, r)
  one << 1.0 - h * h / 2.0, h, -h + h * h * h / 4.0, 1.0 - h * h / 2.0;
  Eigen::Matrix2d m = Eigen::Matrix2d::Identity();
  for (int l = 0; l < steps; ++l) m = (one * m).eval();
  return m(0, 1) * m(0, 1) / (1.0 - m(0, 0) * m(0, 0));
}

}  // namespace sgmcmc::test
