// Quick start: SGHMC on the recipe paper's 2-D banana in float, the four steps of the README.
#include <cstdio>

#include "sgmcmc/host/rng.hpp"
#include "sgmcmc/sgmcmc.hpp"

// Step 2: the model. U(θ) = θ₀⁴/10 + (4(θ₁ + 1.2) − θ₀²)²/2; gradient() writes ∇U (not ∇log p).
// θ and g arrive as Eigen maps of compile-time size 2, hence the template.
struct Banana {
  template <class Theta, class Grad>
  void gradient(const Theta& th, Grad& g) const noexcept {
    const float w = 4.0f * (th[1] + 1.2f) - th[0] * th[0];
    g[0] = 0.4f * th[0] * th[0] * th[0] - 2.0f * th[0] * w;
    g[1] = 4.0f * w;
  }
};

int main() {
  // Step 1: Scalar = float, Dim = 2. Step 3: a sampler and its parameters.
  sgmcmc::SGHMC<float, 2>::Params params;
  params.step_size = 0.02f;  // h, MATH.md convention
  params.friction = 2.0f;    // C
  sgmcmc::SGHMC<float, 2> sampler(params);
  if (!sampler.status()) {
    std::printf("invalid parameters: %s\n", sampler.status().message());
    return 1;
  }
  // Step 4: a state on the stack, a port RNG, and the loop.
  auto z = sampler.start(sgmcmc::Vector<float, 2>(0.0f, -1.0f));
  sgmcmc::host::Rng rng(2024);
  double sum0sq = 0, sum1 = 0;
  const int burn_in = 5000, n = 200000;
  for (int t = 0; t < burn_in + n; ++t) {
    if (auto s = sampler.step(z, Banana{}, rng); !s) {
      std::printf("step %d failed: %s\n", t, s.message());
      return 1;
    }
    if (t >= burn_in) {
      const auto th = z.position();  // a view of θ, valid until the next step
      sum0sq += double(th[0]) * th[0];
      sum1 += th[1];
    }
  }
  // Exact values: MATH.md §5.1.
  std::printf("E[theta0^2] = %.3f (exact 1.069), E[theta1] = %.3f (exact -0.933)\n", sum0sq / n,
              sum1 / n);
  return 0;
}
