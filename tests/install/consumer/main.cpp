// Downstream consumer: one SGLD chain on N(0, 1) through the installed or sub-project headers.
#include <cstdio>

#include "sgmcmc/host/rng.hpp"
#include "sgmcmc/sgmcmc.hpp"

struct Gaussian {
  void gradient(const sgmcmc::Vector<double, 1>& th, sgmcmc::Vector<double, 1>& g) const { g = th; }
};

int main() {
  sgmcmc::SGLD<double, 1> sampler({0.05, {}});
  auto z = sampler.start(sgmcmc::Vector<double, 1>::Zero());
  sgmcmc::host::Rng rng(1);
  double sum2 = 0;
  const int n = 20000;
  for (int i = 0; i < n; ++i) {
    if (auto s = sampler.step(z, Gaussian{}, rng); !s) {
      std::printf("step failed: %s\n", s.message());
      return 1;
    }
    sum2 += z.position()[0] * z.position()[0];
  }
  std::printf("consumer ok: E[theta^2] ~ %.2f\n", sum2 / n);
  return sum2 / n > 0.5 && sum2 / n < 1.6 ? 0 : 1;
}
