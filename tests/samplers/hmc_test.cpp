// SPDX-License-Identifier: MIT
// HMC's transition against the engine, bit for bit. Where the step runs wide loads (x86) a small
// state's trajectory runs in local vectors (HMC's local_transition: blocks up to 256 bytes in a
// portable build, 2 KiB in a build with AVX), elsewhere in the engine's passes
// (Recipe::integrate, which HMC::leapfrog runs everywhere): the transition must be the refresh,
// leapfrog(), the Metropolis test and the commit, exactly, on either path. The cases cover both
// paths in either build. Also: detail::leapfrog (NUTS's leaves on x86) against the
// engine's step, a divergent trajectory is a rejection that keeps θ, and
// detail::all_finite_packets.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "sgmcmc/host/rng.hpp"
#include "sgmcmc/sgmcmc.hpp"
#include "test_models.hpp"

namespace {

using namespace sgmcmc;

template <class Scalar, int Dim>
struct Case {
  using S = Scalar;
  static constexpr int dim = Dim;
};

template <class A, class B>
bool same_values(const A& a, const B& b) {
  return a.size() == b.size() &&
         std::memcmp(a.data(), b.data(), sizeof(typename A::Scalar) * std::size_t(a.size())) == 0;
}

/// One transition by hand from z with the momentum √m ζ: leapfrog() (the engine's trajectory),
/// then ΔE, min(1, e^-ΔE) and the test u < that, as HMC documents them (a failed trajectory or a
/// non-finite ΔE: divergent, rejected).
template <class Sampler>
struct ByHand {
  typename Sampler::State end;
  HMCInfo<typename Sampler::Scalar> info;
};

template <class Sampler, class Model>
ByHand<Sampler> by_hand(const Sampler& s, const typename Sampler::State& z, const Model& m,
                        const typename Sampler::Scalar* zeta, typename Sampler::Scalar u) {
  using Scalar = typename Sampler::Scalar;
  constexpr int Dim = Sampler::dim;
  ByHand<Sampler> out{z, {}};
  const Scalar sd = std::sqrt(s.params().mass);
  for (int i = 0; i < Dim; ++i) out.end.momentum()[i] = sd * zeta[i];
  const GaussianKinetic<Scalar> kinetic{s.params().mass};
  const Scalar h0 = m.potential(out.end.position()) + kinetic.energy(out.end.momentum());
  typename Sampler::State start = out.end;
  if (!s.leapfrog(out.end, m)) {
    out.info.divergent = true;
    out.end = start;
    return out;
  }
  out.info.energy_error = m.potential(out.end.position()) + kinetic.energy(out.end.momentum()) - h0;
  const Scalar e = out.info.energy_error;
  if (!std::isfinite(e)) {  // a divergence too: rejected, accept_prob 0
    out.info.divergent = true;
    out.end = start;
    return out;
  }
  out.info.accept_prob = detail::exp_nonpositive(e > Scalar(0) ? -e : Scalar(0));
  out.info.accepted = u < out.info.accept_prob;
  if (!out.info.accepted) out.end = start;
  return out;
}

#define HMC_CASES                                                                         \
  Case<float, 10>, Case<double, 3>, Case<float, 37>, Case<double, 32>, Case<double, 100>, \
      Case<float, 512>, Case<double, 300>

TEST_CASE_TEMPLATE(
    "HMC's transition is the refresh, leapfrog() and the Metropolis test, bit for "
    "bit",
    C, HMC_CASES) {
  using Scalar = typename C::S;
  constexpr int Dim = C::dim;
  using S = HMC<Scalar, Dim>;
  sgmcmc_test::QuarticModel<Scalar, Dim> model;
  host::Rng rng(31);
  int accepted = 0, rejected = 0;
  // m = 1 (the local path's loop without the division) and m = 2.5; h large enough at the end to
  // see rejections.
  for (Scalar mass : {Scalar(1), Scalar(2.5)}) {
    for (Scalar h : {Scalar(0.05), Scalar(0.3), Scalar(0.6)}) {
      typename S::Params p;
      p.step_size = h / std::sqrt(Scalar(Dim) / Scalar(10));
      p.steps = 7;
      p.mass = mass;
      const S s(p);
      REQUIRE(s.status());
      static typename S::State z;
      Vector<Scalar, Dim> theta0;
      for (int i = 0; i < Dim; ++i) theta0[i] = Scalar(0.4) * Scalar((i * 7) % 11) / Scalar(11);
      REQUIRE(s.start(z, theta0));
      static Scalar zeta[Dim];
      for (int t = 0; t < 20; ++t) {
        fill_normal(rng, zeta, Dim);
        const Scalar u = uniform_open01<Scalar>(rng);
        const auto want = by_hand(s, z, model, zeta, u);
        REQUIRE(s.step_with_noise(z, model, zeta, u));
        const auto got = z.extra();
        CHECK(got.accepted == want.info.accepted);
        CHECK(got.divergent == want.info.divergent);
        CHECK(detail::same_bits_of(got.energy_error, want.info.energy_error));
        CHECK(detail::same_bits_of(got.accept_prob, want.info.accept_prob));
        CHECK(same_values(z.position(), want.end.position()));
        CHECK(same_values(z.momentum(), want.end.momentum()));
        (got.accepted ? accepted : rejected) += 1;
      }
    }
  }
  MESSAGE("accepted " << accepted << ", rejected " << rejected);
  CHECK(accepted > 0);
  CHECK(rejected > 0);
}

/// A model counting its gradient evaluations, its U (and ∇U) scaled by `scale`.
template <class Base>
struct Counting {
  long* gradients;
  double scale = 1;
  template <class Theta, class Grad>
  void gradient(const Theta& th, Grad& g) const {
    ++*gradients;
    Base{}.gradient(th, g);
    g *= typename Grad::Scalar(scale);
  }
  template <class Theta>
  typename Theta::Scalar potential(const Theta& th) const {
    return typename Theta::Scalar(scale) * Base{}.potential(th);
  }
};

/// StartGradient::Keep against the plain transition, on either path: the same chain bit for bit
/// (accepted, rejected and divergent transitions), L gradient evaluations per transition but
/// where the position is not the one the last transition returned.
template <class Scalar, int Dim, class Base>
void check_reuse(Scalar h, Scalar theta_scale, int n, bool want_divergent) {
  using S = HMC<Scalar, Dim>;
  using K = HMC<Scalar, Dim, StartGradient::Keep>;
  typename S::Params p;
  p.step_size = h;
  p.steps = 7;
  const S plain(p);
  const K reusing(p);
  long g_plain = 0, g_reuse = 0;
  const Counting<Base> m_plain{&g_plain}, m_reuse{&g_reuse};
  host::Rng r_plain(17), r_reuse(17);
  Vector<Scalar, Dim> theta0;
  for (int i = 0; i < Dim; ++i) theta0[i] = theta_scale * Scalar((i * 7) % 11) / Scalar(11);
  static typename S::State a;
  static typename K::State b;
  REQUIRE(plain.start(a, theta0));
  REQUIRE(reusing.start(b, theta0));
  int accepted = 0, rejected = 0, divergent = 0, reused = 0, mismatches = 0;
  for (int t = 0; t < n; ++t) {
    if (t == n / 2) {  // the user moves the position: the kept gradient is not taken there
      a.position()[0] = Scalar(0.125);
      b.position()[0] = Scalar(0.125);
    }
    REQUIRE(plain.step(a, m_plain, r_plain));
    REQUIRE(reusing.step(b, m_reuse, r_reuse));
    const auto ia = a.extra(), ib = b.extra();
    CHECK_FALSE(ia.reused_gradient);
    CHECK(ib.reused_gradient == (t != 0 && t != n / 2));
    reused += ib.reused_gradient;
    const bool same = ia.accepted == ib.accepted && ia.divergent == ib.divergent &&
                      detail::same_bits_of(ia.energy_error, ib.energy_error) &&
                      same_values(a.position(), b.position()) &&
                      same_values(a.momentum(), b.momentum());
    mismatches += !same;
    accepted += ia.accepted;
    rejected += !ia.accepted;
    divergent += ia.divergent;
  }
  CHECK(mismatches == 0);
  CHECK(g_plain == long(n) * (p.steps + 1));
  CHECK(g_reuse == long(n) * p.steps + 2);
  CHECK(reused == n - 2);
  MESSAGE("d = " << Dim << ": accepted " << accepted << ", rejected " << rejected << ", divergent "
                 << divergent);
  CHECK(accepted > 0);
  CHECK(rejected > 0);
  if (want_divergent) CHECK(divergent > 0);

  // start() at exactly the current position: a new state, so the first step evaluates ∇U.
  const Vector<Scalar, Dim> here = b.position();
  REQUIRE(reusing.start(b, here));
  REQUIRE(reusing.step(b, m_reuse, r_reuse));
  CHECK_FALSE(b.extra().reused_gradient);

  // Negative control: the model changes between steps, against the contract. The reusing chain
  // starts that transition from the old model's gradient, and the chains part: the comparison
  // above sees which gradient a transition starts from.
  REQUIRE(plain.start(a, theta0));
  REQUIRE(reusing.start(b, theta0));
  host::Rng c1(3), c2(3);
  Counting<Base> mc{&g_plain}, mr{&g_reuse};
  for (int t = 0; t < 3; ++t) {
    REQUIRE(plain.step(a, mc, c1));
    REQUIRE(reusing.step(b, mr, c2));
  }
  mc.scale = mr.scale = 2;
  REQUIRE(plain.step(a, mc, c1));
  REQUIRE(reusing.step(b, mr, c2));
  CHECK(b.extra().reused_gradient);
  // The chains part at this transition or, where both trajectories diverged there (the same
  // energy error, the position kept), at a later one, which starts from the stale gradient again.
  bool parted = false;
  for (int t = 0; t < 8 && !parted; ++t) {
    if (t > 0) {
      REQUIRE(plain.step(a, mc, c1));
      REQUIRE(reusing.step(b, mr, c2));
    }
    parted = !detail::same_bits_of(a.extra().energy_error, b.extra().energy_error) ||
             !same_values(a.position(), b.position());
  }
  CHECK(parted);
}

TEST_CASE_TEMPLATE("HMC: StartGradient::Keep gives the same chain with L gradients per transition",
                   C, HMC_CASES) {
  using Scalar = typename C::S;
  constexpr int Dim = C::dim;
  // h large enough for rejections (d = 10: about a third).
  check_reuse<Scalar, Dim, sgmcmc_test::QuarticModel<Scalar, Dim>>(
      Scalar(0.5) / std::sqrt(Scalar(Dim) / Scalar(10)), Scalar(0.4), 200, false);
}

/// U = θᵀθ/2 whose gradient overflows past |θ_0| > 1: a trajectory that leaves the unit box
/// diverges (r becomes infinite, then θ).
template <class Scalar, int Dim>
struct Cliff {
  template <class Theta, class Grad>
  void gradient(const Theta& th, Grad& g) const {
    g = th;
    if (std::abs(th[0]) > Scalar(1)) g[0] = std::numeric_limits<Scalar>::max() * th[0];
  }
  template <class Theta>
  Scalar potential(const Theta& th) const {
    return th.squaredNorm() / Scalar(2);
  }
};

TEST_CASE_TEMPLATE("a divergent trajectory is a rejection that keeps θ and the refreshed r", C,
                   HMC_CASES) {
  using Scalar = typename C::S;
  constexpr int Dim = C::dim;
  using S = HMC<Scalar, Dim>;
  typename S::Params p;
  p.step_size = Scalar(0.5);
  p.steps = 10;
  const S s(p);
  static typename S::State z;
  REQUIRE(s.start(z, Vector<Scalar, Dim>::Constant(Scalar(0.5))));
  const Vector<Scalar, Dim> theta = z.position();
  static Scalar zeta[Dim];
  for (int i = 0; i < Dim; ++i) zeta[i] = Scalar(0.1);
  zeta[0] = Scalar(8);  // carries θ_0 past 1 on the first drift
  REQUIRE(s.step_with_noise(z, Cliff<Scalar, Dim>{}, zeta, Scalar(0.5)));
  const auto info = z.extra();
  CHECK(info.divergent);
  CHECK_FALSE(info.accepted);
  CHECK(same_values(z.position(), theta));
  for (int i = 0; i < Dim; ++i) CHECK(detail::same_bits_of(z.momentum()[i], zeta[i]));
  // The control: a small momentum stays in the box and is accepted (no divergence).
  zeta[0] = Scalar(0.1);
  REQUIRE(s.step_with_noise(z, Cliff<Scalar, Dim>{}, zeta, Scalar(0.5)));
  CHECK_FALSE(z.extra().divergent);
}

/// U = θᵀθ/2 whose gradient is `bad` in its last coordinate once θ_0 > 1 (a model failing inside
/// a trajectory, not at its start).
template <class Scalar, int Dim>
struct BadGradientPastOne {
  Scalar bad;
  template <class Theta, class Grad>
  void gradient(const Theta& th, Grad& g) const {
    g = th;
    if (th[0] > Scalar(1)) g[Dim - 1] = bad;
  }
  template <class Theta>
  Scalar potential(const Theta& th) const {
    return th.squaredNorm() / Scalar(2);
  }
};

TEST_CASE_TEMPLATE(
    "a non-finite gradient inside the trajectory is a divergence; leapfrog() names it", C,
    HMC_CASES) {
  // HMC's transition checks once, at the end of the trajectory (PassChecks::None): a NaN or ±inf
  // gradient must make the end non-finite and the transition a rejection that keeps θ, with the
  // Metropolis test (whose energy error would be NaN too) and without it (where only that check
  // stands between the bad values and the chain). The public leapfrog() checks every gradient
  // and returns NonFiniteGradient. Control: a momentum that keeps θ_0 below 1 never meets the bad
  // gradient and is accepted.
  using Scalar = typename C::S;
  constexpr int Dim = C::dim;
  using S = HMC<Scalar, Dim>;
  using L = std::numeric_limits<Scalar>;
  static Scalar zeta[Dim];
  for (bool metropolis : {true, false}) {
    for (Scalar bad : {L::quiet_NaN(), L::infinity(), -L::infinity()}) {
      typename S::Params p;
      p.step_size = Scalar(0.05);
      p.steps = 10;
      p.metropolis = metropolis;
      const S s(p);
      const BadGradientPastOne<Scalar, Dim> model{bad};
      static typename S::State z;
      REQUIRE(s.start(z, Vector<Scalar, Dim>::Constant(Scalar(0.5))));
      const Vector<Scalar, Dim> theta = z.position();
      for (int i = 0; i < Dim; ++i) zeta[i] = Scalar(0.1);
      zeta[0] = Scalar(20);  // θ_0 passes 1 within the first few leapfrog steps
      REQUIRE(s.step_with_noise(z, model, zeta, Scalar(0.5)));
      CHECK(z.extra().divergent);
      CHECK_FALSE(z.extra().accepted);
      CHECK(same_values(z.position(), theta));
      CHECK(z.all_finite());
      static typename S::State w;
      REQUIRE(s.start(w, Vector<Scalar, Dim>::Constant(Scalar(0.5))));
      for (int i = 0; i < Dim; ++i) w.momentum()[i] = zeta[i];
      const Vector<Scalar, Dim> w_theta = w.position();
      CHECK(s.leapfrog(w, model) == StatusCode::NonFiniteGradient);
      CHECK(same_values(w.position(), w_theta));
      zeta[0] = Scalar(0.1);
      REQUIRE(s.step_with_noise(z, model, zeta, Scalar(0.5)));
      CHECK_FALSE(z.extra().divergent);
      CHECK(z.extra().accepted);
    }
  }
}

TEST_CASE_TEMPLATE(
    "detail::leapfrog is the engine's leapfrog step (Recipe::integrate_in_place), bit for bit", C,
    HMC_CASES) {
  // What a NUTS leaf runs where the step runs wide loads, against the engine's step for the HMC
  // recipe: θ, r and ∇U after each of 20 steps, forwards and backwards, m = 1 (no
  // multiplication) and m = 2.5. Negative control: the drift as r / m instead of r · (1/m), the
  // same arithmetic but for that rounding, must differ from the engine (m = 2.5).
  using Scalar = typename C::S;
  constexpr int Dim = C::dim;
  using V = Vector<Scalar, Dim>;
  sgmcmc_test::QuarticModel<Scalar, Dim> model;
  host::Rng rng(41);
  bool control_differs = false;
  for (Scalar mass : {Scalar(1), Scalar(2.5)}) {
    for (Scalar direction : {Scalar(1), Scalar(-1)}) {
      typename HMC<Scalar, Dim>::Params p;
      p.step_size = Scalar(0.1) / std::sqrt(Scalar(Dim) / Scalar(10));
      p.steps = 1;
      p.mass = mass;
      const auto recipe = HMC<Scalar, Dim>::make_recipe(p);
      REQUIRE(recipe.status());
      alignas(64) static Scalar theta[Dim], r[Dim], g[Dim];
      alignas(64) static V q, rv, gv, qc, rc, gc;
      for (int i = 0; i < Dim; ++i) theta[i] = Scalar(0.4) * Scalar((i * 7) % 11) / Scalar(11);
      fill_normal(rng, r, Dim);
      detail::model_gradient<Scalar, Dim>(model, theta, g);
      q = ConstVectorMap<Scalar, Dim>(theta);
      rv = ConstVectorMap<Scalar, Dim>(r);
      gv = ConstVectorMap<Scalar, Dim>(g);
      qc = q, rc = rv, gc = gv;
      const Scalar h = direction < Scalar(0) ? -p.step_size : p.step_size;
      const Scalar inv_mass = Scalar(1) / mass;
      for (int t = 0; t < 20; ++t) {
        Scalar* const blocks[2] = {theta, r};
        REQUIRE(recipe.integrate_in_place(blocks, g, model, 1, direction));
        if (mass == Scalar(1)) {
          detail::leapfrog<Dim, true>(q, rv, gv, model, h, inv_mass);
        } else {
          detail::leapfrog<Dim, false>(q, rv, gv, model, h, inv_mass);
        }
        CHECK(same_values(q, ConstVectorMap<Scalar, Dim>(theta)));
        CHECK(same_values(rv, ConstVectorMap<Scalar, Dim>(r)));
        CHECK(same_values(gv, ConstVectorMap<Scalar, Dim>(g)));
        const Scalar half = h * Scalar(1) / Scalar(2);
        rc -= half * gc;
        qc += h * (rc / mass);
        detail::model_gradient<Scalar, Dim>(model, qc.data(), gc.data());
        rc -= half * gc;
        control_differs = control_differs || !same_values(qc, ConstVectorMap<Scalar, Dim>(theta));
        qc = ConstVectorMap<Scalar, Dim>(theta);  // the control restarts from the engine's point
        rc = ConstVectorMap<Scalar, Dim>(r);
        gc = ConstVectorMap<Scalar, Dim>(g);
      }
    }
  }
  CHECK(control_differs);
}

TEST_CASE_TEMPLATE("detail::all_finite_packets sees every non-finite entry", Scalar, float,
                   double) {
  using L = std::numeric_limits<Scalar>;
  Vector<Scalar, 10> a, b;
  for (int i = 0; i < 10; ++i) {
    a[i] = Scalar(i) - Scalar(4.5);
    b[i] = Scalar(1) / Scalar(i + 1);
  }
  a[3] = -Scalar(0);
  a[4] = L::max();
  b[2] = L::denorm_min();
  b[5] = -L::max();
  CHECK(detail::all_finite_packets(a, b));
  CHECK(detail::all_finite_packets(a));
  for (Scalar bad : {L::quiet_NaN(), L::infinity(), -L::infinity()}) {
    for (int i = 0; i < 10; ++i) {
      Vector<Scalar, 10> x = a, y = b;
      x[i] = bad;
      CHECK_FALSE(detail::all_finite_packets(x, b));
      CHECK_FALSE(detail::all_finite_packets(x));
      y[i] = bad;
      CHECK_FALSE(detail::all_finite_packets(a, y));
    }
  }
}

}  // namespace

TEST_CASE_TEMPLATE("HMC: StartGradient::Keep across divergent trajectories", C, Case<double, 3>,
                   Case<double, 300>) {
  using Scalar = typename C::S;
  constexpr int Dim = C::dim;
  check_reuse<Scalar, Dim, Cliff<Scalar, Dim>>(Scalar(0.4), Scalar(0.9), 200, true);
}
