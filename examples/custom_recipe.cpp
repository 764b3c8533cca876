// A user-declared sampler that the library does not ship: underdamped Langevin whose friction
// grows with the kinetic energy, D_rr = c₀(1 + |r|²/d) I. Γ_r = ∂D_rr/∂r = 2c₀r/d comes from the
// engine's automatic differentiation; the recipe guarantees exp(−H) is invariant (MATH.md §1.1).
#include <cmath>
#include <cstdio>

#include "sgmcmc/host/rng.hpp"
#include "sgmcmc/sgmcmc.hpp"

constexpr int d = 2;

/// The state-dependent friction, written once for any scalar type (plain or AD). It returns the
/// concrete scalar type T, never `auto`: an AD expression would refer to destroyed temporaries.
struct KineticFriction {
  double c0 = 0.5;
  template <class Z>
  typename Z::Scalar operator()(const Z& z) const {
    using T = typename Z::Scalar;
    return T(c0) * (T(1) + z.momentum().squaredNorm() / T(d));
  }
};

// Layout (θ, r); H = U + |r|²/2; D = diag(0, c(r) I); Q = [[0, −I], [I, 0]]; kick–drift order.
using AdaptiveFrictionHMC = sgmcmc::Recipe<
    double, sgmcmc::Layout<d, d>, sgmcmc::Energy<sgmcmc::GaussianKinetic<double>>,
    sgmcmc::Diffusion<sgmcmc::Zero, sgmcmc::StateDependent<sgmcmc::ScalarShape, KineticFriction>>,
    sgmcmc::Curl<sgmcmc::SkewPair<sgmcmc::Momentum, sgmcmc::Position, sgmcmc::Identity>>,
    sgmcmc::Sweep<sgmcmc::Momentum, sgmcmc::Position>>;

/// Correlated Gaussian target: U = θᵀΣ⁻¹θ/2 with Σ = [[1, 0.9], [0.9, 1]].
struct CorrelatedGaussian {
  template <class Theta, class Grad>
  void gradient(const Theta& th, Grad& g) const noexcept {
    const double det = 1.0 - 0.81;
    g[0] = (th[0] - 0.9 * th[1]) / det;
    g[1] = (th[1] - 0.9 * th[0]) / det;
  }
};

int main() {
  AdaptiveFrictionHMC sampler({{sgmcmc::GaussianKinetic<double>{1.0}}}, {}, {}, 0.05);
  if (!sampler.status()) {
    std::printf("invalid: %s\n", sampler.status().message());
    return 1;
  }
  AdaptiveFrictionHMC::StateType z;
  z.momentum() << 1.0, -1.0;
  const auto gamma = sampler.gamma(z);
  std::printf("Gamma at r = (1, -1): (%.3f, %.3f), expected 2 c0 r / d = (0.500, -0.500)\n",
              gamma.momentum()[0], gamma.momentum()[1]);

  sgmcmc::host::Rng rng(7);
  double s00 = 0, s01 = 0, s11 = 0;
  const int n = 400000;
  for (int t = 0; t < n; ++t) {
    if (auto s = sampler.step(z, CorrelatedGaussian{}, rng); !s) {
      std::printf("step failed: %s\n", s.message());
      return 1;
    }
    const auto th = z.position();
    s00 += th[0] * th[0];
    s01 += th[0] * th[1];
    s11 += th[1] * th[1];
  }
  std::printf("covariance [[%.3f, %.3f], [%.3f, %.3f]], exact [[1, 0.9], [0.9, 1]]\n", s00 / n,
              s01 / n, s01 / n, s11 / n);
  const bool ok = std::abs(s00 / n - 1) < 0.15 && std::abs(s01 / n - 0.9) < 0.15 &&
                  std::abs(gamma.momentum()[0] - 0.5) < 1e-12;
  return ok ? 0 : 1;
}
