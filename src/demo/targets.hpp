// SPDX-License-Identifier: MIT
// The demo's targets (MATH.md §5.1): potentials for the samplers, exact oracle values, exact
// i.i.d. draws (for the Monte-Carlo floor), histogram grids, and the demo's settings for each.
#pragma once

#include <cmath>

#include "sgmcmc/core/noise.hpp"
#include "sgmcmc/core/types.hpp"

namespace sgmcmc::demo {

/// Per-target parameters of every sampler in the demo (our choice; printed with the results).
struct SamplerSettings {
  double sgld_step;        ///< SGLD h (D₀ = I)
  double sghmc_step;       ///< SGHMC h
  double sghmc_friction;   ///< SGHMC C (m = 1)
  double sgnht_step;       ///< SGNHT h
  double sgnht_diffusion;  ///< SGNHT A
  double hmc_step;         ///< HMC leapfrog h
  int hmc_leapfrog;        ///< HMC L
  double sgd_rate;         ///< SGD learning rate
  double momentum_rate;    ///< SGD-momentum η
  double momentum_decay;   ///< SGD-momentum α (coefficient 1 - α)
  int grads_per_sample;    ///< gradient evaluations between kept samples, for every sampler
};

/// A moment the table checks: E f(θ), its exact value, and Var f(θ) for the i.i.d. error.
struct MomentOracle {
  const char* label;  ///< e.g. "Eθ²"
  double exact;       ///< E f(θ) under the target
  double variance;    ///< Var f(θ) under the target (i.i.d. standard error = sqrt(var / N))
};

/// U = θ²/2: the standard normal.
struct Gaussian1D {
  static constexpr int dim = 1;
  static constexpr const char* key = "gaussian";
  static constexpr const char* title = "1-D Gaussian, U = θ²/2";
  static constexpr double normaliser = 2.5066282746310002;  // √(2π)

  /// ∇U, U (θ, g: the engine's maps, or vectors), the unnormalised density exp(-U), and the
  /// functions whose means the table checks.
  template <class Theta, class Grad>
  void gradient(const Theta& th, Grad& g) const noexcept {
    g = th;
  }
  template <class Theta>
  double potential(const Theta& th) const noexcept {
    return 0.5 * th[0] * th[0];
  }
  static double density(double x) { return std::exp(-0.5 * x * x); }

  static constexpr MomentOracle moment1{"Eθ", 0.0, 1.0};
  static constexpr MomentOracle moment2{"Eθ²", 1.0, 2.0};
  static double f1(const double* x) { return x[0]; }
  static double f2(const double* x) { return x[0] * x[0]; }

  /// One exact draw into out[0].
  template <class Rng>
  static void exact_draw(Rng& rng, double* out) noexcept {
    out[0] = normal<double>(rng);
  }

  /// Where every chain starts, and the demo's sampler settings for this target.
  static constexpr double start[1] = {2.5};
  static constexpr SamplerSettings settings{0.05, 0.1,  1.0,  0.1, 1.0, 0.25,
                                            10,   0.05, 0.01, 0.1, 20};
};

/// U = θ⁴ - 2θ²: modes ±1, barrier height 1 (MATH.md §5.1 oracle).
struct DoubleWell {
  static constexpr int dim = 1;
  static constexpr const char* key = "double_well";
  static constexpr const char* title = "1-D double well, U = θ⁴ - 2θ²";
  static constexpr double normaliser = 5.36516023783;

  /// ∇U, U (θ, g: the engine's maps, or vectors), the unnormalised density exp(-U), and the
  /// functions whose means the table checks.
  template <class Theta, class Grad>
  void gradient(const Theta& th, Grad& g) const noexcept {
    g[0] = 4.0 * th[0] * (th[0] * th[0] - 1.0);
  }
  template <class Theta>
  double potential(const Theta& th) const noexcept {
    const double t2 = th[0] * th[0];
    return t2 * t2 - 2.0 * t2;
  }
  static double density(double x) {
    const double t2 = x * x;
    return std::exp(2.0 * t2 - t2 * t2);
  }

  static constexpr MomentOracle moment1{"Eθ", 0.0, 0.832745487128};
  // Var θ² = Eθ⁴ - (Eθ²)², Eθ⁴ = 1.08274548713.
  static constexpr MomentOracle moment2{"Eθ²", 0.832745487128, 0.389280441};
  static double f1(const double* x) { return x[0]; }
  static double f2(const double* x) { return x[0] * x[0]; }

  /// Rejection from N(0, 1): log(target/envelope) = -θ⁴ + 2.5θ² ≤ 2.5²/4 = 1.5625.
  template <class Rng>
  static void exact_draw(Rng& rng, double* out) noexcept {
    for (;;) {
      const double x = normal<double>(rng);
      const double t2 = x * x;
      if (std::log(uniform_open01<double>(rng)) < 2.5 * t2 - t2 * t2 - 1.5625) {
        out[0] = x;
        return;
      }
    }
  }

  /// Where every chain starts, and the demo's sampler settings for this target.
  static constexpr double start[1] = {0.0};
  static constexpr SamplerSettings settings{0.01, 0.05, 1.0,    0.05, 1.0, 0.1,
                                            10,   0.01, 0.0025, 0.05, 20};
};

/// The recipe paper's banana, U = θ₁⁴/10 + (4(θ₂ + 1.2) - θ₁²)²/2:
/// θ₁ ∝ exp(-θ₁⁴/10), θ₂ | θ₁ ~ N(θ₁²/4 - 1.2, 1/16) (MATH.md §5.1).
struct Banana {
  static constexpr int dim = 2;
  static constexpr const char* key = "banana";
  static constexpr const char* title = "2-D banana, U = θ₁⁴/10 + (4(θ₂+1.2) - θ₁²)²/2";
  static constexpr double normaliser = 2.02013792639;

  /// ∇U, U (θ, g: the engine's maps, or vectors), the unnormalised density exp(-U), and the
  /// functions whose means the table checks.
  template <class Theta, class Grad>
  void gradient(const Theta& th, Grad& g) const noexcept {
    const double w = 4.0 * (th[1] + 1.2) - th[0] * th[0];
    g[0] = 0.4 * th[0] * th[0] * th[0] - 2.0 * th[0] * w;
    g[1] = 4.0 * w;
  }
  template <class Theta>
  double potential(const Theta& th) const noexcept {
    const double w = 4.0 * (th[1] + 1.2) - th[0] * th[0];
    const double t2 = th[0] * th[0];
    return 0.1 * t2 * t2 + 0.5 * w * w;
  }
  static double density(double x, double y) {
    const double w = 4.0 * (y + 1.2) - x * x;
    const double t2 = x * x;
    return std::exp(-0.1 * t2 * t2 - 0.5 * w * w);
  }

  // Eθ₁⁴ = 2.5 (from E[θ₁ ∂U/∂θ₁] = 1), so Var θ₁² = 2.5 - 1.06881544366²;
  // Var θ₂ = 1/16 + Var(θ₁²)/16.
  static constexpr MomentOracle moment1{"Eθ₁²", 1.06881544366, 1.357633547};
  static constexpr MomentOracle moment2{"Eθ₂", -0.932796139084, 0.147352097};
  static double f1(const double* x) { return x[0] * x[0]; }
  static double f2(const double* x) { return x[1]; }

  /// θ₁ by rejection from N(0, s²), s = 1.2: log ratio -θ⁴/10 + θ²/(2s²) ≤ 0.625/s⁴; then θ₂.
  template <class Rng>
  static void exact_draw(Rng& rng, double* out) noexcept {
    constexpr double s = 1.2;
    constexpr double bound = 0.625 / (s * s * s * s);
    for (;;) {
      const double x = s * normal<double>(rng);
      const double t2 = x * x;
      if (std::log(uniform_open01<double>(rng)) < t2 / (2.0 * s * s) - 0.1 * t2 * t2 - bound) {
        out[0] = x;
        out[1] = 0.25 * t2 - 1.2 + 0.25 * normal<double>(rng);
        return;
      }
    }
  }

  /// Where every chain starts, and the demo's sampler settings for this target.
  static constexpr double start[2] = {-2.0, 1.5};
  static constexpr SamplerSettings settings{0.01, 0.05, 2.0,    0.05, 1.0, 0.1,
                                            25,   0.01, 0.0025, 0.1,  50};
};

}  // namespace sgmcmc::demo
