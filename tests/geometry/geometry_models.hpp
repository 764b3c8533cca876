// SPDX-License-Identifier: MIT
// Test models and metrics for the state-dependent samplers: targets with potentials templated on
// the scalar (so Γ by automatic differentiation can see Ũ), minibatch-style noise, test metrics.
#pragma once

#include <cmath>
#include <cstdint>

#include "sgmcmc/core/types.hpp"
#include "sgmcmc/host/rng.hpp"

namespace geo {

using sgmcmc::Matrix;
using sgmcmc::Vector;

// ---------------------------------------------------------------------------------------------
// Targets: U(θ) for any scalar type and ∇U in the chain's scalar (MATH.md §5.1).

/// U = θᵀθ / 2.
struct GaussianTarget {
  template <class T, int D>
  static T u(const Vector<T, D>& th) {
    return T(0.5) * th.squaredNorm();
  }
  template <class S, int D>
  static void grad(const Vector<S, D>& th, Vector<S, D>& g) {
    g = th;
  }
};

/// U = θ⁴ − 2θ² (1-D).
struct DoubleWellTarget {
  template <class T>
  static T u(const Vector<T, 1>& th) {
    const T x2 = th[0] * th[0];
    return x2 * x2 - T(2) * x2;
  }
  template <class S>
  static void grad(const Vector<S, 1>& th, Vector<S, 1>& g) {
    const S x = th[0];
    g[0] = S(4) * x * x * x - S(4) * x;
  }
};

/// U = θ₁⁴/10 + (4(θ₂ + 1.2) − θ₁²)²/2 (2-D banana).
struct BananaTarget {
  template <class T>
  static T u(const Vector<T, 2>& th) {
    const T a2 = th[0] * th[0];
    const T s = T(4) * (th[1] + T(1.2)) - a2;
    return a2 * a2 / T(10) + s * s / T(2);
  }
  template <class S>
  static void grad(const Vector<S, 2>& th, Vector<S, 2>& g) {
    const S a = th[0];
    const S s = S(4) * (th[1] + S(1.2)) - a * a;
    g[0] = S(0.4) * a * a * a - S(2) * a * s;
    g[1] = S(4) * s;
  }
};

/// A "minibatch" model built on a target (MATH.md §5.3): the batch is a noise vector n, the
/// gradient is ∇U(θ) + n and the minibatch value Ũ(θ) = U(θ) + nᵀθ when value_noise, else the
/// exact U (a metric built from it then does not correlate with the gradient noise).
/// With sigma > 0, gradient() draws a fresh n ~ N(0, σ² I) from the model's own RNG (mutable, so
/// the model stays const as the concept requires) and potential() uses the same n: the engine
/// calls gradient() once per step, before any structure reads potential(). With sigma = 0, n stays
/// what the caller set (deterministic tests).
template <class Target, class Scalar, int Dim>
struct MinibatchModel {
  Scalar sigma{0};
  bool value_noise{true};
  mutable Vector<Scalar, Dim> n = Vector<Scalar, Dim>::Zero();
  mutable sgmcmc::host::Rng rng{12345, 7};

  template <class T>
  T potential(const Vector<T, Dim>& th) const {
    T u = Target::u(th);
    if (value_noise) {
      for (int i = 0; i < Dim; ++i) u += T(n[i]) * th[i];
    }
    return u;
  }
  void gradient(const Vector<Scalar, Dim>& th, Vector<Scalar, Dim>& g) const {
    if (sigma > Scalar(0)) {
      rng.fill_normal(n);
      n *= sigma;
    }
    Target::grad(th, g);
    g += n;
  }
};

// ---------------------------------------------------------------------------------------------
// Test metrics (every one templated on θ's scalar type so that AD can differentiate it).

/// Diagonal G⁻¹, entry i coupled to θ_{i+1}: g_i = 0.5 + 1/(1 + θ_i² + 0.5 θ_{i+1}²), in
/// (0.5, 1.5].
struct CoupledDiagInverse {
  template <class T, int D>
  Vector<T, D> operator()(const Vector<T, D>& th) const {
    Vector<T, D> g;
    for (int i = 0; i < D; ++i) {
      const T b = th[(i + 1) % D];
      g[i] = T(0.5) + T(1) / (T(1) + th[i] * th[i] + T(0.5) * b * b);
    }
    return g;
  }
};

/// Separable diagonal G⁻¹: g_i = 0.5 + 1/(1 + θ_i²).
struct SeparableDiagInverse {
  template <class T, int D>
  Vector<T, D> operator()(const Vector<T, D>& th) const {
    Vector<T, D> g;
    for (int i = 0; i < D; ++i) g[i] = T(0.5) + T(1) / (T(1) + th[i] * th[i]);
    return g;
  }
};
/// Analytic Σ_j ∂_j G⁻¹_ij for SeparableDiagInverse: −2θ_i / (1 + θ_i²)².
struct SeparableDiagInverseDivergence {
  template <class S, int D>
  Vector<S, D> operator()(const Vector<S, D>& th) const {
    Vector<S, D> out;
    for (int i = 0; i < D; ++i) {
      const S q = S(1) + th[i] * th[i];
      out[i] = S(-2) * th[i] / (q * q);
    }
    return out;
  }
};
/// Analytic ∇·S for S = diag(√g_i), g from SeparableDiagInverse: g_i′ / (2√g_i).
struct SeparableDiagSqrtDivergence {
  template <class S, int D>
  Vector<S, D> operator()(const Vector<S, D>& th) const {
    Vector<S, D> out;
    for (int i = 0; i < D; ++i) {
      const S q = S(1) + th[i] * th[i];
      const S g = S(0.5) + S(1) / q;
      out[i] = (S(-2) * th[i] / (q * q)) / (S(2) * std::sqrt(g));
    }
    return out;
  }
};

/// Dense SPD G⁻¹(θ) = A Aᵀ + 0.5 I, A_ij = 0.4 sin(θ_i + (j+1) θ_j) + 0.3 δ_ij: every entry
/// depends on θ, eigenvalues well separated from 0.
struct DenseInverse {
  template <class T, int D>
  Matrix<T, D, D> operator()(const Vector<T, D>& th) const {
    using std::sin;
    Matrix<T, D, D> a;
    for (int i = 0; i < D; ++i) {
      for (int j = 0; j < D; ++j) {
        a(i, j) = T(0.4) * sin(th[i] + T(j + 1) * th[j]) + (i == j ? T(0.3) : T(0));
      }
    }
    Matrix<T, D, D> g = a * a.transpose();
    for (int i = 0; i < D; ++i) g(i, i) += T(0.5);
    return g;
  }
};

/// Dense SPD G(θ) (the metric itself, for the G form): (1 + θᵀθ/4) I + 0.5 u uᵀ, u_i = sin(θ_i +
/// i).
struct DenseMetricG {
  template <class T, int D>
  Matrix<T, D, D> operator()(const Vector<T, D>& th) const {
    using std::sin;
    Vector<T, D> u;
    for (int i = 0; i < D; ++i) u[i] = sin(th[i] + T(i));
    Matrix<T, D, D> g = T(0.5) * u * u.transpose();
    const T s = T(1) + T(0.25) * th.squaredNorm();
    for (int i = 0; i < D; ++i) g(i, i) += s;
    return g;
  }
};

/// Scalar G⁻¹ = 0.5 + 1/(1 + θᵀθ/2) (a smooth isotropic metric).
struct ScalarInverse {
  template <class T, int D>
  T operator()(const Vector<T, D>& th) const {
    return T(0.5) + T(1) / (T(1) + T(0.5) * th.squaredNorm());
  }
};

}  // namespace geo
