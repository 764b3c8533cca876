// Γ of state-dependent D and Q blocks: forward-mode AD (dense, diagonal, scalar shapes, separable
// or not) equals central finite differences of the dense D(z) + Q(z); analytic Γ equals AD.
#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "reference_recipe.hpp"
#include "sgmcmc/sgmcmc.hpp"

using namespace sgmcmc;
using sgmcmc_test::DMat;
using sgmcmc_test::DVec;

namespace {

/// D_θθ = diag(1.2 + 0.5 sin(θ_i + 0.3 θ_{1−i}) + 0.1 r_i²): not separable in θ.
struct ThetaDiffusion {
  template <class Z>
  auto operator()(const Z& z) const {
    using std::sin;
    using T = typename Z::Scalar;
    Vector<T, 2> v;
    const auto& th = z.position();
    const auto& r = z.momentum();
    v[0] = T(1.2) + T(0.5) * sin(th[0] + T(0.3) * th[1]) + T(0.1) * r[0] * r[0];
    v[1] = T(1.2) + T(0.5) * sin(th[1] + T(0.3) * th[0]) + T(0.1) * r[1] * r[1];
    return v;
  }
};
/// D_rr = [[2 + r₀², 0.3 r₀r₁], [0.3 r₀r₁, 2 + r₁² + θ₀²]].
struct MomentumDiffusion {
  template <class Z>
  auto operator()(const Z& z) const {
    using T = typename Z::Scalar;
    const auto& th = z.position();
    const auto& r = z.momentum();
    Matrix<T, 2, 2> m;
    m(0, 0) = T(2) + r[0] * r[0];
    m(0, 1) = T(0.3) * r[0] * r[1];
    m(1, 0) = m(0, 1);
    m(1, 1) = T(2) + r[1] * r[1] + th[0] * th[0];
    return m;
  }
};
/// Q_{r,θ} = A(z) = [[1 + θ₀θ₁, r₀], [sin θ₁, cos(θ₀ r₁)]], Q_{θ,r} = −Aᵀ.
struct Coupling {
  template <class Z>
  auto operator()(const Z& z) const {
    using std::cos;
    using std::sin;
    using T = typename Z::Scalar;
    const auto& th = z.position();
    const auto& r = z.momentum();
    Matrix<T, 2, 2> a;
    a(0, 0) = T(1) + th[0] * th[1];
    a(0, 1) = r[0];
    a(1, 0) = sin(th[1]);
    a(1, 1) = cos(th[0] * r[1]);
    return a;
  }
};
/// s(z) = exp(0.3 θ₀ − 0.2 θ₁)(1 + 0.1 r₀²), as the scalar block s(z) I.
struct ScalarCoupling {
  template <class Z>
  auto operator()(const Z& z) const {
    using std::exp;
    using T = typename Z::Scalar;
    const auto& th = z.position();
    const auto& r = z.momentum();
    return T(exp(T(0.3) * th[0] - T(0.2) * th[1]) * (T(1) + T(0.1) * r[0] * r[0]));
  }
};
/// D_θθ = diag(1 + θ_i² + 0.1 θ_i⁴): separable.
struct SeparableDiffusion {
  template <class Z>
  auto operator()(const Z& z) const {
    using T = typename Z::Scalar;
    const auto& th = z.position();
    return (th.array().square() + T(1) + T(0.1) * th.array().square().square()).matrix().eval();
  }
};
/// Analytic Γ of SeparableDiffusion: ∂v_i/∂θ_i = 2θ_i + 0.4θ_i³ (Sign flips it: negative control).
template <int Sign>
struct SeparableDiffusionGamma {
  template <class Z>
  Vector<double, 2> rows(const Z& z) const {
    const auto& th = z.position();
    return Sign * (2 * th.array() + 0.4 * th.array().cube()).matrix();
  }
};

using L = Layout<2, 2>;
using E = Energy<GaussianKinetic<double>>;

template <class DTheta, class DR, class QPair>
using TestRecipe = Recipe<double, L, E, Diffusion<DTheta, DR>, Curl<QPair>>;

State<double, L> random_state(std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> nd(0.0, 0.7);
  State<double, L> z;
  DVec v(4);
  for (int i = 0; i < 4; ++i) v[i] = nd(gen);
  z.set_flat(v);
  return z;
}

/// Dense D(z) + Q(z) for the reference, from any engine recipe's structures.
template <class R>
sgmcmc_test::DenseSpec dense_of_recipe(const R& recipe) {
  sgmcmc_test::DenseSpec spec;
  spec.d = [&recipe](const DVec& zf) {
    State<double, L> z;
    z.set_flat(zf);
    DMat m = DMat::Zero(4, 4);
    m.topLeftCorner(2, 2) = dense_of<double, 2, 2>(std::get<0>(recipe.diffusion().blocks).eval(z));
    const auto& drr = std::get<1>(recipe.diffusion().blocks);
    if constexpr (!std::decay_t<decltype(drr)>::is_zero) {
      m.bottomRightCorner(2, 2) = dense_of<double, 2, 2>(drr.eval(z));
    }
    return m;
  };
  spec.q = [&recipe](const DVec& zf) {
    State<double, L> z;
    z.set_flat(zf);
    const Matrix<double, 2, 2> a =
        dense_of<double, 2, 2>(std::get<0>(recipe.curl().pairs).a.eval(z));
    DMat m = DMat::Zero(4, 4);
    m.bottomLeftCorner(2, 2) = a;
    m.topRightCorner(2, 2) = -a.transpose();
    return m;
  };
  return spec;
}

template <class R>
double gamma_error(const R& recipe, std::uint64_t seed) {
  const auto z = random_state(seed);
  const DVec ad = recipe.gamma(z).flat();
  const DVec fd = sgmcmc_test::gamma_fd(dense_of_recipe(recipe), z.flat(), 1e-6);
  return (ad - fd).cwiseAbs().maxCoeff();
}

}  // namespace

TEST_CASE("AD Γ equals finite differences: dense, diagonal and dense-coupling blocks") {
  using R = TestRecipe<StateDependent<DiagonalShape, ThetaDiffusion>,
                       StateDependent<DenseShape, MomentumDiffusion>,
                       SkewPair<Momentum, Position, StateDependent<DenseShape, Coupling>>>;
  R recipe(E{}, {}, {}, 0.01);
  REQUIRE(recipe.status());
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    // Central differences with step 1e-6 on O(1) smooth functions: error ~1e-10 + rounding.
    CHECK(gamma_error(recipe, seed) < 1e-7);
    // Γ is not trivially zero here.
    CHECK(recipe.gamma(random_state(seed)).flat().norm() > 0.1);
  }
}

TEST_CASE("AD Γ equals finite differences: scalar-shape coupling s(z) I") {
  using R = TestRecipe<Scaled<double>, Scaled<double>,
                       SkewPair<Momentum, Position, StateDependent<ScalarShape, ScalarCoupling>>>;
  R recipe(E{}, {}, {}, 0.01);
  REQUIRE(recipe.status());
  for (std::uint64_t seed = 1; seed <= 5; ++seed) CHECK(gamma_error(recipe, seed) < 1e-7);
}

TEST_CASE("separable AD, full AD and analytic Γ agree; a wrong analytic Γ does not") {
  using Full = TestRecipe<StateDependent<DiagonalShape, SeparableDiffusion, false>, Zero,
                          SkewPair<Momentum, Position, Identity>>;
  using Sep = TestRecipe<StateDependent<DiagonalShape, SeparableDiffusion, true>, Zero,
                         SkewPair<Momentum, Position, Identity>>;
  using Analytic = TestRecipe<
      StateDependent<DiagonalShape, SeparableDiffusion, true, SeparableDiffusionGamma<1>>, Zero,
      SkewPair<Momentum, Position, Identity>>;
  using Wrong = TestRecipe<
      StateDependent<DiagonalShape, SeparableDiffusion, true, SeparableDiffusionGamma<-1>>, Zero,
      SkewPair<Momentum, Position, Identity>>;
  Full full(E{}, {}, {}, 0.01);
  Sep sep(E{}, {}, {}, 0.01);
  Analytic analytic(E{}, {}, {}, 0.01);
  Wrong wrong(E{}, {}, {}, 0.01);
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    const auto z = random_state(seed);
    const DVec g = full.gamma(z).flat();
    CHECK((DVec(sep.gamma(z).flat()) - g).cwiseAbs().maxCoeff() < 1e-14);
    CHECK((DVec(analytic.gamma(z).flat()) - g).cwiseAbs().maxCoeff() < 1e-13);
    CHECK(gamma_error(full, seed) < 1e-7);
    // Negative control: the flipped analytic Γ is off by 2|Γ|, far above the tolerance.
    CHECK(gamma_error(wrong, seed) > 1e-2);
  }
}

TEST_CASE("constant structures have Γ = 0 exactly") {
  SGHMC<double, 2> s({0.1, 1.0, 1.0});
  const auto z = random_state(3);
  CHECK(s.recipe().gamma(z).flat().isZero(0.0));
}
