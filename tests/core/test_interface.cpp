// One interface (issue 12): a single generic function runs every shipped sampler, float and
// double, through the same calls; the base class's entry points cannot be hidden by a sampler
// (the SGMGT cases that failed before the interface was written once).
#include <doctest/doctest.h>

#include <cstdint>
#include <type_traits>

#include "sgmcmc/host/rng.hpp"
#include "sgmcmc/sgmcmc.hpp"

using namespace sgmcmc;

namespace {

/// U = θᵀθ/2 with a potential (HMC, NUTS, gSGRHMC read it) templated on the scalar.
struct Quad {
  template <class T, class G>
  void gradient(const T& th, G& g) const noexcept {
    g = th;
  }
  template <class T, int D>
  T potential(const Vector<T, D>& th) const noexcept {
    return th.squaredNorm() / T(2);
  }
  template <class Th>
  typename Th::Scalar potential(const Th& th) const noexcept {
    return th.squaredNorm() / typename Th::Scalar(2);
  }
};

template <class T, int N>
struct SepInverse {  // G⁻¹_ii = 0.5 + 1/(1 + θ_i²)
  template <class S, int M>
  Vector<S, M> operator()(const Vector<S, M>& th) const noexcept {
    Vector<S, M> g;
    for (int i = 0; i < M; ++i) g[i] = S(0.5) + S(1) / (S(1) + th[i] * th[i]);
    return g;
  }
};
template <class T, int N>
using SepMetric = InverseMetric<DiagonalShape, SepInverse<T, N>, true>;

/// The generic function: everything a user does with any sampler.
template <class S>
void exercise(S& s) {
  using Scalar = typename S::Scalar;
  constexpr int d = S::dim;
  REQUIRE(s.status());
  const typename S::Params p0 = s.params();
  const Scalar h0 = s.step_size();
  CHECK(h0 > Scalar(0));
  // start: by value, in place, with an RNG.
  host::Rng rng(7);
  typename S::State z = s.start(Vector<Scalar, d>::Constant(Scalar(0.3)));
  typename S::State w;
  REQUIRE(s.start(w, Vector<Scalar, d>::Constant(Scalar(0.3))));
  CHECK(z == w);
  typename S::State r = s.start(Vector<Scalar, d>::Constant(Scalar(0.3)), rng);
  CHECK(r.all_finite());
  // A StateMap over caller memory steps exactly as a State.
  alignas(kAlignBytes) static Scalar memory[S::State::storage_size];
  typename S::StateMap m(memory);
  REQUIRE(m.valid());
  REQUIRE(s.start(m, Vector<Scalar, d>::Constant(Scalar(0.3))));
  host::Rng r1(11), r2(11);
  for (int t = 0; t < 50; ++t) {
    REQUIRE(s.step(z, Quad{}, r1));
    REQUIRE(s.step(m, Quad{}, r2));
  }
  CHECK(z == m);
  // The same calls through the base class (no name can be hidden).
  const auto& base = static_cast<const typename S::SamplerBaseType&>(s);
  CHECK(base.status().code == s.status().code);
  CHECK(base.step_size() == s.step_size());
  REQUIRE(base.step(z, Quad{}, r1));
  // Parameters: set_step_size changes params(), set_params restores; both re-validate.
  REQUIRE(s.set_step_size(h0 / Scalar(2)));
  CHECK(s.step_size() == doctest::Approx(double(h0 / Scalar(2))));
  CHECK(base.step_size() == s.step_size());
  CHECK(s.set_step_size(Scalar(-1)) == StatusCode::InvalidStepSize);
  CHECK_FALSE(s.status());
  CHECK_FALSE(s.step(z, Quad{}, r1));  // an invalid sampler refuses to step
  REQUIRE(s.set_params(p0));
  CHECK(s.status());
  CHECK(s.step_size() == h0);
  // Run driver on the same interface.
  const RunResult res = run(s, z, Quad{}, rng, {5, 10, 2}, DiscardSink{});
  CHECK(res.status);
  CHECK(res.kept == 10);
}

template <class S>
S make() {
  return S();
}

}  // namespace

#define SGMCMC_SAMPLERS(T)                                                                     \
  SGLD<T, 3>, SGLD<T, 3, Diagonal<T, 3>>, SGHMC<T, 3>, SGHMC<T, 3, BAOAB>, SGHMC<T, 3, OBABO>, \
      SGHMC<T, 3, ExplicitEuler>, SGNHT<T, 3>, SGD<T, 3>, SGDMomentum<T, 3>, HMC<T, 3>,        \
      NUTS<T, 3, 6>, SGMGT<T, 3>, SGMGTD<T, 3>, SGHMCLearnedRefresh<T, 3, 4>,                  \
      SGRLD<T, 3, SepMetric<T, 3>>, SGRHMC<T, 3, SepMetric<T, 3>>, GSGRHMC<T, 3>,              \
      NaiveSGRLD<T, 3, SepMetric<T, 3>>, NaiveSGRHMC<T, 3, SepMetric<T, 3>>, NaiveGSGRHMC<T, 3>

TEST_CASE_TEMPLATE("one generic function runs every sampler (float)", S, SGMCMC_SAMPLERS(float)) {
  S s = make<S>();
  exercise(s);
}
TEST_CASE_TEMPLATE("one generic function runs every sampler (double)", S, SGMCMC_SAMPLERS(double)) {
  S s = make<S>();
  exercise(s);
}

TEST_CASE("SGMGT: an invalid resample period is seen through the base class (was hidden)") {
  SGMGTParams<double> p;
  p.resample_period = -1;
  const SGMGT<double, 2> s(p);
  const SGMGT<double, 2>::SamplerBaseType& base = s;
  CHECK(base.status() == StatusCode::InvalidParameter);
  auto z = s.start(Vector<double, 2>::Zero());
  host::Rng rng(1);
  CHECK(base.step(z, Quad{}, rng) == StatusCode::InvalidParameter);
  CHECK(s.step(z, Quad{}, rng) == StatusCode::InvalidParameter);
}

TEST_CASE("SGMGT: set_step_size is what params() reads (was a stale copy)") {
  SGMGT<double, 2> s;
  REQUIRE(s.set_step_size(0.5));
  CHECK(s.params().step_size == 0.5);
  CHECK(s.step_size() == 0.5);
  CHECK(s.recipe().step_size() == 0.5);
}

TEST_CASE("start(θ0, rng) draws the auxiliary variables (was never called: hidden init_state)") {
  const SGMGT<double, 3> s;
  host::Rng rng(4);
  const auto z = s.start(Vector<double, 3>::Ones(), rng);
  CHECK(z.position() == Vector<double, 3>::Ones());
  CHECK(z.momentum().cwiseAbs().minCoeff() > 0);  // p ~ exp(−K): 0 has probability zero
  CHECK(z.thermostat()[0] != s.start(Vector<double, 3>::Ones()).thermostat()[0]);
}

TEST_CASE("start(z, θ0, rng) that fails a draw leaves z exactly as it was") {
  SGMGTParams<double> p;
  p.shape = 2;
  p.softness = 1e-3;  // the draw's rejection sampler then reaches its cap (CapReached)
  const SGMGT<double, 3> s(p);
  const SGMGT<double, 3> good;
  host::Rng rng(5);
  auto z = good.start(Vector<double, 3>::Constant(0.25), rng);
  const auto before = z;
  const Status st = s.start(z, Vector<double, 3>::Constant(-2.0), rng);
  REQUIRE(st == StatusCode::CapReached);
  CHECK(z == before);
  // Control: the same call with a drawable softness replaces z.
  CHECK(good.start(z, Vector<double, 3>::Constant(-2.0), rng));
  CHECK_FALSE(z == before);
}

TEST_CASE("SGHMC and SGNHT start(θ0, rng) draw r and ξ from their stationary laws at T") {
  SGHMCParams<double> p;
  p.mass = 4;  // r ~ N(0, 4 I): twice the generator's normals
  SGHMC<double, 3> s(p);
  host::Rng rng(11);
  host::Rng replay = rng;
  Vector<double, 3> n;
  const auto z = s.start(Vector<double, 3>::Ones(), rng);
  replay.fill_normal(n);
  CHECK(z.position() == Vector<double, 3>::Ones());
  CHECK(z.momentum() == 2.0 * n);
  // At T = 1/4 the law is N(0, T m I): the same normals, halved.
  REQUIRE(s.set_temperature(0.25));
  const auto zt = s.start(Vector<double, 3>::Ones(), rng);
  replay.fill_normal(n);
  CHECK(zt.momentum() == n);
  // Control: without a generator the momentum starts at zero.
  CHECK(s.start(Vector<double, 3>::Ones()).momentum() == Vector<double, 3>::Zero());

  SGNHTParams<double> q;
  q.diffusion = 2;  // ξ ~ N(A, 1/d) with A = 2, d = 4
  const SGNHT<double, 4> t(q);
  Vector<double, 4> r;
  Vector<double, 1> xi;
  const auto w = t.start(Vector<double, 4>::Zero(), rng);
  replay.fill_normal(r);
  replay.fill_normal(xi);
  CHECK(w.momentum() == r);
  CHECK(w.thermostat()[0] == doctest::Approx(2.0 + xi[0] / 2.0).epsilon(1e-15));
  CHECK(t.start(Vector<double, 4>::Zero()).thermostat()[0] == 2.0);  // control: ξ = A
}
