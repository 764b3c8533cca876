// SPDX-License-Identifier: MIT
// Soak and bad-input battery (docs/RELIABILITY.md): every sampler family runs N steps (10^8 by
// default) on a noisy Gaussian, counting failed steps and non-finite states; then each family
// meets NaN/±Inf/huge/denormal gradients, non-finite potentials and states, invalid step sizes
// and bad V̂, and every call must keep the step-level promise: Ok with a finite state, or a
// failure with the state bit-for-bit unchanged. One summary line per family and scalar.
//
//   sgmcmc_soak [--steps N] [--scalar float|double|both] [--only NAME] [--markdown]
//
// Exit status 1 when a soak step produced a non-finite state or any call broke the promise.

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "sgmcmc/host/rng.hpp"
#include "sgmcmc/sgmcmc.hpp"

namespace {

using sgmcmc::Status;
using sgmcmc::StatusCode;
using sgmcmc::Vector;
using Rng = sgmcmc::host::Rng;

constexpr int kDim = 4;

/// U = θᵀθ/2 (standard normal), ∇Ũ = θ + σζ with ζ ~ N(0, I) from the model's own stream.
/// θ and g are the engine's maps (or vectors); the potential also takes AD scalars.
template <class Scalar>
struct NoisyGaussian {
  Scalar sigma{Scalar(0.5)};
  mutable Rng rng{7, 1};
  template <class Theta>
  typename Theta::Scalar potential(const Theta& th) const noexcept {
    return typename Theta::Scalar(0.5) * th.squaredNorm();
  }
  template <class Theta, class Grad>
  void gradient(const Theta& th, Grad& g) const noexcept {
    sgmcmc::fill_normal(rng, g);
    g = th + sigma * g;
  }
  /// ∂²U/∂θ_i² = 1 (pSGLD's Γ).
  template <class Theta, class H>
  void hessian_diagonal(const Theta&, H& h) const noexcept {
    h.setOnes();
  }
};

/// A broken model: coordinate 0 of the gradient is `bad_gradient`, and the potential is
/// `bad_potential` added to the Gaussian's (0 leaves it intact).
template <class Scalar>
struct BadModel {
  Scalar bad_gradient{0};
  Scalar bad_potential{0};
  template <class Theta>
  typename Theta::Scalar potential(const Theta& th) const noexcept {
    using T = typename Theta::Scalar;
    return T(0.5) * th.squaredNorm() + T(bad_potential);
  }
  template <class Theta, class Grad>
  void gradient(const Theta& th, Grad& g) const noexcept {
    g = th;
    g[0] = bad_gradient;
  }
  template <class Theta, class H>
  void hessian_diagonal(const Theta&, H& h) const noexcept {
    h.setOnes();
  }
};

/// G⁻¹(θ) = diag(0.5 + 1/(1 + θ_i²)) for the Riemannian families.
struct SoftDiagInverse {
  template <class T, int D>
  Vector<T, D> operator()(const Vector<T, D>& th) const {
    Vector<T, D> g;
    for (int i = 0; i < D; ++i) g[i] = T(0.5) + T(1) / (T(1) + th[i] * th[i]);
    return g;
  }
};
using SoftMetric = sgmcmc::InverseMetric<sgmcmc::DiagonalShape, SoftDiagInverse, true>;

template <class S, class = void>
struct TakesGradientNoise : std::false_type {};
template <class S>
struct TakesGradientNoise<
    S, std::void_t<decltype(std::declval<S&>().set_gradient_noise(typename S::Scalar(1)))>>
    : std::true_type {};

struct Options {
  long long steps = 100000000;
  bool do_float = true;
  bool do_double = true;
  std::string only;
  bool markdown = false;
};

/// One family's outcome.
struct Row {
  std::string family;
  const char* scalar;
  long long steps = 0;
  long long failed = 0;      ///< soak steps that returned a non-Ok Status
  long long non_finite = 0;  ///< soak steps that returned Ok with a non-finite state
  double second_moment = 0;  ///< mean of θ_0² over the soak (about 1 for a sampler, h-biased)
  double seconds = 0;
  long long bad_calls = 0;    ///< bad-input calls made
  long long refused = 0;      ///< of those, the ones answered with a named failure
  long long broken = 0;       ///< calls that broke the promise (Ok non-finite, or state changed)
  long long stuck_calls = 0;  ///< steps with a stuck RNG (every word 0, or every word ~0)
  long long stuck_ok = 0;     ///< of those, the ones answered Ok (the RNG failure went unseen)
};

/// A failed RNG: the same word forever.
struct StuckRng {
  using result_type = std::uint64_t;
  static constexpr result_type min() noexcept { return 0; }
  static constexpr result_type max() noexcept { return ~result_type(0); }
  std::uint64_t word;
  result_type operator()() noexcept { return word; }
};

/// Runs one family: `make(h)` builds a sampler, `start(s, θ₀, rng)` its state and
/// `step(s, z, model, rng)` one transition (any model type).
template <class Scalar, class Make, class Start, class Step>
Row run_family(const char* family, const Options& o, Make make, Start start, Step step) {
  Row row;
  row.family = family;
  row.scalar = std::is_same_v<Scalar, float> ? "float" : "double";
  const Vector<Scalar, kDim> theta0 = Vector<Scalar, kDim>::Constant(Scalar(0.3));

  // The soak.
  {
    auto s = make();
    Rng rng(2024, 0);
    NoisyGaussian<Scalar> model;
    auto z = start(s, theta0, rng);
    double m2 = 0;
    const auto t0 = std::chrono::steady_clock::now();
    for (long long t = 0; t < o.steps; ++t) {
      if (!step(s, z, model, rng)) {
        ++row.failed;
      } else if (!z.all_finite()) {
        ++row.non_finite;
        z = start(s, theta0, rng);
      }
      const double x = double(z.position()[0]);
      m2 += x * x;
    }
    row.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    row.steps = o.steps;
    row.second_moment = o.steps > 0 ? m2 / double(o.steps) : 0.0;
  }

  // The bad-input battery, from a state a few steps into a chain.
  auto s = make();
  Rng rng(2025, 0);
  NoisyGaussian<Scalar> good;
  auto z0 = start(s, theta0, rng);
  for (int t = 0; t < 100; ++t) (void)step(s, z0, good, rng);
  auto check = [&](const auto& sampler, const auto& z_in, const auto& model, bool must_fail) {
    auto z = z_in;  // a copy of the state, taken here: by value it would pass a 64-byte-aligned
                    // object, which GCC notes as an ABI change
    const auto before = z;
    const Status st = step(sampler, z, model, rng);
    ++row.bad_calls;
    if (!st) ++row.refused;
    const bool kept = st ? z.all_finite() && !must_fail : before == z;
    if (!kept) ++row.broken;
  };
  constexpr Scalar inf = std::numeric_limits<Scalar>::infinity();
  constexpr Scalar nan = std::numeric_limits<Scalar>::quiet_NaN();
  constexpr Scalar big = std::numeric_limits<Scalar>::max();
  constexpr Scalar tiny = std::numeric_limits<Scalar>::denorm_min();
  const Scalar gradients[] = {nan, inf, -inf, big, -big, Scalar(1e30), tiny};
  const Scalar potentials[] = {nan, inf, -inf};
  for (int trial = 0; trial < 10; ++trial) {
    for (const Scalar g : gradients) {
      check(s, z0, BadModel<Scalar>{g, Scalar(0)}, !std::isfinite(g));
    }
    for (const Scalar u : potentials) check(s, z0, BadModel<Scalar>{Scalar(0.5), u}, false);
    // A non-finite θ must be refused; a non-finite last block (momentum or thermostat) too,
    // unless the sampler redraws it (HMC, NUTS): then Ok with a finite state is right.
    for (const Scalar v : {nan, inf}) {
      for (const int i : {0, int(z0.flat().size()) - 1}) {
        auto z = z0;
        auto flat = z.flat();
        flat[i] = v;
        z.set_flat(flat);
        check(s, z, good, i == 0);
      }
    }
  }
  for (const Scalar h : {Scalar(0), Scalar(-1), nan, inf}) check(make(h), z0, good, true);
  if constexpr (TakesGradientNoise<decltype(s)>::value) {
    for (const Scalar v : {nan, Scalar(-1), inf, Scalar(1e30)}) {
      auto noisy = make();
      const Status set = noisy.set_gradient_noise(v);
      ++row.bad_calls;
      if (!set) ++row.refused;
      // Refused or accepted (1e30: some samplers only find out in the step), a step must keep
      // the promise; NaN, −1 and ∞ must be refused by the call itself.
      if (set && !(v == Scalar(1e30))) ++row.broken;
      check(noisy, z0, good, false);
    }
  }
  // A stuck RNG must not hang a step (every loop is capped); whether the step notices it is
  // counted, not required (yet).
  for (const std::uint64_t word : {std::uint64_t(0), ~std::uint64_t(0)}) {
    StuckRng stuck{word};
    for (int trial = 0; trial < 3; ++trial) {
      auto z = z0;
      const Status st = step(s, z, good, stuck);
      ++row.stuck_calls;
      if (st) ++row.stuck_ok;
      if (st ? !z.all_finite() : !(z0 == z)) ++row.broken;
    }
  }
  return row;
}

void print(const Row& r, bool markdown);

/// Rows, printed as they are added.
struct Rows {
  bool markdown = false;
  std::vector<Row> all;
  void push_back(Row r) {
    print(r, markdown);
    all.push_back(std::move(r));
  }
};

template <class Scalar>
void run_all(const Options& o, Rows& rows) {
  auto want = [&](const char* name) { return o.only.empty() || o.only == name; };
  auto plain_start = [](const auto& s, const Vector<Scalar, kDim>& th, Rng&) {
    return s.start(th);
  };
  auto plain_step = [](const auto& s, auto& z, const auto& m, auto& rng) {
    return s.step(z, m, rng);
  };
  auto add = [&](const char* name, auto make) {
    if (want(name)) rows.push_back(run_family<Scalar>(name, o, make, plain_start, plain_step));
  };
  add("SGLD", [=](Scalar h = Scalar(0.05)) { return sgmcmc::SGLD<Scalar, kDim>({h, {}}); });
  add("SGD", [=](Scalar h = Scalar(0.05)) {
    return sgmcmc::SGD<Scalar, kDim>({h, sgmcmc::Scaled<Scalar>{Scalar(1)}});
  });
  add("SGHMC", [=](Scalar h = Scalar(0.05)) {
    return sgmcmc::SGHMC<Scalar, kDim>({h, Scalar(1.5), Scalar(1)});
  });
  add("SGD-momentum", [=](Scalar eta = Scalar(0.0025)) {
    return sgmcmc::SGDMomentum<Scalar, kDim>({eta, Scalar(0.1)});
  });
  add("SGNHT", [=](Scalar h = Scalar(0.05)) {
    return sgmcmc::SGNHT<Scalar, kDim>({h, Scalar(1.2)});
  });
  add("SGRLD", [=](Scalar h = Scalar(0.05)) {
    return sgmcmc::SGRLD<Scalar, kDim, SoftMetric>({h, {}, {}});
  });
  add("SGRHMC", [=](Scalar h = Scalar(0.05)) {
    return sgmcmc::SGRHMC<Scalar, kDim, SoftMetric>({h, {}, {}});
  });
  add("gSGRHMC", [=](Scalar h = Scalar(0.05)) { return sgmcmc::GSGRHMC<Scalar, kDim>({h, {}}); });
  // λ = 1 as in tests/toolkit's stationarity check: with λ = 1e−5 the preconditioner reaches 1e5
  // near θ = 0 and PSGLD's Γ drives E[θ₀²] to 10²–10³ at this h (NaivePSGLD stays near 1).
  add("pSGLD", [=](Scalar h = Scalar(0.05)) {
    return sgmcmc::PSGLD<Scalar, kDim>({h, Scalar(0.99), Scalar(1)});
  });
  add("SGRHMC-constant", [=](Scalar h = Scalar(0.05)) {
    typename sgmcmc::ConstantMetricSGRHMC<Scalar, kDim>::Params p;
    p.step_size = h;
    return sgmcmc::ConstantMetricSGRHMC<Scalar, kDim>(p);
  });
  add("HMC", [=](Scalar h = Scalar(0.2)) {
    return sgmcmc::HMC<Scalar, kDim>({h, 5, Scalar(1), true});
  });
  add("NUTS", [=](Scalar h = Scalar(0.2)) {
    return sgmcmc::NUTS<Scalar, kDim, 6>({h, Scalar(1), Scalar(1000)});
  });
  // The monomial-gamma samplers start from a draw of exp(−K_c) and redraw p every 50 steps
  // (the step counter lives in the state, z.extra().steps).
  auto mg = [&](const char* name, auto make) {
    if (!want(name)) return;
    auto start = [](const auto& s, const Vector<Scalar, kDim>& th, Rng& rng) {
      return s.start(th, rng);
    };
    rows.push_back(run_family<Scalar>(name, o, make, start, plain_step));
  };
  for (const int a : {1, 2}) {
    mg(a == 1 ? "SGMGT a=1" : "SGMGT a=2", [=](Scalar h = Scalar(0.05)) {
      typename sgmcmc::SGMGT<Scalar, kDim>::Params p;
      p.step_size = h;
      p.shape = a;
      p.softness = Scalar(a == 1 ? 5 : 3);
      p.resample_period = 50;
      return sgmcmc::SGMGT<Scalar, kDim>(p);
    });
    mg(a == 1 ? "SGMGT-D a=1" : "SGMGT-D a=2", [=](Scalar h = Scalar(0.05)) {
      typename sgmcmc::SGMGTD<Scalar, kDim>::Params p;
      p.step_size = h;
      p.shape = a;
      p.softness = Scalar(a == 1 ? 5 : 3);
      p.sigma_theta = Scalar(0.5);
      p.sigma_p = Scalar(1);
      p.sigma_xi = Scalar(0.1);
      p.gamma = Scalar(a == 1 ? 0.01 : 1);
      p.resample_period = 50;
      return sgmcmc::SGMGTD<Scalar, kDim>(p);
    });
  }
  // SGHMC with learned refresh: the first steps learn 32 lengths (z.extra()), then it samples.
  add("SGHMC-learned", [=](Scalar h = Scalar(0.05)) {
    return sgmcmc::SGHMCLearnedRefresh<Scalar, kDim>({h, Scalar(1.5), Scalar(1), 1000});
  });
}

void print(const Row& r, bool markdown) {
  if (markdown) {
    std::printf("| %s | %s | %.3g | %lld | %lld | %.3f | %lld | %lld | %lld | %lld of %lld |\n",
                r.family.c_str(), r.scalar, double(r.steps), r.failed, r.non_finite,
                r.second_moment, r.bad_calls, r.refused, r.broken, r.stuck_ok, r.stuck_calls);
  } else {
    std::printf(
        "%-14s %-6s %.3g steps: %lld failed, %lld non-finite, E[θ₀²] %.3f, %.1f s; bad inputs: "
        "%lld calls, %lld refused, %lld broke the promise; stuck RNG: %lld of %lld steps Ok\n",
        r.family.c_str(), r.scalar, double(r.steps), r.failed, r.non_finite, r.second_moment,
        r.seconds, r.bad_calls, r.refused, r.broken, r.stuck_ok, r.stuck_calls);
  }
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--steps" && i + 1 < argc) {
      o.steps = std::atoll(argv[++i]);
    } else if (a == "--scalar" && i + 1 < argc) {
      const std::string s = argv[++i];
      o.do_float = s == "float" || s == "both";
      o.do_double = s == "double" || s == "both";
    } else if (a == "--only" && i + 1 < argc) {
      o.only = argv[++i];
    } else if (a == "--markdown") {
      o.markdown = true;
    } else {
      std::fprintf(stderr,
                   "usage: sgmcmc_soak [--steps N] [--scalar float|double|both] [--only NAME] "
                   "[--markdown]\n");
      return 2;
    }
  }
  if (o.steps < 0 || (!o.do_float && !o.do_double)) {
    std::fprintf(stderr, "sgmcmc_soak: --steps must be >= 0 and --scalar float|double|both\n");
    return 2;
  }
  if (o.markdown) {
    std::printf(
        "| family | scalar | soak steps | failed | non-finite | E[θ₀²] | bad-input calls | refused "
        "| broke the promise | stuck RNG: steps Ok |\n|---|---|---|---|---|---|---|---|---|---|\n");
  }
  Rows rows;
  rows.markdown = o.markdown;
  if (o.do_float) run_all<float>(o, rows);
  if (o.do_double) run_all<double>(o, rows);
  if (rows.all.empty()) {
    std::fprintf(stderr, "sgmcmc_soak: no family named '%s'\n", o.only.c_str());
    return 2;
  }
  bool ok = true;
  for (const Row& r : rows.all) ok = ok && r.non_finite == 0 && r.broken == 0;
  return ok ? 0 : 1;
}
