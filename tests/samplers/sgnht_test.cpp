// SPDX-License-Identifier: MIT
// Stationarity of SGNHT (issue 2 item 5 (f)): θ-marginal on N(0,1), N(0, I₂) and the correlated
// Gaussian, the thermostat's law, unknown gradient noise absorbed, and the MATH.md §1.4 row 5 and
// row 11 thermostat errors as user-declared recipes (negative controls).

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "sgmcmc/host/rng.hpp"
#include "sgmcmc/sgmcmc.hpp"
#include "stationarity.hpp"

// Oracles and tolerances.
// SGNHT (kick–drift r, θ, ξ; MATH.md §2.2) is not linear, so its discrete law has no closed
// form. Three facts are used:
// 1. Exact for every h: stationarity of ξ' = ξ + h(r'ᵀr'/d − 1) gives E[r'ᵀr'/d] = 1 (r' the
//    recorded momentum). Checked with no allowance.
// 2. First order, on a Gaussian target N(0, Σ): with ξ frozen at c, kick–drift with friction c
//    and noise 2hA is MATH.md §1.3's chain at temperature T = A/c, Var r = T(1 + ch/2 + O(h²)) and
//    Var θ = TΣ(1 + O(h²)) in every eigen-direction. Fact 1 forces T(1 + ch/2) = 1 + O(h²), so
//    Cov θ = (1 − Ah/2)Σ + O(h²). Measured in 5·10⁷-step double runs (A = 1): d = 1, h = 0.02:
//    Var θ 0.9904 (oracle 0.9900); d = 2, h = 0.05: 0.9757 (0.975); correlated Σ, h = 0.02:
//    0.9898 and 0.8910 (0.99 and 0.891): residuals ≤ 0.0007, inside their own MC error
//    (0.001–0.002); at h = 0.1, d = 1 (4·10⁶ steps) the residual is 0.008 = 0.8h². Allowance 2h².
// 3. Continuous law ξ ~ N(A, 1/d) (MATH.md §2.1, H-term (d/2)(ξ − A)²). Measured biases (same
//    runs): E ξ − A = 0.0015, 0.0155, 0.0056 (≤ 0.62·Ah/2), Var ξ − 1/d = 0.0035, 0.0054,
//    0.0022 (≤ 0.44·h/(2d)); allowances Ah/2 and h/(2d).
// Standard errors: Geyer's IACT estimate on the recorded series (every 5th step; SGNHT's series
// have τ ≈ 25–140 steps at these h, so thinning by 5 loses little); tolerance kZ·SE + allowance.
// Negative controls are checked against the correct sampler's tolerances.

namespace {

using namespace sgmcmc;
using namespace sgmcmc::test;

constexpr std::int64_t kThin = 5;
constexpr std::int64_t kBurn = 20000;

/// Recorded SGNHT-like chain: θ coordinates, r'ᵀr'/d and ξ, every kThin steps.
template <int D>
struct Recorded {
  std::vector<double> theta[D];
  std::vector<double> rr;
  std::vector<double> xi;
  bool ok = false;
};

template <int D, class Sampler, class Model>
Recorded<D> record(const Sampler& s, const Model& m, std::uint64_t seed, std::int64_t steps,
                   double xi0) {
  using State = typename Sampler::StateType;
  host::Rng rng(seed);
  State z;
  z.thermostat()[0] = static_cast<typename State::Scalar>(xi0);
  Recorded<D> rec;
  if (!burn_in(s, z, m, rng, kBurn)) return rec;
  rec.ok = run_chain(s, z, m, rng, steps, kThin, [&](const State& w) {
    for (int i = 0; i < D; ++i) rec.theta[i].push_back(static_cast<double>(w.position()[i]));
    rec.rr.push_back(static_cast<double>(w.momentum().squaredNorm()) / D);
    rec.xi.push_back(static_cast<double>(w.thermostat()[0]));
  });
  return rec;
}

/// Tolerances of one SGNHT experiment, fixed from the correct sampler's chain.
template <int D>
struct Tolerances {
  double cov[D][D];  ///< on E θ_iθ_j
  double rr;         ///< on E r'ᵀr'/d
  double xi_mean;    ///< on E ξ
  double xi_var;     ///< on Var ξ
};

template <int D>
Tolerances<D> tolerances(const Recorded<D>& rec, double h, double a) {
  Tolerances<D> t{};
  for (int i = 0; i < D; ++i) {
    for (int j = 0; j < D; ++j) {
      t.cov[i][j] =
          kZ * estimate(centred_product(rec.theta[i], 0.0, rec.theta[j], 0.0)).se + 2 * h * h;
    }
  }
  t.rr = kZ * estimate(rec.rr).se;  // exact identity: no allowance
  t.xi_mean = kZ * estimate(rec.xi).se + a * h / 2;
  const double m = mean_of(rec.xi);
  t.xi_var = kZ * estimate(centred_product(rec.xi, m, rec.xi, m)).se + h / (2.0 * D);
  return t;
}

/// θ-marginal: E θ_iθ_j = (1 − Ah/2) Σ_ij for every entry (fact 2).
template <int D>
bool theta_ok(const std::string& who, const Recorded<D>& rec,
              const Eigen::Matrix<double, D, D>& sigma, double h, double a,
              const Tolerances<D>& tol) {
  if (!rec.ok) {
    log_line("%s: a step failed", who.c_str());
    return false;
  }
  bool all = true;
  for (int i = 0; i < D; ++i) {
    for (int j = i; j < D; ++j) {
      all = within(who + " E θ" + std::to_string(i) + "θ" + std::to_string(j),
                   mean_of(centred_product(rec.theta[i], 0.0, rec.theta[j], 0.0)),
                   (1 - a * h / 2) * sigma(i, j), tol.cov[i][j]) &&
            all;
    }
  }
  return all;
}

/// E r'ᵀr'/d = 1 (fact 1).
template <int D>
bool momentum_ok(const std::string& who, const Recorded<D>& rec, const Tolerances<D>& tol) {
  return rec.ok && within(who + " E r'ᵀr'/d", mean_of(rec.rr), 1.0, tol.rr);
}

/// E ξ = xi_mean and Var ξ = 1/d (fact 3).
template <int D>
bool thermostat_ok(const std::string& who, const Recorded<D>& rec, double xi_mean,
                   const Tolerances<D>& tol) {
  if (!rec.ok) return false;
  const double m = mean_of(rec.xi);
  const bool mean = within(who + " E ξ", m, xi_mean, tol.xi_mean);
  const bool var =
      within(who + " Var ξ", mean_of(centred_product(rec.xi, m, rec.xi, m)), 1.0 / D, tol.xi_var);
  return mean && var;
}

template <class Sampler>
Sampler make_sgnht(double h, double a) {
  typename Sampler::Params p;
  p.step_size = static_cast<decltype(p.step_size)>(h);
  p.diffusion = static_cast<decltype(p.diffusion)>(a);
  return Sampler(p);
}

// ---- MATH.md §1.4 row 5: the recipe paper's H-term (1/(2d))(ξ − A)² with its D and Q.
// Declared as a user recipe: SGNHT's layout, D and Q (column r/d), but QuadraticEnergy weight 1/d
// instead of d. By Theorem 1 it is a valid sampler of exp(−H_paper): θ and r keep their law, but
// ξ ~ N(A, d), not N(A, 1/d), and the friction becomes (A + (ξ − A)/d²) r instead of ξ r, i.e. it
// is not SGNHT. The paper's claim that SGNHT preserves exp(−H_paper) is the error (d = 2
// residual (3/4)(A − ξ)(r₁² + r₂² − 2)); a d = 1 test cannot see it (identical weights).
template <class S, int D>
SGNHTRecipe<S, D> row5_recipe(double h, double a) {
  using E = Energy<GaussianKinetic<S>, QuadraticEnergy<S>>;
  return SGNHTRecipe<S, D>(E{{GaussianKinetic<S>{S(1)}, QuadraticEnergy<S>{S(1.0 / D), S(a)}}},
                           Diffusion<Zero, Scaled<S>, Zero>{{Zero{}, Scaled<S>{S(a)}, Zero{}}}, {},
                           S(h));
}

// ---- MATH.md §1.4 row 11: the SGMG slides' SGNHT, dξ = (pᵀp − 1) dt with friction ξ p.
// As a recipe: H-term ½(ξ − A)² (weight 1), Q column r (not r/d), whose true divergence
// Σ_k ∂r_k/∂r_k = d gives Γ_ξ = −d; the slides' rule corresponds to Γ_ξ = −1, supplied here as an
// analytic GammaFn (the engine subtracts cols()). At d = 2 the thermostat then drives
// E rᵀr → 1 instead of d: (θ, r) run at temperature 1/d, Var θ ≈ 1/2.
template <int D>
struct MomentumColumn {
  template <class Z>
  auto operator()(const Z& z) const noexcept {
    return z.momentum();
  }
};
template <class S, int D>
struct SlidesGamma {
  template <class Z>
  Vector<S, D> rows(const Z&) const noexcept {
    return Vector<S, D>::Zero();
  }
  template <class Z>
  Vector<S, 1> cols(const Z&) const noexcept {
    return Vector<S, 1>::Ones();
  }
};
template <class S, int D>
using Row11Recipe =
    Recipe<S, Layout<D, D, 1>, Energy<GaussianKinetic<S>, QuadraticEnergy<S>>,
           Diffusion<Zero, Scaled<S>, Zero>,
           Curl<SkewPair<Momentum, Position, Identity>,
                SkewPair<Momentum, Thermostat,
                         StateDependent<DenseShape, MomentumColumn<D>, true, SlidesGamma<S, D>>>>,
           Sweep<Momentum, Position, Thermostat>>;

template <class S, int D>
Row11Recipe<S, D> row11_recipe(double h, double a) {
  using E = Energy<GaussianKinetic<S>, QuadraticEnergy<S>>;
  return Row11Recipe<S, D>(E{{GaussianKinetic<S>{S(1)}, QuadraticEnergy<S>{S(1), S(a)}}},
                           Diffusion<Zero, Scaled<S>, Zero>{{Zero{}, Scaled<S>{S(a)}, Zero{}}}, {},
                           S(h));
}

template <int D>
Eigen::Matrix<double, D, D> identity() {
  return Eigen::Matrix<double, D, D>::Identity();
}

}  // namespace

TEST_CASE_TEMPLATE("(f) SGNHT on N(0,1): θ-marginal, E r² = 1 exactly, ξ ~ N(A, 1)", S, float,
                   double) {
  // h = 0.02, A = 1, 4·10⁶ steps. SE(Var θ) ≈ 0.007 (τ_θ² ≈ 95 steps), SE(E r²) ≈ 0.0035,
  // SE(E ξ) ≈ 0.006 (τ ≈ 140 steps).
  const double h = 0.02;
  const double a = 1.0;
  const auto sampler = make_sgnht<SGNHT<S, 1>>(h, a);
  const Recorded<1> rec = record<1>(sampler, StandardNormal<S, 1>{}, 701, 4000000, a);
  REQUIRE(rec.ok);
  const Tolerances<1> tol = tolerances(rec, h, a);
  CHECK(within("SGNHT E θ", mean_of(rec.theta[0]), 0.0, kZ * estimate(rec.theta[0]).se));
  CHECK(theta_ok<1>("SGNHT", rec, identity<1>(), h, a, tol));
  CHECK(momentum_ok<1>("SGNHT", rec, tol));
  CHECK(thermostat_ok<1>("SGNHT", rec, a, tol));
  log_line("SGNHT Var θ − 1 = %.4f; first-order bias −Ah/2 = %.4f",
           mean_of(centred_product(rec.theta[0], 0.0, rec.theta[0], 0.0)) - 1.0, -a * h / 2);
}

TEST_CASE_TEMPLATE("(f) SGNHT absorbs unknown gradient noise: θ stays right, E ξ moves to A + hV/2",
                   S, float, double) {
  // Gradient noise N(0, V), V = 20, not declared (V̂ = 0): the extra momentum diffusion is
  // B = hV/2 = 0.2 and the dynamics is SGNHT with A → A + B (MATH.md §2.2): E ξ → 1.2.
  const double h = 0.02;
  const double a = 1.0;
  const double v_noise = 20.0;
  const std::int64_t steps = 4000000;
  const auto sampler = make_sgnht<SGNHT<S, 1>>(h, a);
  const NoisyGradient<StandardNormal<S, 1>, S, 1> noisy({}, S(v_noise), 7021);
  const Recorded<1> rec = record<1>(sampler, noisy, 702, steps, a);
  REQUIRE(rec.ok);
  const Tolerances<1> tol = tolerances(rec, h, a + h * v_noise / 2);
  CHECK(theta_ok<1>("SGNHT, V = 20 undeclared", rec, identity<1>(), h, a + h * v_noise / 2, tol));
  CHECK(momentum_ok<1>("SGNHT, V = 20 undeclared", rec, tol));
  CHECK(within("SGNHT, V = 20 undeclared: E ξ vs A + hV/2", mean_of(rec.xi), a + h * v_noise / 2,
               tol.xi_mean));
  CHECK_FALSE(within("SGNHT, V = 20 undeclared: E ξ vs A", mean_of(rec.xi), a, tol.xi_mean));
  // Negative control: kick-drift SGHMC with friction C = A on the same undeclared noise has no
  // thermostat to absorb it: Var θ ≈ 1 + hV/(2C) = 1.2 fails the same θ check.
  typename SGHMC<S, 1>::Params p;
  p.step_size = S(h);
  p.friction = S(a);
  const SGHMC<S, 1> sghmc(p);
  const NoisyGradient<StandardNormal<S, 1>, S, 1> noisy2({}, S(v_noise), 7022);
  host::Rng rng(703);
  auto z = sghmc.start(Vector<S, 1>::Zero());
  Recorded<1> hot;
  hot.ok = burn_in(sghmc, z, noisy2, rng, kBurn) &&
           run_chain(sghmc, z, noisy2, rng, steps, kThin,
                     [&](const auto& w) { hot.theta[0].push_back(double(w.position()[0])); });
  CHECK_FALSE(
      theta_ok<1>("SGHMC, V = 20 undeclared", hot, identity<1>(), h, a + h * v_noise / 2, tol));
}

TEST_CASE_TEMPLATE(
    "(f) d = 2 thermostat: SGNHT has ξ ~ N(A, 1/d); the §1.4 row 5 and row 11 "
    "variants do not",
    S, float, double) {
  // h = 0.05, A = 1, 2·10⁶ steps, N(0, I₂). SE(Var θ_i) ≈ 0.006, SE(Var ξ) ≈ 0.003.
  const double h = 0.05;
  const double a = 1.0;
  const std::int64_t steps = 2000000;
  const auto sampler = make_sgnht<SGNHT<S, 2>>(h, a);
  const Recorded<2> rec = record<2>(sampler, StandardNormal<S, 2>{}, 711, steps, a);
  REQUIRE(rec.ok);
  const Tolerances<2> tol = tolerances(rec, h, a);
  CHECK(theta_ok<2>("SGNHT d=2", rec, identity<2>(), h, a, tol));
  CHECK(momentum_ok<2>("SGNHT d=2", rec, tol));
  CHECK(thermostat_ok<2>("SGNHT d=2", rec, a, tol));

  // Row 5 (weight 1/d): still samples θ and r correctly (a valid recipe for another H) — said
  // and checked — but its ξ has variance d = 2, which the thermostat check catches.
  const Recorded<2> r5 = record<2>(row5_recipe<S, 2>(h, a), StandardNormal<S, 2>{}, 712, steps, a);
  REQUIRE(r5.ok);
  CHECK(theta_ok<2>("row 5 variant", r5, identity<2>(), h, a, tol));
  CHECK(momentum_ok<2>("row 5 variant", r5, tol));
  CHECK_FALSE(thermostat_ok<2>("row 5 variant", r5, a, tol));

  // Row 11 (slides, Γ_ξ = −1): wrong θ-marginal (Var θ ≈ 1/2) and E rᵀr/d ≈ 1/2.
  const Recorded<2> r11 =
      record<2>(row11_recipe<S, 2>(h, a), StandardNormal<S, 2>{}, 713, steps, a);
  REQUIRE(r11.ok);
  CHECK_FALSE(theta_ok<2>("row 11 variant", r11, identity<2>(), h, a, tol));
  CHECK_FALSE(momentum_ok<2>("row 11 variant", r11, tol));
}

TEST_CASE_TEMPLATE("(f) SGNHT on the correlated Gaussian, with and without undeclared noise", S,
                   float, double) {
  // h = 0.02, A = 1, 2·10⁶ steps: SE(cov) ≈ 0.01 (τ ≈ 130 steps).
  const double h = 0.02;
  const double a = 1.0;
  const double v_noise = 5.0;  // undeclared: E ξ → A + hV/2 = 1.05, θ unchanged
  const std::int64_t steps = 2000000;
  const CorrelatedGaussian2<S> target;
  const Eigen::Matrix2d sigma = target.covariance();
  const auto sampler = make_sgnht<SGNHT<S, 2>>(h, a);
  const Recorded<2> rec = record<2>(sampler, target, 721, steps, a);
  REQUIRE(rec.ok);
  const Tolerances<2> tol = tolerances(rec, h, a);
  for (int i = 0; i < 2; ++i) {
    CHECK(within("SGNHT correlated E θ" + std::to_string(i), mean_of(rec.theta[i]), 0.0,
                 kZ * estimate(rec.theta[i]).se));
  }
  CHECK(theta_ok<2>("SGNHT correlated", rec, sigma, h, a, tol));
  CHECK(momentum_ok<2>("SGNHT correlated", rec, tol));
  CHECK(thermostat_ok<2>("SGNHT correlated", rec, a, tol));

  const NoisyGradient<CorrelatedGaussian2<S>, S, 2> noisy(target, S(v_noise), 7221);
  const Recorded<2> nz = record<2>(sampler, noisy, 722, steps, a);
  CHECK(theta_ok<2>("SGNHT correlated, V = 5 undeclared", nz, sigma, h, a + h * v_noise / 2, tol));
  CHECK(within("SGNHT correlated, V = 5 undeclared: E ξ vs A + hV/2", mean_of(nz.xi),
               a + h * v_noise / 2, tol.xi_mean));

  // Negative control: the row 11 thermostat on the same target.
  const Recorded<2> r11 = record<2>(row11_recipe<S, 2>(h, a), target, 723, steps, a);
  CHECK_FALSE(theta_ok<2>("row 11 variant, correlated", r11, sigma, h, a, tol));
}

TEST_CASE_TEMPLATE("SGNHT::make_recipe<G>: a variant's Γ is the only difference from the sampler",
                   S, float, double) {
  // The statistical negative controls step recipes built with make_recipe<G> instead of the
  // sampler: with SGNHT's own Γ (analytic, by hand, or by AD) that recipe, stepped on the
  // sampler's State, must be the sampler bit for bit; the flipped Γ must not.
  constexpr int D = 3;
  const auto sampler = make_sgnht<SGNHT<S, D>>(0.05, 1.0);
  const auto p = sampler.params();
  const auto own = SGNHT<S, D>::template make_recipe<>(p);
  const auto hand = SGNHT<S, D>::template make_recipe<SgnhtHandGamma<S, D, 1>>(p);
  const auto ad = SGNHT<S, D>::template make_recipe<AutoGamma>(p);
  const auto flipped = SGNHT<S, D>::template make_recipe<SgnhtHandGamma<S, D, -1>>(p);
  REQUIRE(own.status());
  REQUIRE(flipped.status());
  auto chain = [&](const auto& stepper) {
    host::Rng rng(731);
    auto z = sampler.start(Vector<S, D>(S(0.5), S(-0.25), S(1)));
    bool ok = true;
    for (int i = 0; i < 200; ++i)
      ok = ok && static_cast<bool>(stepper.step(z, StandardNormal<S, D>{}, rng));
    CHECK(ok);
    return z;
  };
  const auto reference = chain(sampler);
  CHECK(chain(own) == reference);
  CHECK(chain(hand) == reference);
  CHECK(chain(ad) == reference);
  CHECK_FALSE(chain(flipped) == reference);

  // zero_rows (core/recipe.hpp, detail::kGammaPartZero): rows declared zero are left out of the
  // pass, so a Γ whose rows() is 1/2 but declared zero steps as SGNHT; undeclared, the same Γ
  // adds T/2 to every momentum coordinate's drift and must not.
  const auto declared = SGNHT<S, D>::template make_recipe<SgnhtRowsGamma<S, D, true>>(p);
  const auto undeclared = SGNHT<S, D>::template make_recipe<SgnhtRowsGamma<S, D, false>>(p);
  CHECK(chain(declared) == reference);
  CHECK_FALSE(chain(undeclared) == reference);
}
