// Constant-metric SGRHMC (samplers/sgrhmc_constant.hpp): on the same noise it equals SGRHMC with
// the same constant metric (whose Γ the engine finds by automatic differentiation), for both
// integrators and with a V̂ correction; its three storages agree; with G⁻¹ = I/m it is SGHMC with
// mass m and friction 1 in p = √m r; it runs the fused engine at any d without heap; bad metrics
// are refused with the state unchanged. ConstantMetricSGRLD is SGLD.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "alloc_counter.hpp"
#include "local_rng.hpp"
#include "sgmcmc/samplers/sgrhmc.hpp"
#include "sgmcmc/samplers/sgrhmc_constant.hpp"

namespace {

using sgmcmc::StatusCode;
using sgmcmc::Vector;
using Rng = sgmcmc_test::LocalRng;

constexpr int D = 5;

/// U = Σ θ_i⁴/4 + ½ Σ a_i θ_i² + 0.2 (Σθ)²: coupled, not quadratic.
struct Quartic {
  template <class Th, class G>
  void gradient(const Th& th, G& g) const noexcept {
    using T = typename Th::Scalar;
    const T s = th.sum();
    for (int i = 0; i < th.size(); ++i) {
      g[i] = th[i] * th[i] * th[i] + T(0.5 + 0.3 * i) * th[i] + T(0.4) * s;
    }
  }
};

/// G⁻¹ = diag(0.4, 0.9, 1.6, 0.25, 1.2) as a callable of θ that ignores θ (SGRHMC's form).
struct ConstInverse {
  template <class T, int N>
  Vector<T, N> operator()(const Vector<T, N>&) const noexcept {
    Vector<T, N> v;
    const double values[] = {0.4, 0.9, 1.6, 0.25, 1.2};
    for (int i = 0; i < N; ++i) v[i] = T(values[i % 5]);
    return v;
  }
};

/// U = ½ θᵀθ + Σ θ_i⁴/4 (uncoupled: for large d).
struct Separable {
  template <class Th, class G>
  void gradient(const Th& th, G& g) const noexcept {
    g = th + th.cwiseProduct(th).cwiseProduct(th);
  }
};

/// A gradient with a NaN entry.
struct NaNModel {
  template <class Th, class G>
  void gradient(const Th& th, G& g) const noexcept {
    g = th;
    g[1] = std::numeric_limits<typename Th::Scalar>::quiet_NaN();
  }
};

/// A dense symmetric positive definite G⁻¹ = BBᵀ/2 + 0.3 I (B fixed), as a callable of θ that
/// ignores θ.
struct ConstDenseInverse {
  template <class T, int N>
  sgmcmc::Matrix<T, N, N> operator()(const Vector<T, N>&) const noexcept {
    sgmcmc::Matrix<double, N, N> b;
    for (int i = 0; i < N; ++i) {
      for (int j = 0; j < N; ++j) b(i, j) = std::sin(1.0 + i + 2.0 * j);
    }
    const sgmcmc::Matrix<double, N, N> a =
        b * b.transpose() / 2 + 0.3 * sgmcmc::Matrix<double, N, N>::Identity();
    sgmcmc::Matrix<T, N, N> out;
    for (int i = 0; i < N; ++i) {
      for (int j = 0; j < N; ++j) out(i, j) = T(a(i, j));
    }
    return out;
  }
};

template <class S>
Vector<S, D> inverse_values() {
  return ConstInverse{}(Vector<S, D>::Zero().eval());
}

template <class S>
constexpr S tol() {
  return sizeof(S) == 4 ? S(2e-5) : S(1e-13);
}

/// Steps both samplers 200 times on the same normals from the same start and checks z after each
/// step to rounding (relative to 1 + |z|).
template <class A, class B>
void same_chain(const A& a, const B& b) {
  using S = typename A::Scalar;
  Rng rng(17);
  Vector<S, D> th0;
  th0 << S(0.5), S(-1.0), S(0.3), S(1.5), S(-0.2);
  auto za = a.start(th0);
  auto zb = b.start(th0);
  Vector<S, D> r0;
  sgmcmc::fill_normal(rng, r0);
  za.momentum() = r0;
  zb.momentum() = r0;
  const Quartic model;
  for (int t = 0; t < 200; ++t) {
    typename A::NoiseVector zeta;
    static_assert(A::noise_dim == B::noise_dim, "same normals per step");
    sgmcmc::fill_normal(rng, zeta);
    REQUIRE(a.step_with_noise(za, model, zeta) == StatusCode::Ok);
    REQUIRE(b.step_with_noise(zb, model, zeta) == StatusCode::Ok);
    const auto fa = za.flat();
    const auto fb = zb.flat();
    CHECK(((fa - fb).array().abs() <= tol<S>() * (S(1) + fa.array().abs())).all());
  }
}

}  // namespace

TEST_CASE_TEMPLATE("constant-metric SGRHMC equals SGRHMC with the same constant metric", S, float,
                   double) {
  using Metric = sgmcmc::InverseMetric<sgmcmc::DiagonalShape, ConstInverse, true>;
  sgmcmc::Diagonal<S, D> ginv;
  ginv.value = inverse_values<S>();
  const S h = S(0.05);

  SUBCASE("kick-drift") {
    sgmcmc::SGRHMC<S, D, Metric> reference({h, Metric{}, {}});
    sgmcmc::ConstantMetricSGRHMC<S, D> fast({h, ginv});
    REQUIRE(reference.status() == StatusCode::Ok);
    REQUIRE(fast.status() == StatusCode::Ok);
    same_chain(fast, reference);
  }
  SUBCASE("explicit Euler") {
    sgmcmc::SGRHMC<S, D, Metric, sgmcmc::AutoGamma, sgmcmc::ExplicitEuler> reference(
        {h, Metric{}, {}});
    sgmcmc::ConstantMetricSGRHMC<S, D, sgmcmc::Diagonal<S, D>, sgmcmc::ExplicitEuler> fast(
        {h, ginv});
    same_chain(fast, reference);
  }
  SUBCASE("with a gradient-noise correction and T = 0.7") {
    sgmcmc::SGRHMC<S, D, Metric> reference({h, Metric{}, {}});
    sgmcmc::ConstantMetricSGRHMC<S, D> fast({h, ginv});
    Vector<S, D> vhat;
    vhat << S(1), S(2), S(0.5), S(3), S(0.1);
    REQUIRE(reference.set_gradient_noise(vhat) == StatusCode::Ok);
    REQUIRE(fast.set_gradient_noise(vhat) == StatusCode::Ok);
    REQUIRE(reference.set_temperature(S(0.7)) == StatusCode::Ok);
    REQUIRE(fast.set_temperature(S(0.7)) == StatusCode::Ok);
    same_chain(fast, reference);
  }
  SUBCASE("the reference's Γ is zero (so the comparison is not vacuous about it)") {
    sgmcmc::SGRHMC<S, D, Metric> reference({h, Metric{}, {}});
    auto z = reference.start(Vector<S, D>::Constant(S(0.3)));
    const auto gamma = reference.recipe().gamma(z, Quartic{});
    CHECK(gamma.flat().cwiseAbs().maxCoeff() == S(0));
    static_assert(sgmcmc::ConstantMetricSGRHMC<S, D>::RecipeType::fused,
                  "constant-metric SGRHMC runs the fused engine");
    static_assert(!decltype(reference)::RecipeType::fused,
                  "SGRHMC with a callable metric does not");
  }
}

TEST_CASE_TEMPLATE("a dense constant metric equals SGRHMC with the same dense metric", S, float,
                   double) {
  using Metric = sgmcmc::InverseMetric<sgmcmc::DenseShape, ConstDenseInverse>;
  sgmcmc::Dense<S, D, D> ginv;
  ginv.value = ConstDenseInverse{}(Vector<S, D>::Zero().eval());
  sgmcmc::SGRHMC<S, D, Metric> reference({S(0.02), Metric{}, {}});
  sgmcmc::ConstantMetricSGRHMC<S, D, sgmcmc::Dense<S, D, D>> fast({S(0.02), ginv});
  REQUIRE(reference.status() == StatusCode::Ok);
  REQUIRE(fast.status() == StatusCode::Ok);
  same_chain(fast, reference);
  // S is the principal square root of G⁻¹.
  const auto& sq = std::get<0>(fast.recipe().curl().pairs).a.value;
  CHECK((sq * sq - ginv.value).cwiseAbs().maxCoeff() <= S(100) * tol<S>());
  CHECK((sq - sq.transpose()).cwiseAbs().maxCoeff() <= S(10) * tol<S>());
  // Not positive definite: refused.
  ginv.value(2, 2) = S(-3);
  CHECK(sgmcmc::ConstantMetricSGRHMC<S, D, sgmcmc::Dense<S, D, D>>({S(0.02), ginv}).status() ==
        StatusCode::InvalidParameter);
}

TEST_CASE("Scaled, Diagonal and DiagonalMap storages give the same chain") {
  using S = double;
  const S s = 0.6;
  sgmcmc::Diagonal<S, D> diag;
  diag.value.setConstant(s);
  const S values[D] = {s, s, s, s, s};
  sgmcmc::DiagonalMap<S, D> map{values};
  sgmcmc::ConstantMetricSGRHMC<S, D, sgmcmc::Scaled<S>> scaled({0.05, {s}});
  sgmcmc::ConstantMetricSGRHMC<S, D> held({0.05, diag});
  sgmcmc::ConstantMetricSGRHMC<S, D, sgmcmc::DiagonalMap<S, D>> mapped({0.05, map});
  same_chain(scaled, held);
  same_chain(mapped, held);
  // Non-uniform values through a map equal the same values held inline.
  sgmcmc::Diagonal<S, D> ginv;
  ginv.value = inverse_values<S>();
  sgmcmc::ConstantMetricSGRHMC<S, D, sgmcmc::DiagonalMap<S, D>> mapped2(
      {0.05, sgmcmc::DiagonalMap<S, D>{ginv.value.data()}});
  sgmcmc::ConstantMetricSGRHMC<S, D> held2({0.05, ginv});
  same_chain(mapped2, held2);
}

// SGRHMC with G⁻¹ = I/m is SGHMC with mass m and friction 1 in p = √m r (docs/samplers/
// constant-metric.md): r' = r − (h/√m)g − (h/m)r + √(2h/m)ζ ⇔ p' = p − hg − hp/m + √(2h)ζ, and
// θ' = θ + (h/√m)r' = θ + hp'/m. Same normals, same chain to rounding.
TEST_CASE("with G^-1 = I/m it is SGHMC with mass m and friction 1") {
  using S = double;
  const S m = 2.5;
  const S h = 0.04;
  sgmcmc::ConstantMetricSGRHMC<S, D, sgmcmc::Scaled<S>> rhmc({h, {1 / m}});
  sgmcmc::SGHMC<S, D> sghmc({h, 1.0, m});
  Rng rng(4);
  Vector<S, D> th0;
  th0 << 0.1, 0.2, -0.3, 0.4, -0.5;
  auto zr = rhmc.start(th0);
  auto zs = sghmc.start(th0);
  Vector<S, D> r0;
  sgmcmc::fill_normal(rng, r0);
  zr.momentum() = r0;
  zs.momentum() = std::sqrt(m) * r0;
  for (int t = 0; t < 300; ++t) {
    Vector<S, D> zeta;
    sgmcmc::fill_normal(rng, zeta);
    REQUIRE(rhmc.step_with_noise(zr, Quartic{}, zeta) == StatusCode::Ok);
    REQUIRE(sghmc.step_with_noise(zs, Quartic{}, zeta) == StatusCode::Ok);
    CHECK((zr.position() - zs.position()).norm() <= 1e-12 * (1 + zs.position().norm()));
    CHECK((std::sqrt(m) * zr.momentum() - zs.momentum()).norm() <=
          1e-12 * (1 + zs.momentum().norm()));
  }
}

TEST_CASE("constant-metric SGRHMC at d = 100000 over caller memory, without heap") {
  constexpr int L = 100000;
  using Sampler = sgmcmc::ConstantMetricSGRHMC<float, L, sgmcmc::DiagonalMap<float, L>>;
  static float ginv[L];
  for (int i = 0; i < L; ++i) ginv[i] = 0.5f + 0.001f * static_cast<float>(i % 1000);
  Sampler s({0.05f, sgmcmc::DiagonalMap<float, L>{ginv}});
  REQUIRE(s.status() == StatusCode::Ok);
  alignas(sgmcmc::kAlignBytes) static float memory[Sampler::StateMap::storage_size];
  Sampler::StateMap z(memory);
  static float theta0[L];
  for (int i = 0; i < L; ++i) theta0[i] = 0.01f * static_cast<float>(i % 7);
  REQUIRE(s.start(z, sgmcmc::UnalignedMap<float, L>(theta0)) == StatusCode::Ok);
  Rng rng(2);
  long allocations = 0;
  int failures = 0;
  {
    sgmcmc_test::AllocationScope scope;
    for (int t = 0; t < 10; ++t) failures += s.step(z, Separable{}, rng) ? 0 : 1;
    failures += s.refresh_momentum(z, rng) ? 0 : 1;
    allocations = scope.count();
  }
  CHECK(failures == 0);
  CHECK(allocations == 0);
  CHECK(z.all_finite());
}

TEST_CASE_TEMPLATE("bad metrics are refused, the state unchanged", S, float, double) {
  const S nan = std::numeric_limits<S>::quiet_NaN();
  Rng rng(3);
  auto check_refused = [&](const auto& sampler) {
    CHECK(sampler.status() == StatusCode::InvalidParameter);
    using Sampler = std::decay_t<decltype(sampler)>;
    sgmcmc::ConstantMetricSGRHMC<S, D> good;
    auto z = good.start(Vector<S, D>::Constant(S(0.2)));
    const auto saved = z;
    CHECK(sampler.step(z, Quartic{}, rng) == StatusCode::InvalidParameter);
    CHECK(z == saved);
    typename Sampler::State z2;
    CHECK(sampler.start(z2, Vector<S, D>::Zero()) == StatusCode::InvalidParameter);
  };
  sgmcmc::Diagonal<S, D> ginv;
  ginv.value = inverse_values<S>();
  ginv.value[2] = S(-0.1);
  check_refused(sgmcmc::ConstantMetricSGRHMC<S, D>({S(0.05), ginv}));
  ginv.value[2] = nan;
  check_refused(sgmcmc::ConstantMetricSGRHMC<S, D>({S(0.05), ginv}));
  check_refused(sgmcmc::ConstantMetricSGRHMC<S, D, sgmcmc::Scaled<S>>({S(0.05), {S(-1)}}));
  check_refused(
      sgmcmc::ConstantMetricSGRHMC<S, D, sgmcmc::DiagonalMap<S, D>>({S(0.05), {nullptr}}));
  S values[D] = {S(1), S(1), S(-2), S(1), S(1)};
  check_refused(sgmcmc::ConstantMetricSGRHMC<S, D, sgmcmc::DiagonalMap<S, D>>({S(0.05), {values}}));
  sgmcmc::ConstantMetricSGRHMC<S, D> bad_h({S(0), sgmcmc::Diagonal<S, D>{}});
  CHECK(bad_h.status() == StatusCode::InvalidStepSize);
  // Non-finite gradient: NonFiniteGradient, z unchanged.
  sgmcmc::ConstantMetricSGRHMC<S, D> good;
  auto z = good.start(Vector<S, D>::Constant(S(0.2)));
  const auto saved = z;
  CHECK(good.step(z, NaNModel{}, rng) == StatusCode::NonFiniteGradient);
  CHECK(z == saved);
}

TEST_CASE("ConstantMetricSGRLD is SGLD with D0 = G^-1") {
  static_assert(std::is_same_v<sgmcmc::ConstantMetricSGRLD<double, D>,
                               sgmcmc::SGLD<double, D, sgmcmc::Diagonal<double, D>>>);
  // SGRLD with the same constant metric (AD Γ = 0) steps the same chain.
  using Metric = sgmcmc::InverseMetric<sgmcmc::DiagonalShape, ConstInverse, true>;
  sgmcmc::SGRLD<double, D, Metric> reference({0.01, Metric{}, {}});
  sgmcmc::Diagonal<double, D> ginv;
  ginv.value = inverse_values<double>();
  sgmcmc::ConstantMetricSGRLD<double, D> fast({0.01, ginv});
  Rng rng(12);
  Vector<double, D> th0 = Vector<double, D>::Constant(0.4);
  auto za = reference.start(th0);
  auto zb = fast.start(th0);
  for (int t = 0; t < 200; ++t) {
    Vector<double, D> zeta;
    sgmcmc::fill_normal(rng, zeta);
    REQUIRE(reference.step_with_noise(za, Quartic{}, zeta) == StatusCode::Ok);
    REQUIRE(fast.step_with_noise(zb, Quartic{}, zeta) == StatusCode::Ok);
    CHECK((za.position() - zb.position()).norm() <= 1e-13 * (1 + za.position().norm()));
  }
}
