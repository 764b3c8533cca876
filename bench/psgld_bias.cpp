// SPDX-License-Identifier: MIT
// The bias table of docs/samplers/psgld.md: E[θ_i²/σ_i²] (target 1) under PSGLD, pSGLD with Γ
// read at fixed V_{t−1} ("one-step") and NaivePSGLD, for several α and h. A long run, not a test:
//   build/rel/bench/psgld_bias [steps at h = 0.01 (default 10^7; 5× as many at h = 0.002)]
// Target U = Σ θ_i²/(2σ_i²), d = 32, σ_i ∈ {0.7, 1, 1.4, 1}, full gradients, λ = 1, seed 7,
// burn-in 5·10⁴ + 20/h steps; standard error from the Geyer ESS of the thinned coordinate mean.

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "sgmcmc/diagnostics/mcse.hpp"
#include "sgmcmc/host/rng.hpp"
#include "sgmcmc/samplers/psgld.hpp"

namespace {

constexpr int kDim = 32;

double sigma(int i) {
  return i % 4 == 0 ? 0.7 : (i % 4 == 2 ? 1.4 : 1.0);
}

struct ScaledGaussian {
  template <class Th, class G>
  void gradient(const Th& th, G& g) const noexcept {
    for (int i = 0; i < kDim; ++i) g[i] = th[i] / (sigma(i) * sigma(i));
  }
  template <class Th, class H>
  void hessian_diagonal(const Th&, H& h) const noexcept {
    for (int i = 0; i < kDim; ++i) h[i] = 1 / (sigma(i) * sigma(i));
  }
};

struct Result {
  double mean, se;
  bool ok;
};

template <class Sampler>
Result run(double alpha, double h, long steps) {
  const Sampler s({h, alpha, 1.0});
  auto z = s.start(sgmcmc::Vector<double, kDim>::Zero());
  sgmcmc::host::Rng rng(7);
  const ScaledGaussian model;
  const long burn = 50000 + static_cast<long>(20 / h);
  std::vector<double> trace;
  trace.reserve(static_cast<std::size_t>(steps / 10 + 1));
  for (long t = 0; t < burn + steps; ++t) {
    if (!s.step(z, model, rng)) return {0, 0, false};
    if (t >= burn && (t - burn) % 10 == 0) {
      const auto p = z.position();
      double m = 0;
      for (int i = 0; i < kDim; ++i) m += p[i] * p[i] / (sigma(i) * sigma(i));
      trace.push_back(m / kDim);
    }
  }
  const auto m = sgmcmc::mean_with_error(trace.data(), trace.size());
  return {m.mean, m.se, true};
}

void cell(const Result& r) {
  if (r.ok) {
    std::printf(" %.4f ± %.4f |", r.mean, r.se);
  } else {
    std::printf(" failed |");
  }
}

}  // namespace

int main(int argc, char** argv) {
  long base = 10000000;
  if (argc > 1) {
    char* end = nullptr;
    base = std::strtol(argv[1], &end, 10);
    if (end == argv[1] || *end != '\0' || base < 1000) {
      std::fprintf(stderr, "usage: psgld_bias [steps at h = 0.01, >= 1000]\n");
      return 2;
    }
  }
  std::printf("| α | h | PSGLD | one-step Γ | NaivePSGLD |\n|---|---|---|---|---|\n");
  for (double alpha : {0.0, 0.5, 0.9, 0.99}) {
    for (double h : {0.01, 0.002}) {
      const long steps = h < 0.005 ? 5 * base : base;
      std::printf("| %.2f | %.3f |", alpha, h);
      cell(run<sgmcmc::PSGLD<double, kDim>>(alpha, h, steps));
      cell(run<sgmcmc::detail::OneStepPSGLD<double, kDim>>(alpha, h, steps));
      cell(run<sgmcmc::NaivePSGLD<double, kDim>>(alpha, h, steps));
      std::printf("\n");
      std::fflush(stdout);
    }
  }
  return 0;
}
