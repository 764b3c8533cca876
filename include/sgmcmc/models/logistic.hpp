// SPDX-License-Identifier: MIT
// Bayesian logistic regression over caller-owned row-major data (MATH.md §3.7): a heap-free
// per-example model for MinibatchGradient, and the full-data potential and gradient for HMC/NUTS.
#pragma once

// Model (MATH.md §3.7, the library protocol): y_i ~ Bernoulli(σ(x_iᵀβ)), β ~ N(0, s² I), s = 10.
//   U(β) = Σ_i [log(1 + e^{η_i}) − y_i η_i] + ‖β‖² / (2 s²),   η_i = x_iᵀβ   (constants dropped)
//   ∇U(β) = Σ_i (σ(η_i) − y_i) x_i + β / s²
// log(1 + e^η) is evaluated as max(η, 0) + log1p(e^{−|η|}) and σ(η) from e^{−|η|}, so no
// intermediate overflows for any finite η. The data are not copied: the caller keeps x (rows × Dim,
// row-major, the intercept column included) and y (rows labels, 0 or 1) alive and unchanged.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include <Eigen/Core>

#include "sgmcmc/core/math.hpp"
#include "sgmcmc/core/types.hpp"

namespace sgmcmc {

/// log(1 + e^x) without overflow or cancellation: max(x, 0) + log1p(e^{−|x|}). The errno-free
/// exp and log1p of core/math.hpp: the C library's set errno when e^{−|x|} underflows (|x| above
/// about 708 in double), which a step must not do (docs/REALTIME.md).
template <class Scalar>
Scalar softplus(Scalar x) noexcept {
  using std::abs;
  return (x > Scalar(0) ? x : Scalar(0)) + detail::log1p(detail::exp_nonpositive(-abs(x)));
}

/// σ(x) = 1 / (1 + e^{−x}), from e^{−|x|} ∈ (0, 1] so that it never overflows (errno-free exp,
/// as softplus).
template <class Scalar>
Scalar sigmoid(Scalar x) noexcept {
  using std::abs;
  const Scalar e = detail::exp_nonpositive(-abs(x));
  // One division with the numerator selected (1 or e): no branch on the sign, which a minibatch
  // of mixed signs mispredicts half the time; the same values as the two-branch form.
  return detail::select(x >= Scalar(0), Scalar(1), e) / (Scalar(1) + e);
}

namespace detail {
/// sigmoid for the body of a loop the compiler vectorises (exp_nonpositive_lane, whose `lowest`
/// this takes): the same values bit for bit.
template <class Scalar>
Scalar sigmoid_lane(Scalar x, Scalar lowest) noexcept {
  using std::abs;
  const Scalar e = exp_nonpositive_lane(-abs(x), lowest);
  return (x >= Scalar(0) ? Scalar(1) : e) / (Scalar(1) + e);
}

/// Whether LogisticRegression's control-variate path takes the wide row kernels below: from 32
/// coefficients on, with GCC or Clang. On this machine (a Sapphire Rapids Xeon, AVX2 copy of the
/// step) they take a Dim = 86 chunk of 16 rows from 66 to 40 ns per row (dot product and axpy,
/// rows out of 4 MB of data) and from 40 to 21 ns with the rows in L2; at Dim = 7 and 15 they
/// were 10-25 % slower than Eigen's fixed-size kernels, which stay there.
#if defined(__GNUC__)
template <int Dim>
inline constexpr bool kWideRows = Dim >= 32;
/// 32 bytes of S as one GCC/Clang generic vector (detail::GnuVector): one AVX register where the
/// step's AVX2 copy runs, two SSE2 registers in the baseline.
template <class S>
using Wide = detail::GnuVector<S, 32>;

/// xᵀb over Dim terms in a fixed order: two vector accumulators over blocks of two vectors, one
/// more vector if one fits, the accumulators added, their lanes added pairwise (l with l + W/2,
/// halving), then the remaining terms in order.
template <int Dim, class S>
inline S dot_wide(const S* x, const S* b) noexcept {
  using V = typename Wide<S>::type;
  constexpr int W = int(sizeof(V) / sizeof(S));
  constexpr int pairs = Dim / (2 * W) * (2 * W);
  constexpr int vectors = pairs + (Dim - pairs >= W ? W : 0);
  V a0 = {}, a1 = {}, u, v;
  for (int j = 0; j < pairs; j += 2 * W) {
    std::memcpy(&u, x + j, sizeof u);
    std::memcpy(&v, b + j, sizeof v);
    a0 += u * v;
    std::memcpy(&u, x + j + W, sizeof u);
    std::memcpy(&v, b + j + W, sizeof v);
    a1 += u * v;
  }
  if constexpr (vectors > pairs) {
    std::memcpy(&u, x + pairs, sizeof u);
    std::memcpy(&v, b + pairs, sizeof v);
    a0 += u * v;
  }
  a0 += a1;
  for (int h = W / 2; h >= 1; h /= 2) {
    for (int l = 0; l < h; ++l) a0[l] += a0[l + h];
  }
  S sum = a0[0];
  for (int j = vectors; j < Dim; ++j) sum += x[j] * b[j];
  return sum;
}

/// a += w x over Dim elements, a_j + w x_j each (the value of Eigen's a += w * x).
template <int Dim, class S>
inline void axpy_wide(S* a, const S* x, S w) noexcept {
  using V = typename Wide<S>::type;
  constexpr int W = int(sizeof(V) / sizeof(S));
  constexpr int vectors = Dim / W * W;
  V wv = {}, u, v;
  wv += w;
  for (int j = 0; j < vectors; j += W) {
    std::memcpy(&u, a + j, sizeof u);
    std::memcpy(&v, x + j, sizeof v);
    u = u + wv * v;
    std::memcpy(a + j, &u, sizeof u);
  }
  for (int j = vectors; j < Dim; ++j) a[j] += w * x[j];
}
#else
template <int Dim>
inline constexpr bool kWideRows = false;
#endif

/// Calls f with a pointer to v's contiguous scalars: v's own storage where it has one (a vector,
/// a map with unit stride), else a copy of type Vec (written back when v is not const).
template <class Vec, class V, class F>
inline void with_contiguous(V& v, F&& f) noexcept {
  using Plain = std::remove_const_t<V>;
  if constexpr ((int(Plain::Flags) & Eigen::DirectAccessBit) &&
                Plain::InnerStrideAtCompileTime == 1) {
    f(v.data());
  } else {
    Vec copy = v;
    f(copy.data());
    if constexpr (!std::is_const_v<V>) v = copy;
  }
}
}  // namespace detail

/// Bayesian logistic regression with prior β ~ N(0, prior_sd² I) on Dim coefficients.
///
/// As a per-example model (data/minibatch.hpp, MinibatchGradient) it adds −∇log p(y_i | x_i, β)
/// and −∇log p(β); as a full-data model it offers gradient() and potential() of U over all rows
/// (HMC, NUTS). Label is the caller's label type (any arithmetic type holding 0 or 1).
/// Class invariant: valid() iff x and y are not null, rows >= 1 and prior_sd is finite and > 0;
/// an invalid model's full-data results are NaN (which the samplers reject).
template <class Scalar, int Dim, class Label = int>
class LogisticRegression {
 public:
  static_assert(Dim > 0, "Dim must be positive");
  static_assert(std::is_floating_point_v<Scalar>, "Scalar must be float or double");
  using Vec = Vector<Scalar, Dim>;
  /// One row of the design matrix, viewed in place.
  using RowMap = Eigen::Map<const Vec, Eigen::Unaligned>;

  /// @param[in] x        rows × Dim features, row-major (row i starts at x + i·Dim)
  /// @param[in] y        rows labels, 0 or 1
  /// @param[in] rows     number of examples N
  /// @param[in] prior_sd s of the prior N(0, s² I) (MATH.md §3.7: 10)
  LogisticRegression(const Scalar* x, const Label* y, std::size_t rows,
                     Scalar prior_sd = Scalar(10)) noexcept
      : x_(x), y_(y), rows_(rows), prior_precision_(Scalar(1) / (prior_sd * prior_sd)) {
    valid_ = x != nullptr && y != nullptr && rows >= 1 && prior_sd > Scalar(0) &&
             std::isfinite(prior_sd) && std::isfinite(prior_precision_);
  }

  /// See the class invariant.
  bool valid() const noexcept { return valid_; }
  /// Number of examples N.
  std::size_t rows() const noexcept { return rows_; }
  /// 1 / s², the prior precision.
  Scalar prior_precision() const noexcept { return prior_precision_; }

  /// Row i of the design matrix (i < rows()).
  RowMap row(std::size_t i) const noexcept { return RowMap(x_ + i * std::size_t(Dim)); }
  /// Label of row i as a Scalar (0 or 1).
  Scalar label(std::size_t i) const noexcept { return Scalar(y_[i]); }
  // β and the gradient may be any Eigen vectors of size Dim over Scalar: Vec, or the maps the
  // samplers pass (core/model.hpp).

  /// η_i = x_iᵀβ.
  template <class B>
  Scalar linear(std::size_t i, const Eigen::MatrixBase<B>& beta) const noexcept {
    return row(i).dot(beta);
  }
  /// Predictive probability P(y_i = 1 | x_i, β) = σ(η_i).
  template <class B>
  Scalar probability(std::size_t i, const Eigen::MatrixBase<B>& beta) const noexcept {
    return sigmoid(linear(i, beta));
  }

  /// −log p(y_i | x_i, β) = log(1 + e^{η_i}) − y_i η_i.
  template <class B>
  Scalar example_potential(std::size_t i, const Eigen::MatrixBase<B>& beta) const noexcept {
    const Scalar eta = linear(i, beta);
    return softplus(eta) - label(i) * eta;
  }
  /// acc += −∇log p(y_i | x_i, β) = (σ(η_i) − y_i) x_i (the MinibatchGradient per-example hook).
  template <class B, class A>
  void add_gradient(std::uint32_t i, const Eigen::MatrixBase<B>& beta,
                    Eigen::MatrixBase<A>& acc) const noexcept {
    const RowMap xi = row(i);
    acc += (sigmoid(xi.dot(beta)) - label(i)) * xi;
  }
  /// acc += a_i(β) − a_i(β̂) = (σ(x_iᵀβ) − σ(x_iᵀβ̂)) x_i: the label cancels, so one axpy (the
  /// control-variate difference hook, data/control_variate.hpp).
  template <class B, class R, class A>
  void add_gradient_difference(std::uint32_t i, const Eigen::MatrixBase<B>& beta,
                               const Eigen::MatrixBase<R>& ref,
                               Eigen::MatrixBase<A>& acc) const noexcept {
    add_cached_difference(i, beta, reference_term(i, ref), acc);
  }
  /// σ(x_iᵀβ̂): what the control-variate adaptor caches per row for a reference β̂.
  template <class R>
  Scalar reference_term(std::uint32_t i, const Eigen::MatrixBase<R>& ref) const noexcept {
    if constexpr (detail::kWideRows<Dim>) {
      Scalar term = 0;
      detail::with_contiguous<Vec>(ref.derived(), [&](const Scalar* r) {
        term = sigmoid(detail::dot_wide<Dim>(row_data(i), r));
      });
      return term;
    } else {
      return sigmoid(row(i).dot(ref));
    }
  }
  /// acc += (σ(x_iᵀβ) − term) x_i, term = reference_term(i, β̂): the difference at the cost of one
  /// per-example gradient.
  template <class B, class A>
  void add_cached_difference(std::uint32_t i, const Eigen::MatrixBase<B>& beta, Scalar term,
                             Eigen::MatrixBase<A>& acc) const noexcept {
    if constexpr (detail::kWideRows<Dim>) {
      detail::with_contiguous<Vec>(beta.derived(), [&](const Scalar* b) {
        const Scalar w = sigmoid(detail::dot_wide<Dim>(row_data(i), b)) - term;
        detail::with_contiguous<Vec>(acc.derived(),
                                     [&](Scalar* a) { detail::axpy_wide<Dim>(a, row_data(i), w); });
      });
    } else {
      const RowMap xi = row(i);
      acc += (sigmoid(xi.dot(beta)) - term) * xi;
    }
  }
  /// add_cached_difference over the rows [first, last), cache[i] = reference_term(i, β̂): the
  /// control-variate adaptor's batch hook. In chunks of 16 rows: the dot products, then the
  /// sigmoids in one loop that the compiler vectorises (detail::sigmoid_lane: 4.5-5.5x faster
  /// than a loop of sigmoid() in double with AVX2), then the axpys in row order, so acc receives
  /// exactly the values of the per-row form. From 32 coefficients on, the dot products and axpys
  /// are the wide kernels (detail::kWideRows). Stack use: 32 scalars (and, on the wide path, a
  /// copy of β or acc where they are expressions rather than vectors or maps).
  template <class B, class A>
  [[gnu::flatten]] void add_cached_differences(const std::uint32_t* first,
                                               const std::uint32_t* last,
                                               const Eigen::MatrixBase<B>& beta,
                                               const Scalar* cache,
                                               Eigen::MatrixBase<A>& acc) const noexcept {
    if constexpr (detail::kWideRows<Dim>) {
      detail::with_contiguous<Vec>(beta.derived(), [&](const Scalar* b) {
        detail::with_contiguous<Vec>(acc.derived(), [&](Scalar* a) {
          chunked_differences(
              first, last, cache,
              [&](std::uint32_t i) { return detail::dot_wide<Dim>(row_data(i), b); },
              [&](std::uint32_t i, Scalar w) { detail::axpy_wide<Dim>(a, row_data(i), w); });
        });
      });
    } else {
      chunked_differences(
          first, last, cache, [&](std::uint32_t i) { return row(i).dot(beta); },
          [&](std::uint32_t i, Scalar w) { acc += w * row(i); });
    }
  }
  /// −log p(β) = ‖β‖² / (2 s²) (normalising constant dropped).
  template <class B>
  Scalar prior_potential(const Eigen::MatrixBase<B>& beta) const noexcept {
    return Scalar(0.5) * prior_precision_ * beta.squaredNorm();
  }
  /// acc += −∇log p(β) = β / s² (the MinibatchGradient prior hook).
  template <class B, class A>
  void add_prior_gradient(const Eigen::MatrixBase<B>& beta,
                          Eigen::MatrixBase<A>& acc) const noexcept {
    acc += prior_precision_ * beta;
  }

  /// Full-data U(β) and ∇U(β) in one pass over the rows; returns U, writes grad.
  template <class B, class G>
  Scalar potential_and_gradient(const Eigen::MatrixBase<B>& beta,
                                Eigen::MatrixBase<G>& grad) const noexcept {
    if (!valid_) {
      grad.setConstant(nan());
      return nan();
    }
    grad = prior_precision_ * beta;
    Scalar u = prior_potential(beta);
    for (std::size_t i = 0; i < rows_; ++i) {
      const RowMap xi = row(i);
      const Scalar eta = xi.dot(beta);
      const Scalar yi = label(i);
      u += softplus(eta) - yi * eta;
      grad += (sigmoid(eta) - yi) * xi;
    }
    return u;
  }
  /// Full-data gradient ∇U(β) (the sampler model concept, core/model.hpp).
  template <class B, class G>
  void gradient(const Eigen::MatrixBase<B>& beta, Eigen::MatrixBase<G>& grad) const noexcept {
    if (!valid_) {
      grad.setConstant(nan());
      return;
    }
    grad = prior_precision_ * beta;
    for (std::size_t i = 0; i < rows_; ++i) add_gradient(static_cast<std::uint32_t>(i), beta, grad);
  }
  /// Full-data potential U(β) (for HMC's and NUTS's Metropolis / multinomial weights).
  template <class B>
  Scalar potential(const Eigen::MatrixBase<B>& beta) const noexcept {
    if (!valid_) return nan();
    Scalar u = prior_potential(beta);
    for (std::size_t i = 0; i < rows_; ++i) u += example_potential(i, beta);
    return u;
  }

 private:
  static Scalar nan() noexcept { return std::numeric_limits<Scalar>::quiet_NaN(); }
  const Scalar* row_data(std::size_t i) const noexcept { return x_ + i * std::size_t(Dim); }

  /// add_cached_differences' loop: chunks of 16 rows, dot(i) for each, the sigmoids in one
  /// vectorised loop, then axpy(i, w) in row order.
  template <class Dot, class Axpy>
  static void chunked_differences(const std::uint32_t* first, const std::uint32_t* last,
                                  const Scalar* cache, Dot&& dot, Axpy&& axpy) noexcept {
    constexpr std::ptrdiff_t kChunk = 16;
    Scalar w[kChunk], c[kChunk];
    const Scalar lowest = detail::opaque(detail::MathConstants<Scalar>::exp_lo);
    while (first != last) {
      const std::ptrdiff_t m = last - first < kChunk ? last - first : kChunk;
      for (std::ptrdiff_t k = 0; k < m; ++k) w[k] = dot(first[k]);
      for (std::ptrdiff_t k = 0; k < m; ++k) c[k] = cache[first[k]];
      for (std::ptrdiff_t k = 0; k < m; ++k) w[k] = detail::sigmoid_lane(w[k], lowest) - c[k];
      for (std::ptrdiff_t k = 0; k < m; ++k) axpy(first[k], w[k]);
      first += m;
    }
  }

  const Scalar* x_;
  const Label* y_;
  std::size_t rows_;
  Scalar prior_precision_;
  bool valid_ = false;
};

}  // namespace sgmcmc
