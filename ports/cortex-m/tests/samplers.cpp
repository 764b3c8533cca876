// SPDX-License-Identifier: MIT
// On-target sampler suite in float, one firmware per sampler (SGMCMC_FW_SGLD, _SGHMC, _SGNHT,
// _HMC, _OPTIMISERS): conformance (determinism, zero-noise limit, bad input) and stationarity.
#include <cmath>

#include <Eigen/Core>

#include "sampler_checks.hpp"
#include "sgmcmc/sgmcmc.hpp"

using namespace fw;  // NOLINT: the shared checks, models and batch means of the suites

namespace {

#if defined(SGMCMC_FW_SGLD)
constexpr const char* kName = "SGLD";

void run() {
  using S = sgmcmc::SGLD<float, fw::kDim>;
  S::Params p;
  p.step_size = 0.1f;
  const S s(p);
  SGMCMC_CHECK(static_cast<bool>(s.status()));

  Line() << "conformance\n";
  check_deterministic(s, s.start(start_position()), true);
  {  // zero noise: θ' = θ - h ∇U(θ), gradient descent
    StateOf<S> z = s.start(start_position());
    Vec g;
    fw::Gaussian().gradient(z.position(), g);
    const Vec expected = z.position() - p.step_size * g;
    SGMCMC_CHECK(static_cast<bool>(s.step_with_noise(z, fw::Gaussian(), S::NoiseVector::Zero())));
    SGMCMC_CHECK_NEAR((z.position() - expected).cwiseAbs().maxCoeff(), 0.0, 1e-6);
  }
  S::Params bad = p;
  bad.step_size = -1.0f;
  check_rejects("step size -1", S(bad), fw::Gaussian(), s.start(start_position()),
                StatusCode::InvalidStepSize);
  S noisy(p);
  static_cast<void>(noisy.set_gradient_noise(100.0f));  // 2 - h V = -8 < 0
  check_rejects("gradient noise V = 100", noisy, fw::Gaussian(), s.start(start_position()),
                StatusCode::NoiseNotPSD);
  check_rejects("NaN gradient", s, fw::NanGradient(), s.start(start_position()),
                StatusCode::NonFiniteGradient);
  S::Params big = p;
  big.step_size = 100.0f;  // valid, but h * 3e38 overflows
  check_rejects("overflowing step", S(big), fw::HugeGradient(), s.start(start_position()),
                StatusCode::NonFiniteState);
  check_rejects("NaN position", s, fw::Gaussian(), nan_state(s), StatusCode::NonFiniteGradient);

  // Stationarity. The Euler chain on a Gaussian coordinate is AR(1) with coefficient
  // 1 - h/σ², whose stationary variance is exactly σ² / (1 - h/(2σ²)): that is the expectation
  // (no bias allowance). Batch length 5000 >> integrated autocorrelation time (<= 44).
  Line() << "stationarity: h = 0.1, 200000 steps\n";
  const double h = p.step_size;
  const double v0 = kVar0 / (1.0 - h / (2.0 * kVar0)), v1 = kVar1 / (1.0 - h / (2.0 * kVar1));
  {
    StateOf<S> z = s.start(Vec::Zero());
    Rng rng(2024);
    fw::BatchMeans<4> bm(5000);
    SGMCMC_CHECK(run_chain(s, z, rng, 1000, bm, position_moments<StateOf<S>>));
    SGMCMC_CHECK(position_ok(bm, v0, v1, 0.0, 0.0));
  }
  // Negative control: the same check on a chain whose noise is 1.3x too large (variance
  // 1.69x) must fail, which shows the tolerances are tight enough to matter.
  Line() << "negative control: noise 1.3x too large (must be outside)\n";
  {
    StateOf<S> z = s.start(Vec::Zero());
    Rng rng(2025);
    fw::BatchMeans<4> bm(1000);
    const fw::Gaussian model;
    double x[4];
    while (!bm.full()) {
      S::NoiseVector zeta;
      sgmcmc::fill_normal(rng, zeta);
      zeta *= 1.3f;
      static_cast<void>(s.step_with_noise(z, model, zeta));
      position_moments(z, x);
      bm.add(x);
    }
    SGMCMC_CHECK(!position_ok(bm, v0, v1, 0.0, 0.0));
  }
}

#elif defined(SGMCMC_FW_SGHMC)
constexpr const char* kName = "SGHMC";

void run() {
  using S = sgmcmc::SGHMC<float, fw::kDim>;
  S::Params p;
  p.step_size = 0.1f;
  p.friction = 1.0f;
  p.mass = 1.0f;
  const S s(p);
  SGMCMC_CHECK(static_cast<bool>(s.status()));

  Line() << "conformance\n";
  StateOf<S> z0 = s.start(start_position());
  z0.momentum() = Vec(0.3f, 0.5f);
  check_deterministic(s, z0, true);
  {  // zero noise: heavy-ball gradient descent, r' = r - h g - h C r / m; θ' = θ + h r' / m
    StateOf<S> z = z0;
    Vec g;
    fw::Gaussian().gradient(z.position(), g);
    const float h = p.step_size, c = p.friction, m = p.mass;
    const Vec r = z.momentum() - h * g - (h * c / m) * z.momentum();
    const Vec th = z.position() + (h / m) * r;
    SGMCMC_CHECK(static_cast<bool>(s.step_with_noise(z, fw::Gaussian(), S::NoiseVector::Zero())));
    SGMCMC_CHECK_NEAR((z.momentum() - r).cwiseAbs().maxCoeff(), 0.0, 1e-6);
    SGMCMC_CHECK_NEAR((z.position() - th).cwiseAbs().maxCoeff(), 0.0, 1e-6);
  }
  S::Params bad = p;
  bad.step_size = 0.0f;
  check_rejects("step size 0", S(bad), fw::Gaussian(), z0, StatusCode::InvalidStepSize);
  bad = p;
  bad.friction = -1.0f;
  check_rejects("friction -1", S(bad), fw::Gaussian(), z0, StatusCode::InvalidParameter);
  bad = p;
  bad.mass = 0.0f;
  check_rejects("mass 0", S(bad), fw::Gaussian(), z0, StatusCode::InvalidParameter);
  S noisy(p);
  static_cast<void>(noisy.set_gradient_noise(100.0f));  // 2C - h V = -8 < 0
  check_rejects("gradient noise V = 100", noisy, fw::Gaussian(), z0, StatusCode::NoiseNotPSD);
  check_rejects("NaN gradient", s, fw::NanGradient(), z0, StatusCode::NonFiniteGradient);
  bad = p;
  bad.step_size = 100.0f;  // valid, but h * 3e38 overflows
  // Constant D and Q: an overflowing momentum is a non-finite state.
  check_rejects("overflowing step", S(bad), fw::HugeGradient(), z0, StatusCode::NonFiniteState);
  check_rejects("NaN position", s, fw::Gaussian(), nan_state(s), StatusCode::NonFiniteGradient);

  // Stationarity against the exact stationary covariance of the discrete kick-drift chain
  // (a linear Gaussian recursion: discrete Lyapunov equation), so no bias allowance.
  Line() << "stationarity: h = 0.1, C = 1, m = 1, 200000 steps\n";
  const Eigen::Matrix2d s0 = sghmc_stationary(p.step_size, p.friction, p.mass, 1.0 / kVar0);
  const Eigen::Matrix2d s1 = sghmc_stationary(p.step_size, p.friction, p.mass, 1.0 / kVar1);
  StateOf<S> z = s.start(Vec::Zero());
  Rng rng(2024);
  fw::BatchMeans<6> bm(5000);
  SGMCMC_CHECK(run_chain(s, z, rng, 1000, bm, [](const StateOf<S>& w, double(&x)[6]) {
    double pm[4];
    position_moments(w, pm);
    for (int i = 0; i < 4; ++i) x[i] = pm[i];
    x[4] = double(w.momentum()[0]) * w.momentum()[0];
    x[5] = double(w.momentum()[1]) * w.momentum()[1];
  }));
  bool ok = fw::moment_ok("E theta_0  ", bm.mean(0), bm.standard_error(0), 0.0, 0.0);
  ok = fw::moment_ok("E theta_1  ", bm.mean(1), bm.standard_error(1), 0.0, 0.0) && ok;
  ok = fw::moment_ok("E theta_0^2", bm.mean(2), bm.standard_error(2), s0(0, 0), 0.0) && ok;
  ok = fw::moment_ok("E theta_1^2", bm.mean(3), bm.standard_error(3), s1(0, 0), 0.0) && ok;
  ok = fw::moment_ok("E r_0^2    ", bm.mean(4), bm.standard_error(4), s0(1, 1), 0.0) && ok;
  ok = fw::moment_ok("E r_1^2    ", bm.mean(5), bm.standard_error(5), s1(1, 1), 0.0) && ok;
  SGMCMC_CHECK(ok);
}

#elif defined(SGMCMC_FW_SGNHT)
constexpr const char* kName = "SGNHT";

void run() {
  using S = sgmcmc::SGNHT<float, fw::kDim>;
  S::Params p;
  p.step_size = 0.05f;
  p.diffusion = 1.0f;
  const S s(p);
  SGMCMC_CHECK(static_cast<bool>(s.status()));

  Line() << "conformance\n";
  StateOf<S> z0 = s.start(start_position());
  z0.momentum() = Vec(0.3f, 0.5f);
  z0.thermostat()[0] = 1.4f;
  check_deterministic(s, z0, true);
  {  // zero noise, sweep r, θ, ξ (MATH.md §1.3): r' = r - h(g + ξ r); θ' = θ + h r';
     // ξ' = ξ + h(r'ᵀr'/d - 1): the deterministic Nosé–Hoover thermostat step
    StateOf<S> z = z0;
    Vec g;
    fw::Gaussian().gradient(z.position(), g);
    const float h = p.step_size, xi = z.thermostat()[0];
    const Vec r = z.momentum() - h * (g + xi * z.momentum());
    const Vec th = z.position() + h * r;
    const float xi1 = xi + h * (r.squaredNorm() / fw::kDim - 1.0f);
    SGMCMC_CHECK(static_cast<bool>(s.step_with_noise(z, fw::Gaussian(), S::NoiseVector::Zero())));
    SGMCMC_CHECK_NEAR((z.momentum() - r).cwiseAbs().maxCoeff(), 0.0, 1e-6);
    SGMCMC_CHECK_NEAR((z.position() - th).cwiseAbs().maxCoeff(), 0.0, 1e-6);
    SGMCMC_CHECK_NEAR(z.thermostat()[0], xi1, 1e-6);
  }
  S::Params bad = p;
  bad.step_size = -0.1f;
  check_rejects("step size -0.1", S(bad), fw::Gaussian(), z0, StatusCode::InvalidStepSize);
  bad = p;
  bad.diffusion = -1.0f;
  check_rejects("diffusion A = -1", S(bad), fw::Gaussian(), z0, StatusCode::InvalidParameter);
  check_rejects("NaN gradient", s, fw::NanGradient(), z0, StatusCode::NonFiniteGradient);
  bad = p;
  bad.step_size = 100.0f;  // valid, but h * 3e38 overflows
  // The momentum overflows first; the thermostat's update then meets the state-dependent Q
  // column r/d at that infinite r (NonFiniteMetric). Either code is a refusal.
  check_rejects("overflowing step", S(bad), fw::HugeGradient(), z0, StatusCode::NonFiniteState,
                StatusCode::NonFiniteMetric);
  check_rejects("NaN position", s, fw::Gaussian(), nan_state(s), StatusCode::NonFiniteGradient);

  // Stationarity: θ ~ N(0, σ²), r ~ N(0, 1), ξ has mean A. The thermostat chain is non-linear,
  // so its O(h) discretisation bias has no closed form; the allowance is that of kick-drift
  // SGHMC with C = A at the same h (the linear chain SGNHT reduces to when ξ = A), doubled.
  Line() << "stationarity: h = 0.05, A = 1, 400000 steps\n";
  const Eigen::Matrix2d s0 = sghmc_stationary(p.step_size, p.diffusion, 1.0, 1.0 / kVar0);
  const Eigen::Matrix2d s1 = sghmc_stationary(p.step_size, p.diffusion, 1.0, 1.0 / kVar1);
  StateOf<S> z = s.start(Vec::Zero());
  Rng rng(2024);
  fw::BatchMeans<6> bm(10000);
  SGMCMC_CHECK(run_chain(s, z, rng, 2000, bm, [](const StateOf<S>& w, double(&x)[6]) {
    double pm[4];
    position_moments(w, pm);
    for (int i = 0; i < 4; ++i) x[i] = pm[i];
    x[4] = double(w.momentum().squaredNorm()) / fw::kDim;
    x[5] = w.thermostat()[0];
  }));
  bool ok = fw::moment_ok("E theta_0  ", bm.mean(0), bm.standard_error(0), 0.0, 0.0);
  ok = fw::moment_ok("E theta_1  ", bm.mean(1), bm.standard_error(1), 0.0, 0.0) && ok;
  ok = fw::moment_ok("E theta_0^2", bm.mean(2), bm.standard_error(2), kVar0,
                     2.0 * std::fabs(s0(0, 0) - kVar0)) &&
       ok;
  ok = fw::moment_ok("E theta_1^2", bm.mean(3), bm.standard_error(3), kVar1,
                     2.0 * std::fabs(s1(0, 0) - kVar1)) &&
       ok;
  ok = fw::moment_ok("E |r|^2/d  ", bm.mean(4), bm.standard_error(4), 1.0,
                     2.0 * std::fabs(s0(1, 1) - 1.0)) &&
       ok;
  ok = fw::moment_ok("E xi       ", bm.mean(5), bm.standard_error(5), p.diffusion, 0.0) && ok;
  SGMCMC_CHECK(ok);
}

#elif defined(SGMCMC_FW_HMC)
constexpr const char* kName = "HMC";

void run() {
  using S = sgmcmc::HMC<float, fw::kDim>;
  S::Params p;
  p.step_size = 0.25f;
  p.steps = 10;
  p.mass = 1.0f;
  const S s(p);
  SGMCMC_CHECK(static_cast<bool>(s.status()));

  Line() << "conformance\n";
  check_deterministic(s, s.start(start_position()), true);
  {  // zero-noise limit: not applicable (the noise is the momentum refresh). Instead the
     // deterministic leapfrog flow must be reversible: flip r, integrate back, flip r.
    StateOf<S> z = s.start(start_position());
    z.momentum() = Vec(0.3f, -0.8f);
    const StateOf<S> z0 = z;
    SGMCMC_CHECK(static_cast<bool>(s.leapfrog(z, fw::Gaussian())));
    z.momentum() = -z.momentum();
    SGMCMC_CHECK(static_cast<bool>(s.leapfrog(z, fw::Gaussian())));
    z.momentum() = -z.momentum();
    SGMCMC_CHECK_NEAR((z.flat() - z0.flat()).cwiseAbs().maxCoeff(), 0.0, 1e-5);
  }
  S::Params bad = p;
  bad.step_size = -1.0f;
  check_rejects("step size -1", S(bad), fw::Gaussian(), s.start(start_position()),
                StatusCode::InvalidStepSize);
  bad = p;
  bad.steps = 0;
  check_rejects("0 leapfrog steps", S(bad), fw::Gaussian(), s.start(start_position()),
                StatusCode::InvalidParameter);
  check_rejects("NaN gradient", s, fw::NanGradient(), s.start(start_position()),
                StatusCode::NonFiniteGradient);
  check_rejects("NaN potential", s, fw::NanPotential(), s.start(start_position()),
                StatusCode::NonFinitePotential);
  check_rejects("NaN position", s, fw::Gaussian(), nan_state(s), StatusCode::NonFiniteState);

  // Stationarity: Metropolis-corrected, so the target itself is the expectation, no bias.
  Line() << "stationarity: h = 0.25, L = 10, 20000 steps\n";
  StateOf<S> z = s.start(Vec::Zero());
  Rng rng(2024);
  fw::BatchMeans<4> bm(500);
  const fw::Gaussian model;
  long accepted = 0;
  double x[4];
  bool ok = true;
  while (!bm.full()) {
    ok = static_cast<bool>(s.step(z, model, rng)) && ok;
    accepted += z.extra().accepted ? 1 : 0;  // the transition's HMCInfo
    position_moments(z, x);
    bm.add(x);
  }
  SGMCMC_CHECK(ok);
  const double rate = static_cast<double>(accepted) / static_cast<double>(bm.draws());
  Line().decimals(3) << "  acceptance rate " << rate << '\n';
  SGMCMC_CHECK(rate > 0.5);
  SGMCMC_CHECK(position_ok(bm, kVar0, kVar1, 0.0, 0.0));
}

#elif defined(SGMCMC_FW_OPTIMISERS)
constexpr const char* kName = "SGD and SGDMomentum";

void run() {
  using D = sgmcmc::SGD<float, fw::kDim>;
  D::Params p;
  p.learning_rate = 0.1f;
  const D sgd(p);
  SGMCMC_CHECK(static_cast<bool>(sgd.status()));
  Line() << "conformance (SGD)\n";
  check_deterministic(sgd, sgd.start(start_position()), false);
  {  // θ' = θ - η ∇U(θ), and the iteration reaches the mode
    StateOf<D> z = sgd.start(start_position());
    Vec g;
    fw::Gaussian().gradient(z.position(), g);
    const Vec expected = z.position() - p.learning_rate * g;
    Rng rng(1);
    SGMCMC_CHECK(static_cast<bool>(sgd.step(z, fw::Gaussian(), rng)));
    SGMCMC_CHECK_NEAR((z.position() - expected).cwiseAbs().maxCoeff(), 0.0, 1e-6);
    bool ok = true;
    for (int i = 0; i < 1000; ++i) ok = static_cast<bool>(sgd.step(z, fw::Gaussian(), rng)) && ok;
    SGMCMC_CHECK(ok);
    SGMCMC_CHECK_NEAR(z.position().cwiseAbs().maxCoeff(), 0.0, 1e-6);
  }
  D::Params bad = p;
  bad.learning_rate = -1.0f;
  check_rejects("learning rate -1", D(bad), fw::Gaussian(), sgd.start(start_position()),
                StatusCode::InvalidStepSize);
  check_rejects("NaN gradient", sgd, fw::NanGradient(), sgd.start(start_position()),
                StatusCode::NonFiniteGradient);
  bad.learning_rate = 100.0f;  // valid, but η * 3e38 overflows
  check_rejects("overflowing step", D(bad), fw::HugeGradient(), sgd.start(start_position()),
                StatusCode::NonFiniteState);

  using M = sgmcmc::SGDMomentum<float, fw::kDim>;
  M::Params q;
  q.learning_rate = 0.04f;
  q.momentum_decay = 0.2f;
  const M hb(q);
  SGMCMC_CHECK(static_cast<bool>(hb.status()));
  Line() << "conformance (SGDMomentum)\n";
  StateOf<M> z0 = hb.start(start_position());
  z0.momentum() = Vec(0.3f, 0.5f);
  check_deterministic(hb, z0, false);
  {  // heavy ball: v = h r with h = sqrt(η); v' = (1 - α) v - η g; θ' = θ + v'
    StateOf<M> z = z0;
    const float h = std::sqrt(q.learning_rate);
    Vec g;
    fw::Gaussian().gradient(z.position(), g);
    const Vec v = (1.0f - q.momentum_decay) * (h * z.momentum()) - q.learning_rate * g;
    const Vec th = z.position() + v;
    Rng rng(1);
    SGMCMC_CHECK(static_cast<bool>(hb.step(z, fw::Gaussian(), rng)));
    SGMCMC_CHECK_NEAR((h * z.momentum() - v).cwiseAbs().maxCoeff(), 0.0, 1e-6);
    SGMCMC_CHECK_NEAR((z.position() - th).cwiseAbs().maxCoeff(), 0.0, 1e-6);
  }
  check_rejects("NaN gradient", hb, fw::NanGradient(), z0, StatusCode::NonFiniteGradient);
  M::Params big = q;
  big.learning_rate = 1.0e4f;  // valid, but η * 3e38 overflows
  check_rejects("overflowing step", M(big), fw::HugeGradient(), z0, StatusCode::NonFiniteState);
}

#else
#error "define one of SGMCMC_FW_SGLD, _SGHMC, _SGNHT, _HMC, _OPTIMISERS"
#endif

}  // namespace

int main() {
  return fw::run_suite(kName, run);
}
