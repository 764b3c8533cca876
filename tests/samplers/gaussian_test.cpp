// SPDX-License-Identifier: MIT
// Stationarity on Gaussian targets (issue 2 item 5 (a), (c), (e), (g)): SGLD, SGHMC, HMC, SGD and
// SGDMomentum on N(0,1) and N(0, [[1,.9],[.9,1]]) against exact discrete stationary laws.

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "sgmcmc/host/rng.hpp"
#include "sgmcmc/sgmcmc.hpp"
#include "stationarity.hpp"

// How the tolerances are derived (applies to every check below unless a comment says otherwise).
// On a Gaussian target SGLD, SGHMC, SGD and SGDMomentum are linear recursions x' = Ax + w
// (MATH.md §1.3, the matrices of shared/math/check_discrete.py, built in targets.hpp). Their exact
// stationary covariance S (S = ASAᵀ + W) is the target, so no step-size bias has to be allowed
// for, and the exact integrated autocorrelation time of every series used is known:
// θ: τ = 1 + 2Σ_k (AᵏS)_ii / S_ii;  θ_iθ_j: τ = 1 + 2Σ_k [C_ii C_jj + C_ij C_ji](k) / (S_iiS_jj +
// S_ij²), C(k) = AᵏS (Isserlis). The standard error of a mean of n recorded values is sqrt(Var f ·
// τ / n) and the tolerance kZ·SE, kZ = 4.5 (stationarity.hpp). HMC is not linear (the Metropolis
// test): its τ is Geyer's initial monotone sequence estimate from the stored chain. Burn-in: 2000
// steps from θ = 0, r = 0 (every chain here forgets its start within ~10 τ ≤ 1000 steps).

namespace {

using namespace sgmcmc;
using namespace sgmcmc::test;

using Mat1 = Eigen::Matrix<double, 1, 1>;
constexpr std::int64_t kBurn = 2000;

Mat1 unit_precision() {
  return Mat1::Identity();
}

/// θ (and r when the state has a momentum block) of a 1-D chain, in double.
struct Recorded1 {
  std::vector<double> theta;
  std::vector<double> r;
  bool ok = false;
  std::vector<double> theta2() const {
    return map_series(theta, [](double x) { return x * x; });
  }
  std::vector<double> r2() const {
    return map_series(r, [](double x) { return x * x; });
  }
};

template <class Sampler, class Model>
Recorded1 record1(const Sampler& s, const Model& m, std::uint64_t seed, std::int64_t n) {
  using State = typename Sampler::StateType;
  host::Rng rng(seed);
  State z;
  Recorded1 rec;
  rec.theta.reserve(static_cast<std::size_t>(n));
  if (!burn_in(s, z, m, rng, kBurn)) return rec;
  rec.ok = run_chain(s, z, m, rng, n, 1, [&](const State& w) {
    rec.theta.push_back(static_cast<double>(w.position()[0]));
    if constexpr (State::blocks > 1) rec.r.push_back(static_cast<double>(w.momentum()[0]));
  });
  return rec;
}

/// θ₀, θ₁ of a 2-D chain, in double.
struct Recorded2 {
  std::vector<double> x[2];
  bool ok = false;
};

template <class Sampler, class Model>
Recorded2 record2(const Sampler& s, const Model& m, std::uint64_t seed, std::int64_t n) {
  using State = typename Sampler::StateType;
  host::Rng rng(seed);
  State z;
  Recorded2 rec;
  if (!burn_in(s, z, m, rng, kBurn)) return rec;
  rec.ok = run_chain(s, z, m, rng, n, 1, [&](const State& w) {
    rec.x[0].push_back(static_cast<double>(w.position()[0]));
    rec.x[1].push_back(static_cast<double>(w.position()[1]));
  });
  return rec;
}

/// Tolerances of the 2-D moment check: means (2) and covariance entries (00, 01, 11).
struct Tol2 {
  double mean[2];
  double cov[3];
};
constexpr int kPairs[3][2] = {{0, 0}, {0, 1}, {1, 1}};

/// Tolerances kZ·SE from the (correct) chain `rec`; tau(i) / tau_product(i, j) give τ (≤ 0:
/// Geyer's estimate from the chain).
template <class TauLin, class TauProd>
Tol2 tolerances2(const Recorded2& rec, TauLin&& tau_lin, TauProd&& tau_prod) {
  Tol2 t{};
  for (int i = 0; i < 2; ++i) t.mean[i] = kZ * estimate(rec.x[i], tau_lin(i)).se;
  for (int k = 0; k < 3; ++k) {
    const int i = kPairs[k][0];
    const int j = kPairs[k][1];
    t.cov[k] = kZ * estimate(centred_product(rec.x[i], 0.0, rec.x[j], 0.0), tau_prod(i, j)).se;
  }
  return t;
}

/// Means 0 and E θ_iθ_j = target(i, j) for all entries, each within its tolerance.
bool moments2_within(const char* who, const Recorded2& rec, const Eigen::Matrix2d& target,
                     const Tol2& tol) {
  if (!rec.ok) return false;
  bool all = true;
  const std::string name(who);
  for (int i = 0; i < 2; ++i) {
    all = within(name + " E θ" + std::to_string(i), mean_of(rec.x[i]), 0.0, tol.mean[i]) && all;
  }
  for (int k = 0; k < 3; ++k) {
    const int i = kPairs[k][0];
    const int j = kPairs[k][1];
    all =
        within(name + " E θ" + std::to_string(i) + "θ" + std::to_string(j),
               mean_of(centred_product(rec.x[i], 0.0, rec.x[j], 0.0)), target(i, j), tol.cov[k]) &&
        all;
  }
  return all;
}

template <class S>
typename SGLD<S, 1>::Params sgld_params(double h) {
  typename SGLD<S, 1>::Params p;
  p.step_size = S(h);
  return p;
}

template <class S>
typename SGHMC<S, 1>::Params sghmc_params(double h, double c, double m = 1.0) {
  typename SGHMC<S, 1>::Params p;
  p.step_size = S(h);
  p.friction = S(c);
  p.mass = S(m);
  return p;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// (a) N(0, 1) for every sampler, at moderate h, against the exact discrete law.

TEST_CASE_TEMPLATE("(a) SGLD on N(0,1): mean 0 and Var θ = 2/(2-h) exactly (MATH.md §1.3)", S,
                   float, double) {
  const double h = 0.1;
  const std::int64_t n = 1000000;
  const auto chain = sgld_chain<1>(unit_precision(), h, 1.0, 0.0, 0.0);
  const double var = chain.stationary()(0, 0);
  CHECK(var == doctest::Approx(2.0 / (2.0 - h)).epsilon(1e-12));
  // τ_θ = (1+ρ)/(1-ρ) = 19, τ_θ² = (1+ρ²)/(1-ρ²) = 9.53 with ρ = 1 - h: SE(mean) = 0.0045,
  // SE(Var) = sqrt(2 Var² τ / n) = 0.0046, tolerances 0.020 and 0.021.
  const Recorded1 rec = record1(SGLD<S, 1>(sgld_params<S>(h)), StandardNormal<S, 1>{}, 101, n);
  REQUIRE(rec.ok);
  const Estimate m = estimate(rec.theta, chain.iact_linear(0));
  const Estimate v = estimate(rec.theta2(), chain.iact_product(0, 0));
  log_line("τ_θ exact %.3f, Geyer %.3f; τ_θ² exact %.3f, Geyer %.3f", m.tau, m.tau_geyer, v.tau,
           v.tau_geyer);
  CHECK(within("SGLD E θ", m.mean, 0.0, kZ * m.se));
  CHECK(within("SGLD Var θ", v.mean, var, kZ * v.se));
  // The check resolves the O(h) bias: against the continuous Var θ = 1 it fails (0.053 > 0.021).
  CHECK_FALSE(within("SGLD Var θ against the continuous 1", v.mean, 1.0, kZ * v.se));
}

TEST_CASE_TEMPLATE(
    "(a) kick-drift SGHMC on N(0,1): Var θ = 2(2-ch)/(4-2ch-h²), Var r = 4/(4-2ch-h²)", S, float,
    double) {
  const double h = 0.1;
  const double c = 1.0;
  const std::int64_t n = 1000000;
  for (double mass : {1.0, 2.0}) {
    CAPTURE(mass);
    const auto chain = sghmc_chain<1>(unit_precision(), h, c, mass, 0.0, 0.0, Order::KickDrift);
    const auto cov = chain.stationary();
    if (mass == 1.0) {  // MATH.md §1.3's closed forms are for M = 1
      CHECK(cov(0, 0) == doctest::Approx(2 * (2 - c * h) / (4 - 2 * c * h - h * h)).epsilon(1e-12));
      CHECK(cov(1, 1) == doctest::Approx(4 / (4 - 2 * c * h - h * h)).epsilon(1e-12));
    }
    // Exact τ_θ² = 19.5, τ_r² = 9.5 (m = 1); 29.5, 19.5 (m = 2): SE(Var θ) = 0.0063 and 0.0077,
    // SE(Var r) = 0.0046 and 0.0128.
    const Recorded1 rec =
        record1(SGHMC<S, 1>(sghmc_params<S>(h, c, mass)), StandardNormal<S, 1>{}, 102, n);
    REQUIRE(rec.ok);
    const Estimate m = estimate(rec.theta, chain.iact_linear(0));
    const Estimate vt = estimate(rec.theta2(), chain.iact_product(0, 0));
    const Estimate vr = estimate(rec.r2(), chain.iact_product(1, 1));
    log_line("m = %g: τ_θ² exact %.3f (Geyer %.3f), τ_r² exact %.3f (Geyer %.3f)", mass, vt.tau,
             vt.tau_geyer, vr.tau, vr.tau_geyer);
    CHECK(within("SGHMC E θ", m.mean, 0.0, kZ * m.se));
    CHECK(within("SGHMC Var θ", vt.mean, cov(0, 0), kZ * vt.se));
    CHECK(within("SGHMC Var r", vr.mean, cov(1, 1), kZ * vr.se));
  }
}

TEST_CASE_TEMPLATE("(a) HMC on N(0,1): mean 0, Var θ = 1 (h = 0.3, L = 5)", S, float, double) {
  typename HMC<S, 1>::Params p;
  p.step_size = S(0.3);
  p.steps = 5;
  const std::int64_t n = 200000;
  // τ from Geyer's estimate on the chain (≈ 1: five leapfrog steps turn the orbit by 1.5 rad).
  const Recorded1 rec = record1(HMC<S, 1>(p), StandardNormal<S, 1>{}, 103, n);
  REQUIRE(rec.ok);
  const Estimate m = estimate(rec.theta);
  const Estimate v = estimate(rec.theta2());
  log_line("HMC τ_θ %.3f, τ_θ² %.3f (Geyer)", m.tau, v.tau);
  CHECK(within("HMC E θ", m.mean, 0.0, kZ * m.se));
  CHECK(within("HMC Var θ", v.mean, 1.0, kZ * v.se));
}

TEST_CASE_TEMPLATE("(a) zero temperature: SGD and SGDMomentum collapse to the mode; SGLD does not",
                   S, float, double) {
  // Without gradient noise the stationary law of SGD is δ₀: θ_n = (1 - h)^n θ₀ exactly in real
  // arithmetic; after 600 steps at h = 0.3 that is 3·0.7^600 ≈ 1e-93. The heavy ball's iteration
  // matrix has spectral radius sqrt(1 - α) = 0.837: 0.837^600 ≈ 1e-46. Both are 0 in float and
  // far below 1e-30 in double.
  typename SGD<S, 1>::Params p;
  p.learning_rate = S(0.3);
  const SGD<S, 1> sgd(p);
  typename SGDMomentum<S, 1>::Params pm;
  pm.learning_rate = S(0.09);
  pm.momentum_decay = S(0.3);
  const SGDMomentum<S, 1> heavy(pm);
  host::Rng rng(104);
  auto z = sgd.start(Vector<S, 1>::Constant(S(3)));
  auto zm = heavy.start(Vector<S, 1>::Constant(S(3)));
  bool ok = true;
  for (int i = 0; i < 600; ++i) {
    ok = ok && sgd.step(z, StandardNormal<S, 1>{}, rng);
    ok = ok && heavy.step(zm, StandardNormal<S, 1>{}, rng);
  }
  REQUIRE(ok);
  CHECK(std::abs(double(z.position()[0])) < 1e-30);
  CHECK(std::abs(double(zm.position()[0])) < 1e-30);
  // The warm sampler with the same step does not collapse: it is a sampler, Var θ = 2/(2-h).
  const Recorded1 warm =
      record1(SGLD<S, 1>(sgld_params<S>(0.3)), StandardNormal<S, 1>{}, 105, 20000);
  REQUIRE(warm.ok);
  CHECK(mean_of(warm.theta2()) > 0.5);
}

// ---------------------------------------------------------------------------------------------
// (e) Exact stationary variances at large h (h-dependence resolved against the MC error).

TEST_CASE_TEMPLATE("(e) SGLD with gradient noise V: corrected 2/(2-h), uncorrected (2+hV)/(2-h)", S,
                   float, double) {
  const double h = 0.4;
  const double v_noise = 4.0;  // 2 - h V̂ = 0.4 ≥ 0: the correction is valid
  const std::int64_t n = 1000000;
  const auto corrected = sgld_chain<1>(unit_precision(), h, 1.0, v_noise, v_noise);
  const auto uncorrected = sgld_chain<1>(unit_precision(), h, 1.0, v_noise, 0.0);
  CHECK(corrected.stationary()(0, 0) == doctest::Approx(2.0 / (2.0 - h)).epsilon(1e-12));
  CHECK(uncorrected.stationary()(0, 0) ==
        doctest::Approx((2.0 + h * v_noise) / (2.0 - h)).epsilon(1e-12));

  SGLD<S, 1> with_vhat(sgld_params<S>(h));
  REQUIRE(with_vhat.set_gradient_noise(S(v_noise)));
  const SGLD<S, 1> without_vhat(sgld_params<S>(h));
  const NoisyGradient<StandardNormal<S, 1>, S, 1> noisy({}, S(v_noise), 2001);
  const Recorded1 good = record1(with_vhat, noisy, 201, n);
  const NoisyGradient<StandardNormal<S, 1>, S, 1> noisy2({}, S(v_noise), 2002);
  const Recorded1 bad = record1(without_vhat, noisy2, 202, n);
  REQUIRE(good.ok);
  REQUIRE(bad.ok);
  // ρ = 1 - h = 0.6: τ_θ² = (1+ρ²)/(1-ρ²) = 2.125. SE(Var) = sqrt(2·1.25²·2.125/n) = 0.0026,
  // tolerance 0.012; the uncorrected chain's excess hV/(2-h) = 1.0 is 86 tolerances away.
  const Estimate vg = estimate(good.theta2(), corrected.iact_product(0, 0));
  const Estimate vb = estimate(bad.theta2(), uncorrected.iact_product(0, 0));
  const double tol = kZ * vg.se;
  CHECK(within("corrected SGLD Var θ vs 2/(2-h)", vg.mean, 2.0 / (2.0 - h), tol));
  CHECK(within("uncorrected SGLD Var θ vs (2+hV)/(2-h)", vb.mean, (2.0 + h * v_noise) / (2.0 - h),
               kZ * vb.se));
  // Negative control: the SGLD formula applied to the uncorrected noisy chain.
  CHECK_FALSE(within("uncorrected SGLD Var θ vs 2/(2-h)", vb.mean, 2.0 / (2.0 - h), tol));
}

TEST_CASE_TEMPLATE("(e) kick-drift SGHMC at h = 0.5 with gradient noise: exact variances", S, float,
                   double) {
  const double h = 0.5;
  const double c = 2.0;
  const double v_noise = 4.0;  // 2c - h V̂ = 2 ≥ 0
  const std::int64_t n = 1000000;
  const auto chain =
      sghmc_chain<1>(unit_precision(), h, c, 1.0, v_noise, v_noise, Order::KickDrift);
  const auto hot = sghmc_chain<1>(unit_precision(), h, c, 1.0, v_noise, 0.0, Order::KickDrift);
  const double var_theta = 2 * (2 - c * h) / (4 - 2 * c * h - h * h);  // 1.1429
  const double var_r = 4 / (4 - 2 * c * h - h * h);                    // 2.2857
  CHECK(chain.stationary()(0, 0) == doctest::Approx(var_theta).epsilon(1e-12));
  CHECK(chain.stationary()(1, 1) == doctest::Approx(var_r).epsilon(1e-12));

  SGHMC<S, 1> corrected(sghmc_params<S>(h, c));
  REQUIRE(corrected.set_gradient_noise(S(v_noise)));
  const SGHMC<S, 1> uncorrected(sghmc_params<S>(h, c));
  const NoisyGradient<StandardNormal<S, 1>, S, 1> noisy({}, S(v_noise), 2003);
  const NoisyGradient<StandardNormal<S, 1>, S, 1> noisy2({}, S(v_noise), 2004);
  const Recorded1 good = record1(corrected, noisy, 203, n);
  const Recorded1 bad = record1(uncorrected, noisy2, 204, n);
  REQUIRE(good.ok);
  REQUIRE(bad.ok);
  // Exact τ_θ² = 3.6, τ_r² = 1.07: SE(Var θ) = 0.0031, SE(Var r) = 0.0033; the uncorrected
  // chain's excess is 0.57 = 42 tolerances.
  const Estimate vt = estimate(good.theta2(), chain.iact_product(0, 0));
  const Estimate vr = estimate(good.r2(), chain.iact_product(1, 1));
  CHECK(within("corrected SGHMC Var θ", vt.mean, var_theta, kZ * vt.se));
  CHECK(within("corrected SGHMC Var r", vr.mean, var_r, kZ * vr.se));
  const Estimate bt = estimate(bad.theta2(), hot.iact_product(0, 0));
  CHECK(within("uncorrected SGHMC Var θ vs its own exact law", bt.mean, hot.stationary()(0, 0),
               kZ * bt.se));
  // Negative control: the uncorrected chain against the corrected law (excess ≈ hV/(2c) = 0.5).
  CHECK_FALSE(
      within("uncorrected SGHMC Var θ vs 2(2-ch)/(4-2ch-h²)", bt.mean, var_theta, kZ * vt.se));
}

TEST_CASE_TEMPLATE("(e) explicit-Euler SGHMC: Var θ = 1 + h/c + O(h²), distinct from kick-drift", S,
                   float, double) {
  const double h = 0.25;
  const double c = 1.0;  // explicit Euler needs c > h (MATH.md §1.3)
  const std::int64_t n = 1000000;
  const auto euler = sghmc_chain<1>(unit_precision(), h, c, 1.0, 0.0, 0.0, Order::ExplicitEuler);
  const auto kick = sghmc_chain<1>(unit_precision(), h, c, 1.0, 0.0, 0.0, Order::KickDrift);
  const double var_euler = euler.stationary()(0, 0);  // 1.3714; first order: 1 + h/c = 1.25
  const double var_kick = kick.stationary()(0, 0);    // 1.0185
  log_line("explicit Euler Var θ exact %.5f, first order 1 + h/c = %.5f; kick-drift %.5f",
           var_euler, 1 + h / c, var_kick);
  CHECK(std::abs(var_euler - (1 + h / c)) < 2 * h * h);  // the O(h²) remainder

  const Recorded1 e =
      record1(SGHMC<S, 1, ExplicitEuler>(sghmc_params<S>(h, c)), StandardNormal<S, 1>{}, 205, n);
  const Recorded1 k = record1(SGHMC<S, 1>(sghmc_params<S>(h, c)), StandardNormal<S, 1>{}, 206, n);
  REQUIRE(e.ok);
  REQUIRE(k.ok);
  // Exact τ_θ² = 7.7 (Euler), 7.4 (kick-drift): SE(Var θ) = 0.0053 and 0.0039.
  const Estimate ve = estimate(e.theta2(), euler.iact_product(0, 0));
  const Estimate vr = estimate(e.r2(), euler.iact_product(1, 1));
  const Estimate vk = estimate(k.theta2(), kick.iact_product(0, 0));
  CHECK(within("explicit-Euler SGHMC Var θ", ve.mean, var_euler, kZ * ve.se));
  CHECK(within("explicit-Euler SGHMC Var r", vr.mean, euler.stationary()(1, 1), kZ * vr.se));
  CHECK(within("kick-drift SGHMC Var θ", vk.mean, var_kick, kZ * vk.se));
  // Negative controls: each ordering fails the other's exact law.
  CHECK_FALSE(within("explicit-Euler chain vs kick-drift law", ve.mean, var_kick, kZ * vk.se));
  CHECK_FALSE(within("kick-drift chain vs explicit-Euler law", vk.mean, var_euler, kZ * ve.se));
}

// Drift-kick (MATH.md §1.3: θ ← θ + h f_θ(r_t); r ← r + h f_r(θ_{t+1}, r_t)) has the same exact
// Var θ as kick-drift. The Sweep evaluates the model gradient at the current θ where a row needs
// it, so SGHMC<S, d, DriftKick>'s momentum kick sees θ_{t+1}. Negative control: the chain fails
// the explicit-Euler law.
TEST_CASE_TEMPLATE("(e) drift-kick SGHMC matches MATH.md §1.3's drift-kick law", S, float, double) {
  const double h = 0.25;
  const double c = 1.0;
  const auto dk = sghmc_chain<1>(unit_precision(), h, c, 1.0, 0.0, 0.0, Order::DriftKick);
  const Recorded1 rec =
      record1(SGHMC<S, 1, DriftKick>(sghmc_params<S>(h, c)), StandardNormal<S, 1>{}, 207, 1000000);
  REQUIRE(rec.ok);
  const Estimate v = estimate(rec.theta2(), dk.iact_product(0, 0));
  CHECK(within("drift-kick SGHMC Var θ", v.mean, dk.stationary()(0, 0), kZ * v.se));
  const auto ee = sghmc_chain<1>(unit_precision(), h, c, 1.0, 0.0, 0.0, Order::ExplicitEuler);
  CHECK_FALSE(
      within("drift-kick chain vs explicit-Euler law", v.mean, ee.stationary()(0, 0), kZ * v.se));
}

TEST_CASE_TEMPLATE(
    "(e) zero temperature with gradient noise: SGD Var θ = hV/(2-h), heavy ball exact", S, float,
    double) {
  const double h = 0.3;
  const double v_noise = 4.0;
  const std::int64_t n = 1000000;
  // SGD (MATH.md §2.3): θ' = (1-h)θ - h n: Var θ = hV/(2-h) = 0.7059, τ_θ² = 2.92 (ρ = 0.7),
  // SE = sqrt(2·0.706²·2.92/n) = 0.0017.
  const auto sgd_chain = sgld_chain<1>(unit_precision(), h, 1.0, v_noise, 0.0, /*cold=*/true);
  CHECK(sgd_chain.stationary()(0, 0) == doctest::Approx(h * v_noise / (2 - h)).epsilon(1e-12));
  typename SGD<S, 1>::Params p;
  p.learning_rate = S(h);
  const NoisyGradient<StandardNormal<S, 1>, S, 1> noisy({}, S(v_noise), 2005);
  const Recorded1 sgd = record1(SGD<S, 1>(p), noisy, 208, n);
  REQUIRE(sgd.ok);
  const Estimate vs = estimate(sgd.theta2(), sgd_chain.iact_product(0, 0));
  CHECK(within("SGD Var θ vs hV/(2-h)", vs.mean, h * v_noise / (2 - h), kZ * vs.se));
  // Negative control: warm SGLD on the same noisy gradient (V̂ = V, a correct sampler) is not an
  // optimiser: Var θ = 2/(2-h) = 1.18.
  SGLD<S, 1> sgld(sgld_params<S>(h));
  REQUIRE(sgld.set_gradient_noise(S(v_noise)));
  const NoisyGradient<StandardNormal<S, 1>, S, 1> noisy2({}, S(v_noise), 2006);
  const Recorded1 warm = record1(sgld, noisy2, 209, n);
  REQUIRE(warm.ok);
  CHECK_FALSE(
      within("SGLD Var θ vs hV/(2-h)", mean_of(warm.theta2()), h * v_noise / (2 - h), kZ * vs.se));

  // Heavy ball (cold kick-drift SGHMC, η = 0.09, α = 0.3 ⇒ h = 0.3, C = 1): momentum noise h²V
  // only.
  const auto sp = SGHMCParams<double>::from_momentum_sgd(0.09, 0.3);
  const auto heavy_chain = sghmc_chain<1>(unit_precision(), sp.step_size, sp.friction, 1.0, v_noise,
                                          0.0, Order::KickDrift, /*cold=*/true);
  typename SGDMomentum<S, 1>::Params pm;
  pm.learning_rate = S(0.09);
  pm.momentum_decay = S(0.3);
  const NoisyGradient<StandardNormal<S, 1>, S, 1> noisy3({}, S(v_noise), 2007);
  const Recorded1 heavy = record1(SGDMomentum<S, 1>(pm), noisy3, 210, n);
  REQUIRE(heavy.ok);
  // Exact τ_θ² = 6.0: SE = 0.0021 on Var θ = 0.616.
  const Estimate vh = estimate(heavy.theta2(), heavy_chain.iact_product(0, 0));
  CHECK(within("SGDMomentum Var θ", vh.mean, heavy_chain.stationary()(0, 0), kZ * vh.se));
  // Negative control: warm SGHMC with the same (h, C) and noisy gradient, uncorrected.
  const NoisyGradient<StandardNormal<S, 1>, S, 1> noisy4({}, S(v_noise), 2008);
  const Recorded1 sghmc =
      record1(SGHMC<S, 1>(sghmc_params<S>(sp.step_size, sp.friction)), noisy4, 211, n);
  REQUIRE(sghmc.ok);
  CHECK_FALSE(within("SGHMC Var θ vs the heavy-ball law", mean_of(sghmc.theta2()),
                     heavy_chain.stationary()(0, 0), kZ * vh.se));
}

// ---------------------------------------------------------------------------------------------
// (g) HMC: exact at a large step; the unadjusted leapfrog is visibly biased.

TEST_CASE_TEMPLATE("(g) HMC at h = 0.9, L = 5 is exact on N(0,1); metropolis = false is not", S,
                   float, double) {
  typename HMC<S, 1>::Params p;
  p.step_size = S(0.9);
  p.steps = 5;
  const std::int64_t n = 200000;
  const HMC<S, 1> exact(p);
  p.metropolis = false;
  const HMC<S, 1> unadjusted(p);
  const double var_unadjusted = unadjusted_hmc_variance(0.9, 5);  // 1.2539 (targets.hpp)

  // Acceptance rate, for the record.
  {
    host::Rng rng(300);
    auto z = exact.start(Vector<S, 1>::Zero());
    std::int64_t accepted = 0;
    bool ok = true;
    for (int i = 0; i < 20000; ++i) {
      ok = ok && exact.step(z, StandardNormal<S, 1>{}, rng);
      accepted += z.extra().accepted ? 1 : 0;  // the transition's HMCInfo
    }
    REQUIRE(ok);
    log_line("HMC h = 0.9, L = 5 acceptance rate %.4f", double(accepted) / 20000.0);
  }
  const Recorded1 good = record1(exact, StandardNormal<S, 1>{}, 301, n);
  const Recorded1 bad = record1(unadjusted, StandardNormal<S, 1>{}, 302, n);
  REQUIRE(good.ok);
  REQUIRE(bad.ok);
  // τ by Geyer on each chain (≈ 1.0-1.2: rejections repeat θ). SE(Var) ≈ sqrt(2τ/n) ≈ 0.0034.
  const Estimate m = estimate(good.theta);
  const Estimate v = estimate(good.theta2());
  const Estimate vb = estimate(bad.theta2());
  log_line("τ_θ² (MH) %.3f, (unadjusted) %.3f (Geyer)", v.tau, vb.tau);
  CHECK(within("HMC E θ", m.mean, 0.0, kZ * m.se));
  CHECK(within("HMC Var θ", v.mean, 1.0, kZ * v.se));
  CHECK(within("unadjusted HMC Var θ vs its exact law b²/(1-a²)", vb.mean, var_unadjusted,
               kZ * vb.se));
  // Negative control: the unadjusted leapfrog fails the exactness check (bias 0.25).
  CHECK_FALSE(within("unadjusted HMC Var θ vs 1", vb.mean, 1.0, kZ * v.se));
}

// ---------------------------------------------------------------------------------------------
// (c) The correlated 2-D Gaussian Σ = [[1, 0.9], [0.9, 1]]: mean and covariance.

TEST_CASE_TEMPLATE(
    "(c) SGLD on the correlated Gaussian: exact discrete covariance; noise correction", S, float,
    double) {
  const CorrelatedGaussian2<S> target;
  const Eigen::Matrix2d prec = target.precision();  // eigenvalues 10 and 0.526
  const double h = 0.05;
  const double v_noise = 10.0;  // 2 - hV̂ = 1.5
  const std::int64_t n = 1000000;
  const auto chain = sgld_chain<2>(prec, h, 1.0, 0.0, 0.0);
  const Eigen::Matrix2d cov = chain.stationary();
  log_line("SGLD exact discrete covariance at h = 0.05: %.5f, %.5f, %.5f", cov(0, 0), cov(0, 1),
           cov(1, 1));
  typename SGLD<S, 2>::Params p;
  p.step_size = S(h);
  const Recorded2 exact_grad = record2(SGLD<S, 2>(p), target, 401, n);
  REQUIRE(exact_grad.ok);
  // Exact τ: the slow direction (ρ = 1 - 0.0263) gives τ_θ = 70, τ_θθ = 33-37: SE(cov) ≈ 0.008.
  const Tol2 tol = tolerances2(
      exact_grad, [&](int i) { return chain.iact_linear(i); },
      [&](int i, int j) { return chain.iact_product(i, j); });
  CHECK(moments2_within("SGLD exact gradient", exact_grad, cov, tol));

  // With gradient noise N(0, V I): corrected (V̂ = V) has the same law as the exact-gradient chain.
  SGLD<S, 2> corrected(p);
  REQUIRE(corrected.set_gradient_noise(S(v_noise)));
  const NoisyGradient<CorrelatedGaussian2<S>, S, 2> noisy(target, S(v_noise), 4001);
  const Recorded2 good = record2(corrected, noisy, 402, n);
  CHECK(moments2_within("SGLD noisy, corrected", good, cov, tol));
  // Negative control: uncorrected, the chain runs hot (about 1 + hV/2 = 1.25 times Σ).
  const NoisyGradient<CorrelatedGaussian2<S>, S, 2> noisy2(target, S(v_noise), 4002);
  const Recorded2 bad = record2(SGLD<S, 2>(p), noisy2, 403, n);
  REQUIRE(bad.ok);
  CHECK_FALSE(moments2_within("SGLD noisy, uncorrected", bad, cov, tol));
}

TEST_CASE_TEMPLATE("(c) kick-drift SGHMC and HMC on the correlated Gaussian", S, float, double) {
  const CorrelatedGaussian2<S> target;
  const Eigen::Matrix2d prec = target.precision();
  const std::int64_t n = 1000000;
  {
    const double h = 0.1;
    const double c = 1.0;
    const double v_noise = 10.0;  // 2C - hV̂ = 1
    const auto chain = sghmc_chain<2>(prec, h, c, 1.0, 0.0, 0.0, Order::KickDrift);
    const Eigen::Matrix2d cov = chain.stationary().topLeftCorner<2, 2>();
    typename SGHMC<S, 2>::Params p;
    p.step_size = S(h);
    p.friction = S(c);
    const Recorded2 rec = record2(SGHMC<S, 2>(p), target, 404, n);
    REQUIRE(rec.ok);
    // Exact τ from the 4-D (θ, r) recursion: τ_θ = 36, τ_θθ = 26-28, SE(cov) ≈ 0.007.
    const Tol2 tol = tolerances2(
        rec, [&](int i) { return chain.iact_linear(i); },
        [&](int i, int j) { return chain.iact_product(i, j); });
    CHECK(moments2_within("kick-drift SGHMC", rec, cov, tol));
    // The SGHMC paper's Fig. 3 setting with noise N(0, V I): corrected passes; uncorrected (the
    // negative control) runs hot by about hV/(2C) = 0.5.
    SGHMC<S, 2> corrected(p);
    REQUIRE(corrected.set_gradient_noise(S(v_noise)));
    const NoisyGradient<CorrelatedGaussian2<S>, S, 2> noisy(target, S(v_noise), 4003);
    CHECK(moments2_within("kick-drift SGHMC, noisy, corrected", record2(corrected, noisy, 406, n),
                          cov, tol));
    const NoisyGradient<CorrelatedGaussian2<S>, S, 2> noisy2(target, S(v_noise), 4004);
    CHECK_FALSE(moments2_within("kick-drift SGHMC, noisy, uncorrected",
                                record2(SGHMC<S, 2>(p), noisy2, 407, n), cov, tol));
  }
  {
    typename HMC<S, 2>::Params p;
    p.step_size = S(0.2);  // stiff direction: ω h = √10 · 0.2 = 0.63
    p.steps = 5;
    const Recorded2 rec = record2(HMC<S, 2>(p), target, 405, n / 5);
    REQUIRE(rec.ok);
    // τ by Geyer on the chain (slow direction: trajectory length 1 at ω = 0.73 moves it slowly).
    const Tol2 tol = tolerances2(
        rec, [](int) { return 0.0; }, [](int, int) { return 0.0; });
    CHECK(moments2_within("HMC", rec, target.covariance(), tol));
  }
}
