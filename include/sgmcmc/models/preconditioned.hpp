// SPDX-License-Identifier: MIT
// Preconditioning as a model adaptor: the sampler moves in whitened coordinates η with
// θ = μ + Lη (L diagonal or dense lower triangular, constant), so any sampler gets a constant
// metric without an engine change. Heap-free; storage in caller memory or in the object.
#pragma once

// For a model with potential U(θ), the adaptor is the model Ũ(η) = U(μ + Lη) (the Jacobian is
// constant, so no log-determinant term), with gradient ∇_η Ũ = Lᵀ ∇_θ U(μ + Lη). Then:
//   HMC / NUTS with unit mass in η are HMC / NUTS in θ with the mass matrix M = (LLᵀ)⁻¹ (dense or
//   diagonal), what Stan calls the dense_e / diag_e metric with inverse metric LLᵀ;
//   SGLD in η is SGLD in θ with the constant preconditioner D₀ = LLᵀ;
//   SGHMC in η is SGHMC in θ with mass M = (LLᵀ)⁻¹ and friction C·M.
// A minibatch model stays a minibatch model: its gradient noise becomes Lᵀ V L.
// Good choices of L: LLᵀ = Σ̂, a covariance estimate of the posterior (warm-up draws,
// adapt/windowed.hpp; set_covariance), or LLᵀ = Ĥ⁻¹, the inverse Hessian of U at a mode (the
// Laplace approximation; set_precision). Then η is roughly N(0, I) and step sizes of order one
// work in every direction.
//
// Cost per gradient: the inner gradient plus d (diagonal) or d² (dense) multiply-adds.
// The adaptor writes its scratch vectors in gradient() and potential(): use one adaptor per chain.

#include <cstddef>
#include <cstring>
#include <type_traits>
#include <utility>

#include "sgmcmc/core/linalg.hpp"
#include "sgmcmc/core/model.hpp"
#include "sgmcmc/core/status.hpp"
#include "sgmcmc/core/types.hpp"

namespace sgmcmc {

namespace detail {
/// Does the model offer potential_and_gradient(θ, g) (U and ∇U in one pass, e.g. the full-data
/// LogisticRegression)?
template <class Model, class Scalar, int Dim, class = void>
struct HasPotentialAndGradient : std::false_type {};
template <class Model, class Scalar, int Dim>
struct HasPotentialAndGradient<
    Model, Scalar, Dim,
    std::void_t<decltype(std::declval<const Model&>().potential_and_gradient(
        std::declval<const ConstVectorMap<Scalar, Dim>&>(),
        std::declval<VectorMap<Scalar, Dim>&>()))>> : std::true_type {};

/// N aligned scalars held by value: a private base of the Owned* adaptors, so that their storage
/// exists before the adaptor base that points into it is constructed.
template <class Scalar, std::size_t N>
struct OwnedStorage {
  alignas(kAlignBytes) mutable Scalar storage_[N] = {};
};
}  // namespace detail

/// The model U(μ + Lη) in the whitened coordinates η (see the header comment).
/// Dense = true: L is lower triangular (Dim × Dim, row-major in memory); false: L is diagonal.
/// Storage: storage_size scalars of caller memory aligned to kAlignBytes (μ, L, and the scratch
/// of the gradient), kept alive by the caller; OwnedPreconditioned holds them itself.
/// The wrapped model is held by reference (a minibatch model's batch can be refilled between
/// steps) and must outlive the adaptor.
/// Class invariant: L has a positive finite diagonal and finite entries, μ is finite (the
/// constructor sets μ = 0, L = I; the setters refuse anything else and change nothing).
template <class Model, class Scalar, int Dim, bool Dense = true>
class Preconditioned {
 public:
  static_assert(Dim > 0, "Dim must be positive");
  using Vec = Vector<Scalar, Dim>;
  using Mat = Matrix<Scalar, Dim, Dim>;
  /// Scalars of L: Dim² (dense, row-major) or Dim (diagonal).
  static constexpr std::size_t factor_size = Dense ? std::size_t(Dim) * Dim : std::size_t(Dim);
  /// Scalars of caller memory the adaptor needs: μ, L, θ, ∇_θU and the cached η.
  static constexpr std::size_t storage_size =
      4 * detail::aligned_count<Scalar>(Dim) + detail::aligned_count<Scalar>(factor_size);

  /// @param[in] model  the model in θ (gradient, and potential if the sampler needs one)
  /// @param[in] memory storage_size scalars aligned to kAlignBytes
  Preconditioned(const Model& model, Scalar* memory) noexcept : model_(&model), mem_(memory) {
    mu().setZero();
    Scalar* l = factor_data();
    for (std::size_t k = 0; k < factor_size; ++k) l[k] = Scalar(0);
    for (Index i = 0; i < Dim; ++i) l[Dense ? i * Dim + i : i] = Scalar(1);
    cached_ = false;
  }

  /// The wrapped model.
  const Model& model() const noexcept { return *model_; }
  /// μ.
  ConstVectorMap<Scalar, Dim> center() const noexcept { return ConstVectorMap<Scalar, Dim>(mem_); }
  /// L(i, j) (0 above the diagonal; off the diagonal for Dense = false).
  Scalar factor(Index i, Index j) const noexcept {
    if constexpr (Dense) {
      return j <= i ? factor_data()[i * Dim + j] : Scalar(0);
    } else {
      return i == j ? factor_data()[i] : Scalar(0);
    }
  }

  /// θ = μ + Lη with L given: Dense, a Dim × Dim matrix whose lower triangle is read; diagonal, a
  /// vector of the scales. InvalidParameter (nothing changed) unless μ and L are finite and L's
  /// diagonal is > 0.
  template <class M, class F>
  Status set_transform(const Eigen::MatrixBase<M>& mu_in, const Eigen::MatrixBase<F>& l) noexcept {
    static_assert(M::SizeAtCompileTime == Dim, "μ has the position's size");
    if constexpr (Dense) {
      static_assert(F::RowsAtCompileTime == Dim && F::ColsAtCompileTime == Dim,
                    "a dense L is Dim × Dim");
    } else {
      static_assert(F::SizeAtCompileTime == Dim, "a diagonal L is a vector of Dim scales");
    }
    if (!detail::all_finite(mu_in.derived())) return StatusCode::InvalidParameter;
    for (Index i = 0; i < Dim; ++i) {
      const Scalar d =
          Dense ? Scalar(l.derived().coeff(i, Dense ? i : 0)) : Scalar(l.derived().coeff(i));
      if (!(d > Scalar(0)) || !std::isfinite(d)) return StatusCode::InvalidParameter;
      if constexpr (Dense) {
        for (Index j = 0; j < i; ++j) {
          if (!std::isfinite(Scalar(l.derived().coeff(i, j)))) return StatusCode::InvalidParameter;
        }
      }
    }
    mu() = mu_in;
    Scalar* f = factor_data();
    for (Index i = 0; i < Dim; ++i) {
      if constexpr (Dense) {
        for (Index j = 0; j < Dim; ++j)
          f[i * Dim + j] = j <= i ? Scalar(l.derived().coeff(i, j)) : Scalar(0);
      } else {
        f[i] = Scalar(l.derived().coeff(i));
      }
    }
    cached_ = false;
    return StatusCode::Ok;
  }

  /// LLᵀ = Σ (a posterior covariance estimate): Dense, L = chol(Σ) (Σ symmetric positive
  /// definite, lower triangle read); diagonal, L = √diag(Σ) (pass the Dim × Dim matrix or the
  /// vector of variances). InvalidParameter (nothing changed) if Σ is not positive definite.
  template <class M, class S>
  Status set_covariance(const Eigen::MatrixBase<M>& mu_in,
                        const Eigen::MatrixBase<S>& sigma) noexcept {
    if constexpr (Dense) {
      const Mat s = sigma;
      Mat l;
      if (!detail::cholesky_lower(s, l)) return StatusCode::InvalidParameter;
      return set_transform(mu_in, l);
    } else {
      Vec scale;
      for (Index i = 0; i < Dim; ++i) {
        const Scalar v = S::ColsAtCompileTime == 1
                             ? Scalar(sigma.derived().coeff(i))
                             : Scalar(sigma.derived().coeff(i, S::ColsAtCompileTime == 1 ? 0 : i));
        if (!(v > Scalar(0))) return StatusCode::InvalidParameter;
        scale[i] = std::sqrt(v);
      }
      return set_transform(mu_in, scale);
    }
  }

  /// LLᵀ = H⁻¹ for a symmetric positive-definite H (the Hessian of U at a mode: the Laplace
  /// approximation); diagonal: L = √diag(H⁻¹), the Laplace marginal scales. InvalidParameter
  /// (nothing changed) if H is not positive definite.
  template <class M, class H>
  Status set_precision(const Eigen::MatrixBase<M>& mu_in,
                       const Eigen::MatrixBase<H>& hessian) noexcept {
    const Mat h = hessian;
    Mat inv;
    if (!detail::cholesky_inverse(h, inv)) return StatusCode::InvalidParameter;
    if constexpr (Dense) {
      return set_covariance(mu_in, inv);
    } else {
      return set_covariance(mu_in, inv.diagonal());
    }
  }

  /// θ = μ + Lη.
  template <class E, class T>
  void position(const Eigen::MatrixBase<E>& eta, Eigen::MatrixBase<T>& theta) const noexcept {
    const Scalar* l = factor_data();
    const Scalar* m = mem_;
    for (Index i = 0; i < Dim; ++i) {
      Scalar s = m[i];
      if constexpr (Dense) {
        const Scalar* row = l + i * Dim;
        for (Index j = 0; j <= i; ++j) s += row[j] * Scalar(eta.derived().coeff(j));
      } else {
        s += l[i] * Scalar(eta.derived().coeff(i));
      }
      theta.derived().coeffRef(i) = s;
    }
  }
  /// The position as a vector (small Dim).
  template <class E>
  Vec position(const Eigen::MatrixBase<E>& eta) const noexcept {
    Vec theta;
    position(eta, theta);
    return theta;
  }

  /// η = L⁻¹(θ − μ) (forward substitution): where a state at θ sits in these coordinates (e.g.
  /// to carry a chain across a change of L).
  template <class T, class E>
  void whiten(const Eigen::MatrixBase<T>& theta, Eigen::MatrixBase<E>& eta) const noexcept {
    const Scalar* l = factor_data();
    for (Index i = 0; i < Dim; ++i) {
      Scalar s = Scalar(theta.derived().coeff(i)) - mem_[i];
      if constexpr (Dense) {
        const Scalar* row = l + i * Dim;
        for (Index j = 0; j < i; ++j) s -= row[j] * Scalar(eta.derived().coeff(j));
        eta.derived().coeffRef(i) = s / row[i];
      } else {
        eta.derived().coeffRef(i) = s / l[i];
      }
    }
  }
  template <class T>
  Vec whiten(const Eigen::MatrixBase<T>& theta) const noexcept {
    Vec eta;
    whiten(theta, eta);
    return eta;
  }

  /// g = ∇_η Ũ(η) = Lᵀ ∇_θ U(μ + Lη). When the model has potential_and_gradient, U(μ + Lη) comes
  /// from the same pass and potential(η) at this η returns it without another pass.
  template <class E, class G>
  void gradient(const E& eta, G& g) const noexcept {
    Scalar* theta = theta_data();
    Scalar* gt = grad_data();
    VectorMap<Scalar, Dim> th(theta);
    position(eta, th);
    if constexpr (detail::HasPotentialAndGradient<Model, Scalar, Dim>::value) {
      const ConstVectorMap<Scalar, Dim> cth(theta);
      VectorMap<Scalar, Dim> cg(gt);
      cached_u_ = Scalar(model_->potential_and_gradient(cth, cg));
      Scalar* ce = cached_eta_data();
      for (Index i = 0; i < Dim; ++i) ce[i] = Scalar(eta.coeff(i));
      cached_ = true;
    } else {
      detail::call_gradient<Scalar, Dim>(*model_, theta, gt);
    }
    const Scalar* l = factor_data();
    if constexpr (Dense) {
      // g_j = Σ_{i ≥ j} L_ij ∇_i: row i of L scaled by ∇_i, added over rows (contiguous).
      for (Index j = 0; j < Dim; ++j) g.coeffRef(j) = Scalar(0);
      for (Index i = 0; i < Dim; ++i) {
        const Scalar gi = gt[i];
        const Scalar* row = l + i * Dim;
        for (Index j = 0; j <= i; ++j) g.coeffRef(j) += row[j] * gi;
      }
    } else {
      for (Index i = 0; i < Dim; ++i) g.coeffRef(i) = l[i] * gt[i];
    }
  }

  /// Ũ(η) = U(μ + Lη) (needs the model's potential).
  template <class E>
  Scalar potential(const E& eta) const noexcept {
    if constexpr (detail::HasPotentialAndGradient<Model, Scalar, Dim>::value) {
      if (cached_) {
        const Scalar* ce = cached_eta_data();
        bool same = true;
        for (Index i = 0; i < Dim && same; ++i)
          same = detail::same_bits_of(ce[i], Scalar(eta.coeff(i)));
        if (same) return cached_u_;
      }
    }
    Scalar* theta = theta_data();
    VectorMap<Scalar, Dim> th(theta);
    position(eta, th);
    return detail::call_potential<Scalar, Dim>(*model_, theta);
  }

  /// Forgets the potential cached by gradient() (call it if the wrapped model's data change).
  void invalidate() noexcept { cached_ = false; }

 private:
  static constexpr std::size_t kVec = detail::aligned_count<Scalar>(Dim);
  VectorMap<Scalar, Dim> mu() noexcept { return VectorMap<Scalar, Dim>(mem_); }
  Scalar* factor_data() const noexcept { return mem_ + kVec; }
  Scalar* theta_data() const noexcept {
    return mem_ + kVec + detail::aligned_count<Scalar>(factor_size);
  }
  Scalar* grad_data() const noexcept { return theta_data() + kVec; }
  Scalar* cached_eta_data() const noexcept { return grad_data() + kVec; }

  const Model* model_;
  Scalar* mem_;
  mutable Scalar cached_u_ = Scalar(0);
  mutable bool cached_ = false;
};

/// Preconditioned with its storage inside the object (small Dim: the dense form holds Dim² + 4Dim
/// scalars, e.g. 61 KB for Dim = 86 in double).
template <class Model, class Scalar, int Dim, bool Dense = true>
class OwnedPreconditioned
    : private detail::OwnedStorage<Scalar, Preconditioned<Model, Scalar, Dim, Dense>::storage_size>,
      public Preconditioned<Model, Scalar, Dim, Dense> {
  using Storage =
      detail::OwnedStorage<Scalar, Preconditioned<Model, Scalar, Dim, Dense>::storage_size>;

 public:
  explicit OwnedPreconditioned(const Model& model) noexcept
      : Storage(), Preconditioned<Model, Scalar, Dim, Dense>(model, Storage::storage_) {}
  OwnedPreconditioned(const OwnedPreconditioned&) = delete;
  OwnedPreconditioned& operator=(const OwnedPreconditioned&) = delete;
};

}  // namespace sgmcmc
