// Conformance suite stamped over every sampler type (float and double): the zero-noise rule,
// determinism, zero heap, and every bad-input Status with the state left bit-identical.
// A new sampler joins by adding a Case type and one line to the type lists below.
#define EIGEN_RUNTIME_NO_MALLOC
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "../geometry/conformance_cases.hpp"
#include "alloc_counter.hpp"
#include "sgmcmc/host/rng.hpp"
#include "sgmcmc/sgmcmc.hpp"
#include "test_models.hpp"

using namespace sgmcmc;
using sgmcmc_test::bit_identical;

namespace {

template <class Scalar>
Scalar tol() {
  return std::is_same_v<Scalar, float> ? Scalar(2e-5) : Scalar(1e-13);
}

// ------------------------------------------------------------------------------ the cases
// Each case: make(h) builds a valid sampler; invalid() one with an invalid parameter (or nothing);
// deterministic(z, g) applies MATH.md §2.2's update with the noise set to zero, by hand.

template <class Scalar_, int Dim_>
struct SGLDCase {
  using Scalar = Scalar_;
  static constexpr int Dim = Dim_;
  using Sampler = SGLD<Scalar, Dim>;
  static constexpr bool recipe = true;
  static constexpr bool noisy = true;
  static constexpr bool supports_vhat = true;
  static Sampler make(Scalar h) {
    typename Sampler::Params p;
    p.step_size = h;
    p.diffusion.value = Scalar(0.7);
    return Sampler(p);
  }
  static Sampler invalid() {
    typename Sampler::Params p;
    p.diffusion.value = Scalar(-1);  // D0 must be PSD
    return Sampler(p);
  }
  template <class Z, class G>
  static void deterministic(Z& z, const G& g, Scalar h) {
    z.position() -= h * Scalar(0.7) * g;
  }
};

template <class Scalar_, int Dim_>
struct SGDCase {
  using Scalar = Scalar_;
  static constexpr int Dim = Dim_;
  using Sampler = SGD<Scalar, Dim>;
  static constexpr bool recipe = true;
  static constexpr bool noisy = false;
  static constexpr bool supports_vhat = true;
  static Sampler make(Scalar h) { return Sampler({h, Scaled<Scalar>{Scalar(1)}}); }
  static Sampler invalid() { return Sampler({Scalar(0.1), Scaled<Scalar>{Scalar(-2)}}); }
  template <class Z, class G>
  static void deterministic(Z& z, const G& g, Scalar h) {
    z.position() -= h * g;
  }
};

template <class Scalar_, int Dim_>
struct SGHMCCase {
  using Scalar = Scalar_;
  static constexpr int Dim = Dim_;
  using Sampler = SGHMC<Scalar, Dim>;
  static constexpr bool recipe = true;
  static constexpr bool noisy = true;
  static constexpr bool supports_vhat = true;
  static constexpr Scalar c = Scalar(1.5), m = Scalar(0.8);
  static Sampler make(Scalar h) { return Sampler({h, c, m}); }
  static Sampler invalid() { return Sampler({Scalar(0.1), Scalar(-1), Scalar(1)}); }  // C < 0
  template <class Z, class G>
  static void deterministic(Z& z, const G& g, Scalar h) {
    z.momentum() = z.momentum() - h * g - h * c * z.momentum() / m;
    z.position() += h * z.momentum() / m;
  }
};

template <class Scalar_, int Dim_>
struct SGDMomentumCase {
  using Scalar = Scalar_;
  static constexpr int Dim = Dim_;
  using Sampler = SGDMomentum<Scalar, Dim>;
  static constexpr bool recipe = true;
  static constexpr bool noisy = false;
  static constexpr bool supports_vhat = true;
  static constexpr Scalar alpha = Scalar(0.1);
  static Sampler make(Scalar h) { return Sampler({h * h, alpha}); }  // η = h², so step size h
  static Sampler invalid() { return Sampler({Scalar(-0.1), alpha}); }
  template <class Z, class G>
  static void deterministic(Z& z, const G& g, Scalar h) {
    // v = h r;  v ← (1 − α)v − ηg;  θ ← θ + v  (MATH.md §2.2, η = h²).
    const Vector<Scalar, Dim> v = (Scalar(1) - alpha) * (h * z.momentum()) - h * h * g;
    z.momentum() = v / h;
    z.position() += v;
  }
};

template <class Scalar_, int Dim_>
struct SGNHTCase {
  using Scalar = Scalar_;
  static constexpr int Dim = Dim_;
  using Sampler = SGNHT<Scalar, Dim>;
  static constexpr bool recipe = true;
  static constexpr bool noisy = true;
  static constexpr bool supports_vhat = true;
  static Sampler make(Scalar h) { return Sampler({h, Scalar(1.2)}); }
  static Sampler invalid() { return Sampler({Scalar(0.1), Scalar(-1)}); }  // A < 0
  template <class Z, class G>
  static void deterministic(Z& z, const G& g, Scalar h) {
    const Scalar xi = z.thermostat()[0];
    z.momentum() = z.momentum() - h * xi * z.momentum() - h * g;
    z.position() += h * z.momentum();
    z.thermostat()[0] += h * (z.momentum().squaredNorm() / Scalar(Dim) - Scalar(1));
  }
};

template <class Scalar_, int Dim_>
struct HMCCase {
  using Scalar = Scalar_;
  static constexpr int Dim = Dim_;
  using Sampler = HMC<Scalar, Dim>;
  static constexpr bool recipe = false;
  static constexpr bool noisy = true;
  static constexpr bool supports_vhat = false;
  static Sampler make(Scalar h) { return Sampler({h, 3, Scalar(1), true}); }
  static constexpr bool leapfrog_rule = true;
  static Sampler invalid() { return Sampler({Scalar(0.1), 0, Scalar(1), true}); }  // L = 0
  template <class Z, class G, class M>
  static void leapfrog(Z& z, G g, Scalar h, const M& model) {
    for (int l = 0; l < 3; ++l) {
      z.momentum() -= h / 2 * g;
      z.position() += h * z.momentum();
      model.gradient(z.position(), g);
      z.momentum() -= h / 2 * g;
    }
  }
};

template <class Scalar_, int Dim_, int Shape>
struct SGMGTCase {
  using Scalar = Scalar_;
  static constexpr int Dim = Dim_;
  using Sampler = SGMGT<Scalar, Dim>;
  static constexpr bool recipe = true;
  static constexpr bool noisy = true;
  static constexpr bool supports_vhat = true;
  static SoftMonomialGammaKinetic<Scalar> kinetic() {
    return {Shape, Scalar(1.1), Scalar(Shape == 1 ? 5 : 3)};
  }
  static typename Sampler::Params params(Scalar h) {
    typename Sampler::Params p;
    p.step_size = h;
    p.shape = Shape;
    p.mass = Scalar(1.1);
    p.softness = Scalar(Shape == 1 ? 5 : 3);
    p.diffusion = Scalar(1.3);
    return p;
  }
  static Sampler make(Scalar h) { return Sampler(params(h)); }
  static Sampler invalid() {
    auto p = params(Scalar(0.05));
    p.shape = 3;  // only a = 1, 2 are implemented
    return Sampler(p);
  }
  template <class Z, class G>
  static void deterministic(Z& z, const G& g, Scalar h) {
    // MATH.md §3.3, sweep p, θ, ξ: p ← p − h[g + ξ⊙∇K_c(p)]; θ ← θ + h∇K_c(p); ξ ← ξ + h f₃(p).
    const auto k = kinetic();
    const Vector<Scalar, Dim> gk = k.gradient(z.momentum());
    z.momentum() -= h * (g + z.thermostat().cwiseProduct(gk));
    z.position() += h * Vector<Scalar, Dim>(k.gradient(z.momentum()));
    z.thermostat() += h * Vector<Scalar, Dim>(k.thermostat_force(z.momentum()));
  }
};

template <class Scalar_, int Dim_>
struct SGMGTDCase {
  using Scalar = Scalar_;
  static constexpr int Dim = Dim_;
  using Sampler = SGMGTD<Scalar, Dim>;
  static constexpr bool recipe = true;
  static constexpr bool noisy = true;
  // V̂ couples the θ and p noise here (MATH.md §3.4); the engine reports Unsupported instead.
  static constexpr bool supports_vhat = false;
  static constexpr Scalar st = Scalar(0.2), sp = Scalar(1.5), sx = Scalar(0.1), gm = Scalar(0.5);
  static SoftMonomialGammaKinetic<Scalar> kinetic() { return {1, Scalar(1), Scalar(5)}; }
  static typename Sampler::Params params(Scalar h) {
    typename Sampler::Params p;
    p.step_size = h;
    p.shape = 1;
    p.mass = Scalar(1);
    p.softness = Scalar(5);
    p.sigma_theta = st;
    p.sigma_p = sp;
    p.sigma_xi = sx;
    p.gamma = gm;
    return p;
  }
  static Sampler make(Scalar h) { return Sampler(params(h)); }
  static Sampler invalid() {
    auto p = params(Scalar(0.05));
    p.gamma = Scalar(0);  // γ > 0 required
    return Sampler(p);
  }
  template <class Z, class G>
  static void deterministic(Z& z, const G& g, Scalar h) {
    // MATH.md §3.4 drift with the noise removed, sweep p, θ, ξ (g from θ_t in both θ and p).
    const auto k = kinetic();
    const Vector<Scalar, Dim> gk = k.gradient(z.momentum());
    z.momentum() -= h * (g + z.thermostat().cwiseProduct(gk));
    z.position() += h * (Vector<Scalar, Dim>(k.gradient(z.momentum())) - st * g);
    z.thermostat() += h * (gm * Vector<Scalar, Dim>(k.thermostat_force(z.momentum())) -
                           (sx / gm) * (z.thermostat().array() - sp).matrix());
  }
};

template <class Scalar_, int Dim_>
struct NUTSCase {
  using Scalar = Scalar_;
  static constexpr int Dim = Dim_;
  using Sampler = NUTS<Scalar, Dim, 6>;
  static constexpr bool recipe = false;
  static constexpr bool leapfrog_rule = false;
  static constexpr bool noisy = true;
  static constexpr bool supports_vhat = false;
  static Sampler make(Scalar h) { return Sampler({h, Scalar(1), Scalar(1000)}); }
  static Sampler invalid() { return Sampler({Scalar(0.1), Scalar(-1), Scalar(1000)}); }  // m < 0
};

#define SGMCMC_CONFORMANCE_CASES                                                                 \
  SGLDCase<float, 1>, SGLDCase<double, 5>, SGDCase<float, 3>, SGDCase<double, 4>,                \
      SGHMCCase<float, 3>, SGHMCCase<double, 8>, SGDMomentumCase<float, 2>,                      \
      SGDMomentumCase<double, 3>, SGNHTCase<float, 4>, SGNHTCase<double, 2>, HMCCase<float, 2>,  \
      HMCCase<double, 3>, SGMGTCase<float, 3, 1>, SGMGTCase<double, 2, 2>, SGMGTDCase<float, 2>, \
      SGMGTDCase<double, 3>, NUTSCase<float, 2>, NUTSCase<double, 3>, geo::SGRLDCase<float, 2>,  \
      geo::SGRLDCase<double, 3>, geo::SGRHMCCase<float, 2>,                                      \
      geo::SGRHMCCase<double, 3, ExplicitEuler>, geo::GSGRHMCCase<double, 2>

template <class Case>
auto random_state(std::uint64_t seed) {
  using Scalar = typename Case::Scalar;
  auto s = Case::make(Scalar(0.05));
  auto z = s.start(Vector<Scalar, Case::Dim>::Zero());
  sgmcmc_test::TinyRng rng(seed);
  auto flat = z.flat();
  for (int i = 0; i < flat.size(); ++i) flat[i] = Scalar(0.5) * normal<Scalar>(rng);
  z.set_flat(flat);
  return z;
}

}  // namespace

TEST_CASE_TEMPLATE("zero noise reduces to the deterministic rule of MATH.md §2.2", Case,
                   SGMCMC_CONFORMANCE_CASES) {
  using Scalar = typename Case::Scalar;
  constexpr int Dim = Case::Dim;
  const Scalar h = Scalar(0.05);
  auto s = Case::make(h);
  REQUIRE(s.status());
  sgmcmc_test::QuarticModel<Scalar, Dim> model;
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    auto z = random_state<Case>(seed);
    auto expected = z;
    Vector<Scalar, Dim> g;
    model.gradient(z.position(), g);
    if constexpr (Case::recipe) {
      typename Case::Sampler::NoiseVector zero = Case::Sampler::NoiseVector::Zero();
      if constexpr (Case::Sampler::has_noise_tick) {
        REQUIRE(s.step_with_noise(z, model, zero));
      } else {  // SGMGT: the dynamics alone (its step also counts and resamples)
        REQUIRE(s.recipe().step_with_noise(z, model, zero.data()));
      }
      Case::deterministic(expected, g, h);
    } else if constexpr (Case::leapfrog_rule) {
      REQUIRE(s.leapfrog(z, model));
      Case::leapfrog(expected, g, h, model);
    } else {
      return;  // NUTS has no zero-noise rule: its trajectory length is random by design
    }
    const Scalar scale = Scalar(1) + expected.flat().cwiseAbs().maxCoeff();
    CHECK((z.flat() - expected.flat()).cwiseAbs().maxCoeff() <= tol<Scalar>() * scale);
  }
}

TEST_CASE_TEMPLATE("a fixed seed gives a bit-identical chain; other streams differ", Case,
                   SGMCMC_CONFORMANCE_CASES) {
  using Scalar = typename Case::Scalar;
  constexpr int Dim = Case::Dim;
  auto s = Case::make(Scalar(0.05));
  sgmcmc_test::QuarticModel<Scalar, Dim> model;
  auto run = [&](std::uint64_t seed, std::uint64_t stream) {
    host::Rng rng(seed, stream);
    auto z = random_state<Case>(7);
    for (int i = 0; i < 60; ++i) REQUIRE(s.step(z, model, rng));
    return z;
  };
  const auto a = run(42, 0), b = run(42, 0), c = run(42, 1), d = run(43, 0);
  CHECK(bit_identical(a, b));
  if constexpr (Case::noisy) {
    CHECK_FALSE(bit_identical(a, c));
    CHECK_FALSE(bit_identical(a, d));
  }
}

TEST_CASE_TEMPLATE("a step allocates nothing (counting operator new/malloc, Eigen's guard)", Case,
                   SGMCMC_CONFORMANCE_CASES) {
  using Scalar = typename Case::Scalar;
  constexpr int Dim = Case::Dim;
  auto s = Case::make(Scalar(0.05));
  sgmcmc_test::QuarticModel<Scalar, Dim> model;
  host::Rng rng(5);
  auto z = random_state<Case>(3);
  long count = 0;
  bool ok = true;
  {
    sgmcmc_test::AllocationScope scope;
    Eigen::internal::set_is_malloc_allowed(false);
    for (int i = 0; i < 200; ++i) ok = ok && static_cast<bool>(s.step(z, model, rng));
    Eigen::internal::set_is_malloc_allowed(true);
    count = scope.count();
  }
  CHECK(ok);
  CHECK(count == 0);
}

TEST_CASE("negative control: the allocation counter sees an allocating model") {
  SGLD<double, 3> s({0.01, {}});
  sgmcmc_test::AllocatingModel<double, 3> model;
  host::Rng rng(1);
  auto z = s.start(Vector<double, 3>::Zero());
  sgmcmc_test::AllocationScope scope;
  for (int i = 0; i < 10; ++i) REQUIRE(s.step(z, model, rng));
  CHECK(scope.count() >= 10);
}

TEST_CASE_TEMPLATE("bad input returns its Status and leaves the state bit-identical", Case,
                   SGMCMC_CONFORMANCE_CASES) {
  using Scalar = typename Case::Scalar;
  constexpr int Dim = Case::Dim;
  sgmcmc_test::QuarticModel<Scalar, Dim> model;
  host::Rng rng(9);
  const auto z0 = random_state<Case>(11);

  SUBCASE("NaN and Inf gradients") {
    auto s = Case::make(Scalar(0.05));
    for (Scalar bad :
         {std::numeric_limits<Scalar>::quiet_NaN(), std::numeric_limits<Scalar>::infinity(),
          -std::numeric_limits<Scalar>::infinity()}) {
      auto z = z0;
      sgmcmc_test::BadGradientModel<Scalar, Dim> m{bad};
      const Status st = s.step(z, m, rng);
      CHECK(st == StatusCode::NonFiniteGradient);
      CHECK(bit_identical(z, z0));
    }
  }
  SUBCASE("non-finite initial state") {
    auto s = Case::make(Scalar(0.05));
    auto z = z0;
    z.position()[0] = std::numeric_limits<Scalar>::quiet_NaN();
    const auto before = z;
    const Status st = s.step(z, model, rng);
    // A NaN position gives a NaN gradient from this model, or a NaN next state: either way the
    // step refuses and keeps the state.
    CHECK((st == StatusCode::NonFiniteState || st == StatusCode::NonFiniteGradient));
    CHECK(bit_identical(z, before));
  }
  SUBCASE("h <= 0 or not finite") {
    for (Scalar h : {Scalar(0), Scalar(-0.1), std::numeric_limits<Scalar>::quiet_NaN(),
                     std::numeric_limits<Scalar>::infinity()}) {
      auto s = Case::make(h);
      auto z = z0;
      const Status st = s.step(z, model, rng);
      if constexpr (std::is_same_v<typename Case::Sampler, SGDMomentum<Scalar, Dim>>) {
        // η = h² is positive for h = -0.1: only 0 and non-finite values are invalid there.
        if (h == Scalar(-0.1)) continue;
      }
      CHECK(st == StatusCode::InvalidStepSize);
      CHECK(s.status() == StatusCode::InvalidStepSize);
      CHECK(bit_identical(z, z0));
    }
  }
  SUBCASE("invalid parameter") {
    auto s = Case::invalid();
    auto z = z0;
    const Status st = s.step(z, model, rng);
    CHECK(!st);
    CHECK((st == StatusCode::InvalidParameter || st == StatusCode::InvalidStepSize));
    CHECK(bit_identical(z, z0));
  }
  if constexpr (Case::supports_vhat) {
    SUBCASE("2D - h*Bhat not PSD") {
      auto s = Case::make(Scalar(0.05));
      // V̂ = 10⁶: h V̂ ≫ 2D for every sampler here (cold samplers draw no noise: still valid).
      const Status cfg = s.set_gradient_noise(Scalar(1e6));
      auto z = z0;
      const Status st = s.step(z, model, rng);
      if constexpr (Case::noisy) {
        // Constant D: refused when V̂ is set. State-dependent D: V̂ is accepted and the step at
        // a state where 2D(z) − hB̂(z) is not PSD refuses.
        CHECK((cfg == StatusCode::NoiseNotPSD || cfg == StatusCode::Ok));
        CHECK(st == StatusCode::NoiseNotPSD);
        CHECK(bit_identical(z, z0));
      } else {
        CHECK(cfg);
        CHECK(st);
      }
      // Negative V̂ is not a covariance.
      CHECK(s.set_gradient_noise(Scalar(-1)) == StatusCode::InvalidParameter);
    }
  }
}
