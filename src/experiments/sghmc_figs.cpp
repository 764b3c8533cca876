// SPDX-License-Identifier: MIT
// sgmcmc_sghmc_figs: Figures 1–3 of Chen, Fox & Guestrin (2014), "Stochastic gradient Hamiltonian
// Monte Carlo", with the settings of the authors' Matlab code (MATH.md §5.2); every chain runs
// through the run driver (run/driver.hpp).
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "common/cli.hpp"
#include "common/density_grid.hpp"
#include "common/gnuplot.hpp"
#include "common/histogram.hpp"
#include "common/plots.hpp"
#include "common/table.hpp"
#include "sgmcmc/host/rng.hpp"
#include "sgmcmc/run/driver.hpp"
#include "sgmcmc/samplers/hmc.hpp"
#include "sgmcmc/samplers/sghmc.hpp"
#include "sgmcmc/samplers/sgld.hpp"

namespace {

namespace common = sgmcmc::common;
using common::format;
using sgmcmc::Vector;

constexpr const char* kUsage =
    "usage: sgmcmc_sghmc_figs [--out DIR] [--quick] [--seed N] [--no-plots] [--help]\n"
    "\n"
    "Reproduces Figures 1-3 of Chen, Fox & Guestrin (2014), 'Stochastic gradient Hamiltonian\n"
    "Monte Carlo', with the settings of the authors' Matlab code (shared MATH.md 5.2):\n"
    "  Fig. 1  double-well histograms: HMC with/without MH, naive SGHMC with/without MH, SGHMC;\n"
    "  Fig. 2  (theta, r) phase traces on U = theta^2/2;\n"
    "  Fig. 3  correlated 2-D Gaussian: covariance error vs autocorrelation time, SGLD and\n"
    "          SGHMC over step sizes (a), and their first 50 steps (b).\n"
    "Prints the tables, writes results.md and PNGs. See docs/experiments/sghmc-paper.md.\n"
    "\n"
    "  --out DIR   output directory (default out/sghmc_figs)\n"
    "  --quick     10x fewer samples/steps (seconds)\n"
    "  --seed N    base seed (default 20140601)\n"
    "  --no-plots  tables only\n"
    "\n"
    "Exit status: 0 success, 1 a step failed or an output could not be written, 2 bad arguments.\n";

struct Options {
  std::string out = "out/sghmc_figs";
  bool quick = false;
  bool plots = true;
  std::uint64_t seed = 20140601;
};

int parse(int argc, char** argv, Options& o) {
  sgmcmc::common::Args args(argc, argv, "sgmcmc_sghmc_figs", kUsage);
  while (args.next()) {
    if (args.is("--quick")) {
      o.quick = true;
    } else if (args.is("--no-plots")) {
      o.plots = false;
    } else if (!args.text("--out", o.out) && !args.count("--seed", o.seed)) {
      args.unknown();
    }
  }
  return args.status();
}

// ------------------------------------------------------------------------------ models

/// 1-D U with additive gradient noise N(0, σ²) from the model's own stream (fresh per gradient
/// call: every leapfrog step sees a new minibatch); potential() is the exact U (the MH test of
/// the "with MH" variants uses it, as in the authors' code).
struct Noisy1d {
  int kind = 0;  // 0: U = θ⁴ − 2θ² (Fig. 1); 1: U = θ²/2 (Fig. 2)
  double sd = 0.0;
  mutable sgmcmc::host::Rng rng{1, 1};
  template <class Theta>
  double potential(const Theta& t) const {
    const double x = t[0];
    return kind == 0 ? x * x * x * x - 2 * x * x : 0.5 * x * x;
  }
  template <class Theta, class Grad>
  void gradient(const Theta& t, Grad& g) const {
    const double x = t[0];
    g[0] = kind == 0 ? 4 * x * x * x - 4 * x : x;
    if (sd > 0) g[0] += sd * sgmcmc::normal<double>(rng);
  }
};

/// U = θᵀΣ⁻¹θ/2, Σ = [[1, 0.9], [0.9, 1]], gradient noise N(0, I) (Fig. 3).
struct Correlated2d {
  mutable sgmcmc::host::Rng rng{1, 1};
  template <class Theta, class Grad>
  void gradient(const Theta& t, Grad& g) const {
    const double k = 1.0 / (1.0 - 0.81);
    Vector<double, 2> e;
    rng.fill_normal(e);
    g[0] = k * (t[0] - 0.9 * t[1]) + e[0];
    g[1] = k * (t[1] - 0.9 * t[0]) + e[1];
  }
};

// ------------------------------------------------------------------------------ driver pieces

/// Run-driver hook: counts the accepted HMC transitions (z.extra() after each step).
struct AcceptCounter {
  long accepted = 0;
  template <class St>
  void after_step(std::uint64_t, const St& z) noexcept {
    accepted += z.extra().accepted ? 1 : 0;
  }
};

/// Run-driver hook: redraws the momentum of *z before every `every`-th step (steps 0, every,
/// 2 every, ...), the authors' refresh before each run of SGHMC steps. Keeps the first failure.
template <class S, class St>
struct MomentumRefresh {
  const S* sampler;
  St* z;
  sgmcmc::host::Rng* rng;
  std::uint64_t every;
  sgmcmc::Status status{};
  void before_step(std::uint64_t t) noexcept {
    if (t % every == 0 && status) status = sampler->refresh_momentum(*z, *rng);
  }
};

/// HMC's deterministic L-step leapfrog (no refresh, no test) in the shape the run driver steps:
/// the exact or noisy Hamiltonian flow of Fig. 2.
template <class H>
struct LeapfrogOnly {
  const H* hmc;
  template <class St, class Model, class Rng>
  sgmcmc::Status step(St& z, const Model& model, Rng&) const noexcept {
    return hmc->leapfrog(z, model);
  }
};

/// A sink that appends (θ₁, r₁) of every kept state.
struct PhaseSink {
  std::vector<double>* theta;
  std::vector<double>* r;
  template <class St>
  void operator()(const St& z, std::uint64_t) const {
    theta->push_back(z.position()[0]);
    r->push_back(z.momentum()[0]);
  }
};

/// A sink that appends every kept position (all coordinates).
struct PathSink {
  std::vector<double>* path;
  template <class St>
  void operator()(const St& z, std::uint64_t) const {
    const auto th = z.position();
    for (int d = 0; d < St::dim; ++d) path->push_back(th[d]);
  }
};

sgmcmc::RunPlan plan(long samples, long thin = 1) {
  return {0, static_cast<std::uint64_t>(samples), static_cast<std::uint64_t>(thin)};
}

// ------------------------------------------------------------------------------ Fig. 1

struct Fig1Row {
  std::string name;
  std::string color;
  common::Histogram hist{common::Axis{-3.0, 3.0, 60}};
  double kl = 0.0;
  double accept = -1.0;  // < 0: no MH
};

bool run_fig1(const Options& o, std::vector<Fig1Row>& rows, double& floor_kl) {
  const long samples = o.quick ? 8000 : 80000;
  const int run = 50;                      // steps per sample; r redrawn before each run
  const double h = 0.1, c = 3.0, v = 4.0;  // MATH.md §5.2: ∇Ũ = ∇U + N(0, 4), C = 3, m = 1
  auto pdf = [](double x) { return std::exp(-(x * x * x * x - 2 * x * x)); };
  const double z = 5.36516023783;
  const common::Histogram proto(common::Axis{-3.0, 3.0, 60});
  const std::vector<double> p = common::cell_masses_1d(proto, pdf, z);
  rows = {{"HMC, MH", "#1f77b4"},
          {"HMC, no MH", "#aec7e8"},
          {"naive SGHMC, MH", "#d62728"},
          {"naive SGHMC, no MH", "#ff9896"},
          {"SGHMC", "#2ca02c"}};
  for (std::size_t k = 0; k < rows.size(); ++k) {
    Noisy1d model;
    model.kind = 0;
    model.sd = k >= 2 ? std::sqrt(v) : 0.0;
    model.rng = sgmcmc::host::Rng(o.seed + k, 1);
    sgmcmc::host::Rng rng(o.seed + k, 0);
    if (k < 4) {
      // HMC (exact gradient) or naive SGHMC (noisy gradient): 50 leapfrog steps per proposal,
      // MH on the exact U or none.
      sgmcmc::HMC<double, 1> s({h, run, 1.0, k % 2 == 0});
      auto zst = s.start(Vector<double, 1>::Zero());
      AcceptCounter accepted;
      auto hist = [&](const auto& z, std::uint64_t) { rows[k].hist.add(z.position()[0]); };
      if (!sgmcmc::run(s, zst, model, rng, plan(samples), hist, accepted).status) return false;
      if (k % 2 == 0) rows[k].accept = static_cast<double>(accepted.accepted) / samples;
    } else {
      // SGHMC, kick–drift, B̂ = hV/2 = 0.2 in the paper's convention (V̂ = V = 4 here).
      sgmcmc::SGHMC<double, 1> s({h, c, 1.0});
      if (!s.set_gradient_noise(v)) return false;
      auto zst = s.start(Vector<double, 1>::Zero());
      MomentumRefresh<decltype(s), decltype(zst)> refresh{&s, &zst, &rng, run};
      auto hist = [&](const auto& z, std::uint64_t) { rows[k].hist.add(z.position()[0]); };
      if (!sgmcmc::run(s, zst, model, rng, plan(samples, run), hist, refresh).status ||
          !refresh.status) {
        return false;
      }
    }
    rows[k].kl = common::kl_true_vs_sample(p, rows[k].hist);
  }
  // floor: as many exact draws (inverse CDF on a fine grid)
  std::vector<double> cum(200001, 0.0);
  const double lo = -4.0, dx = 8.0 / 200000;
  for (int i = 0; i < 200000; ++i) {
    cum[static_cast<std::size_t>(i) + 1] =
        cum[static_cast<std::size_t>(i)] + pdf(lo + (i + 0.5) * dx) * dx;
  }
  for (double& q : cum) q /= cum.back();
  sgmcmc::host::Rng rng(o.seed, 77);
  common::Histogram hf(common::Axis{-3.0, 3.0, 60});
  for (long i = 0; i < samples; ++i) {
    const double u = (static_cast<double>(rng() >> 11) + 0.5) * 1.1102230246251565e-16;
    const auto it = std::upper_bound(cum.begin(), cum.end(), u);
    hf.add(lo + static_cast<double>(it - cum.begin() - 1) * dx);
  }
  floor_kl = common::kl_true_vs_sample(p, hf);
  return true;
}

// ------------------------------------------------------------------------------ Fig. 2

struct Trace {
  std::string name;
  std::string color;
  std::vector<double> theta{}, r{};
};

bool run_fig2(const Options& o, std::vector<Trace>& traces) {
  const int points = 300, run = 50;
  const double h = 0.1, c = 3.0, sd = 0.5;  // the authors' code: noise std 0.5 (MATH.md §5.2)
  traces = {{"noisy Hamiltonian", "#d62728"},
            {"noisy Hamiltonian, r resampled every 50 steps", "#ff7f0e"},
            {"SGHMC", "#2ca02c"},
            {"exact Hamiltonian", "#1f77b4"}};
  for (std::size_t k = 0; k < traces.size(); ++k) {
    Noisy1d model;
    model.kind = 1;
    model.sd = k == 3 ? 0.0 : sd;
    model.rng = sgmcmc::host::Rng(o.seed + 10 + k, 1);
    sgmcmc::host::Rng rng(o.seed + 10 + k, 0);
    if (k == 2) {
      sgmcmc::SGHMC<double, 1> s({h, c, 1.0});
      if (!s.set_gradient_noise(sd * sd)) return false;  // B̂ = σ²h/2 in the paper's convention
      auto z = s.start(Vector<double, 1>::Constant(1.0));
      const PhaseSink sink{&traces[k].theta, &traces[k].r};
      if (!sgmcmc::run(s, z, model, rng, plan(points, run), sink).status) return false;
    } else {
      sgmcmc::HMC<double, 1> s({h, run, 1.0, false});
      auto z = s.start(Vector<double, 1>::Constant(1.0));  // (θ, r)₀ = (1, 0)
      const PhaseSink sink{&traces[k].theta, &traces[k].r};
      const sgmcmc::Status st =
          k == 1 ? sgmcmc::run(s, z, model, rng, plan(points), sink).status
                 : sgmcmc::run(LeapfrogOnly<decltype(s)>{&s}, z, model, rng, plan(points), sink)
                       .status;
      if (!st) return false;
    }
  }
  return true;
}

// ------------------------------------------------------------------------------ Fig. 3

/// Autocorrelation time of a series, τ = 1 + 2 Σ_{k≥1} ρ_k summed until ρ_k < 0.05 (the authors'
/// rule), with ρ from an FFT of the zero-padded centred series.
double autocorr_time(const std::vector<double>& x) {
  std::size_t n2 = 1;
  while (n2 < 2 * x.size()) n2 <<= 1;
  std::vector<std::complex<double>> a(n2);
  double mean = 0.0;
  for (double v : x) mean += v / static_cast<double>(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) a[i] = x[i] - mean;
  auto fft = [n2](std::vector<std::complex<double>>& d, bool inverse) {
    for (std::size_t i = 1, j = 0; i < n2; ++i) {  // bit reversal
      std::size_t bit = n2 >> 1;
      for (; j & bit; bit >>= 1) j ^= bit;
      j ^= bit;
      if (i < j) std::swap(d[i], d[j]);
    }
    for (std::size_t len = 2; len <= n2; len <<= 1) {
      const double ang = 2 * 3.14159265358979323846 / static_cast<double>(len) * (inverse ? 1 : -1);
      const std::complex<double> w(std::cos(ang), std::sin(ang));
      for (std::size_t i = 0; i < n2; i += len) {
        std::complex<double> wk(1.0, 0.0);
        for (std::size_t k = 0; k < len / 2; ++k) {
          const std::complex<double> u = d[i + k], t = wk * d[i + k + len / 2];
          d[i + k] = u + t;
          d[i + k + len / 2] = u - t;
          wk *= w;
        }
      }
    }
  };
  fft(a, false);
  for (auto& v : a) v = std::complex<double>(std::norm(v), 0.0);
  fft(a, true);
  const double c0 = a[0].real();
  double tau = 1.0;
  for (std::size_t k = 1; k < x.size(); ++k) {
    const double rho = a[k].real() / c0;
    if (rho < 0.05) break;
    tau += 2 * rho;
  }
  return tau;
}

struct Fig3Point {
  std::string method;
  double step;     // η
  double alpha;    // SGHMC's α (0 for SGLD)
  double cov_err;  // mean |Σ̂_ij − Σ_ij|
  double tau;      // autocorrelation time, mean over the two coordinates
};

template <class S>
bool fig3_chain(const S& s, typename S::StateType z, long steps, std::uint64_t seed,
                Fig3Point& out) {
  Correlated2d model;
  model.rng = sgmcmc::host::Rng(seed, 1);
  sgmcmc::host::Rng rng(seed, 0);
  Eigen::Matrix2d m2 = Eigen::Matrix2d::Zero();
  Eigen::Vector2d m1 = Eigen::Vector2d::Zero();
  const long keep = std::min<long>(steps, 1L << 21);  // autocorrelation from the last 2^21 draws
  std::vector<double> x0, x1;
  x0.reserve(static_cast<std::size_t>(keep));
  x1.reserve(static_cast<std::size_t>(keep));
  auto moments = [&](const auto& st, std::uint64_t t) {
    const Eigen::Vector2d th = st.position();
    m1 += th;
    m2 += th * th.transpose();
    if (static_cast<long>(t) >= steps - keep) {
      x0.push_back(th[0]);
      x1.push_back(th[1]);
    }
  };
  if (!sgmcmc::run(s, z, model, rng, plan(steps), moments).status) return false;
  m1 /= static_cast<double>(steps);
  const Eigen::Matrix2d cov = m2 / static_cast<double>(steps) - m1 * m1.transpose();
  Eigen::Matrix2d sigma;
  sigma << 1.0, 0.9, 0.9, 1.0;
  out.cov_err = (cov - sigma).cwiseAbs().mean();
  out.tau = 0.5 * (autocorr_time(x0) + autocorr_time(x1));
  return true;
}

bool run_fig3(const Options& o, std::vector<Fig3Point>& pts, std::vector<double>& path_sgld,
              std::vector<double>& path_sghmc) {
  const long steps = o.quick ? 1000000 : 10000000;
  for (int i = 1; i <= 5; ++i) {
    // SGLD: θ ← θ − ηg + N(0, 2η(1 − ηV/2)), V = 1: h = η, D₀ = 1, V̂ = 1.
    const double eta = 0.18 * std::pow(0.8, i - 1);
    sgmcmc::SGLD<double, 2> sgld({eta, sgmcmc::Scaled<double>{1.0}});
    if (!sgld.set_gradient_noise(1.0)) return false;
    Fig3Point p{"SGLD", eta, 0.0, 0.0, 0.0};
    if (!fig3_chain(sgld, sgld.start(Vector<double, 2>::Zero()), steps, o.seed + 100 + i, p)) {
      return false;
    }
    pts.push_back(p);
  }
  for (int i = 1; i <= 5; ++i) {
    // SGHMC in (η, α) form: η = 0.05 s², α = 0.05 s, s = 0.6^(i−1); β̂ = ηV/2 (V̂ = 1);
    // h = √η, C = α/√η, m = 1; v₀ ~ N(0, η), i.e. r₀ ~ N(0, 1).
    const double s = std::pow(0.6, i - 1);
    const double eta = 0.05 * s * s, alpha = 0.05 * s;
    const auto params = sgmcmc::SGHMCParams<double>::from_momentum_sgd(eta, alpha);
    sgmcmc::SGHMC<double, 2> sghmc(params);
    if (!sghmc.set_gradient_noise(1.0)) return false;
    auto z = sghmc.start(Vector<double, 2>::Zero());
    sgmcmc::host::Rng r0(o.seed + 300 + i, 2);
    if (!sghmc.refresh_momentum(z, r0)) return false;
    Fig3Point p{"SGHMC", eta, alpha, 0.0, 0.0};
    if (!fig3_chain(sghmc, z, steps, o.seed + 200 + i, p)) return false;
    pts.push_back(p);
  }
  // Fig. 3b: the first 50 steps, η_SGLD = η_SGHMC = 0.05, α = 0.035, from θ₀ = 0.
  Correlated2d model;
  {
    sgmcmc::SGLD<double, 2> sgld({0.05, sgmcmc::Scaled<double>{1.0}});
    if (!sgld.set_gradient_noise(1.0)) return false;
    model.rng = sgmcmc::host::Rng(o.seed + 400, 1);
    sgmcmc::host::Rng rng(o.seed + 400, 0);
    auto z = sgld.start(Vector<double, 2>::Zero());
    path_sgld = {0.0, 0.0};
    if (!sgmcmc::run(sgld, z, model, rng, plan(50), PathSink{&path_sgld}).status) return false;
  }
  {
    sgmcmc::SGHMC<double, 2> sghmc(sgmcmc::SGHMCParams<double>::from_momentum_sgd(0.05, 0.035));
    if (!sghmc.set_gradient_noise(1.0)) return false;
    model.rng = sgmcmc::host::Rng(o.seed + 401, 1);
    sgmcmc::host::Rng rng(o.seed + 401, 0);
    auto z = sghmc.start(Vector<double, 2>::Zero());
    if (!sghmc.refresh_momentum(z, rng)) return false;
    path_sghmc = {0.0, 0.0};
    if (!sgmcmc::run(sghmc, z, model, rng, plan(50), PathSink{&path_sghmc}).status) return false;
  }
  return true;
}

// ------------------------------------------------------------------------------ plots

bool plot_fig2(const common::Gnuplot& gp, const std::string& dir, const std::vector<Trace>& tr) {
  std::string s = gp.png_terminal(900, 800) + "\nset output 'sghmc_fig2_phase.png'\n";
  s += "set title 'SGHMC paper Fig. 2: (θ, r) every 50 steps, U = θ^2/2' noenhanced\n";
  s += "set xlabel 'θ'\nset ylabel 'r'\nset size ratio -1\nset key outside bottom center\n";
  s += "set xrange [-8:8]\nset yrange [-8:8]\nset grid\nplot ";
  for (std::size_t k = 0; k < tr.size(); ++k) {
    const std::string file = format("sghmc_fig2_%zu.dat", k);
    if (!common::write_columns(dir + "/" + file, "theta r", {tr[k].theta, tr[k].r})) return false;
    s += format("'%s' using 1:2 with points pt 7 ps 0.5 lc rgb '%s' title '%s'%s", file.c_str(),
                tr[k].color.c_str(), tr[k].name.c_str(), k + 1 < tr.size() ? ", " : "\n");
  }
  return common::write_text(dir + "/sghmc_fig2_phase.gp", s) && gp.run(dir, "sghmc_fig2_phase.gp");
}

bool plot_fig3a(const common::Gnuplot& gp, const std::string& dir,
                const std::vector<Fig3Point>& pts) {
  std::vector<double> t1, e1, t2, e2;
  for (const auto& p : pts) {
    (p.method == "SGLD" ? t1 : t2).push_back(p.tau);
    (p.method == "SGLD" ? e1 : e2).push_back(p.cov_err);
  }
  if (!common::write_columns(dir + "/sghmc_fig3a_sgld.dat", "tau cov_err", {t1, e1}) ||
      !common::write_columns(dir + "/sghmc_fig3a_sghmc.dat", "tau cov_err", {t2, e2})) {
    return false;
  }
  std::string s = gp.png_terminal(800, 600) + "\nset output 'sghmc_fig3a.png'\n";
  s += "set title 'SGHMC paper Fig. 3a: correlated 2-D Gaussian' noenhanced\n";
  s += "set xlabel 'autocorrelation time'\nset ylabel 'mean |covariance error|'\n";
  s += "set logscale xy\nset grid\nset key top right\n";
  s += "plot 'sghmc_fig3a_sgld.dat' using 1:2 with linespoints lw 2 pt 7 lc rgb '#1f77b4' title "
       "'SGLD', 'sghmc_fig3a_sghmc.dat' using 1:2 with linespoints lw 2 pt 5 lc rgb '#d62728' "
       "title 'SGHMC'\n";
  return common::write_text(dir + "/sghmc_fig3a.gp", s) && gp.run(dir, "sghmc_fig3a.gp");
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (const int rc = parse(argc, argv, o); rc != 0) return rc == 1 ? 0 : 2;
  std::error_code ec;
  std::filesystem::create_directories(o.out, ec);
  if (ec) {
    std::fprintf(stderr, "sgmcmc_sghmc_figs: cannot create %s\n", o.out.c_str());
    return 1;
  }
  std::printf(
      "SGHMC paper (Chen, Fox & Guestrin 2014), Figures 1-3, settings of the authors' code"
      " (MATH.md 5.2)%s.\n\n",
      o.quick ? ", --quick: 10x shorter" : "");

  std::vector<Fig1Row> f1;
  double floor_kl = 0.0;
  if (!run_fig1(o, f1, floor_kl)) {
    std::fprintf(stderr, "sgmcmc_sghmc_figs: Fig. 1 failed\n");
    return 1;
  }
  common::Table t1;
  t1.add_column("Fig. 1: U = θ⁴ − 2θ², ∇Ũ = ∇U + N(0, 4)", common::Table::Align::Left);
  t1.add_column("KL(true ‖ sample)");
  t1.add_column("MH acceptance");
  for (const auto& r : f1) {
    t1.add_row({r.name, format("%.4f", r.kl), r.accept < 0 ? "-" : format("%.3f", r.accept)});
  }
  t1.add_rule();
  t1.add_row({"exact i.i.d. draws (same number)", format("%.4f", floor_kl), ""});
  std::printf("%s\n", t1.text().c_str());

  std::vector<Trace> f2;
  if (!run_fig2(o, f2)) {
    std::fprintf(stderr, "sgmcmc_sghmc_figs: Fig. 2 failed\n");
    return 1;
  }
  common::Table t2;
  t2.add_column("Fig. 2: U = θ²/2, (θ, r)₀ = (1, 0)", common::Table::Align::Left);
  t2.add_column("H at point 100");
  t2.add_column("H at point 300");
  t2.add_column("mean H over 300");
  for (const auto& tr : f2) {
    auto hh = [&](std::size_t i) {
      return 0.5 * tr.theta[i] * tr.theta[i] + 0.5 * tr.r[i] * tr.r[i];
    };
    double mean = 0.0;
    for (std::size_t i = 0; i < tr.theta.size(); ++i)
      mean += hh(i) / static_cast<double>(tr.theta.size());
    t2.add_row({tr.name, format("%.3f", hh(99)), format("%.3f", hh(299)), format("%.3f", mean)});
  }
  std::printf("%s(stationary H = θ²/2 + r²/2 has mean 1; the exact Hamiltonian keeps H = 0.5)\n\n",
              t2.text().c_str());

  std::vector<Fig3Point> f3;
  std::vector<double> path_sgld, path_sghmc;
  if (!run_fig3(o, f3, path_sgld, path_sghmc)) {
    std::fprintf(stderr, "sgmcmc_sghmc_figs: Fig. 3 failed\n");
    return 1;
  }
  common::Table t3;
  t3.add_column("Fig. 3a", common::Table::Align::Left);
  t3.add_column("η");
  t3.add_column("α");
  t3.add_column("autocorrelation time");
  t3.add_column("mean |cov. error|");
  for (const auto& p : f3) {
    t3.add_row({p.method, format("%.4g", p.step), p.alpha > 0 ? format("%.4g", p.alpha) : "-",
                format("%.1f", p.tau), format("%.4f", p.cov_err)});
  }
  std::printf("%s\n", t3.text().c_str());

  const std::string md = "# SGHMC paper, Figures 1-3 (sgmcmc_sghmc_figs" +
                         std::string(o.quick ? " --quick" : "") + ")\n\n" + t1.markdown() + "\n" +
                         t2.markdown() + "\n" + t3.markdown();
  if (!common::write_text(o.out + "/results.md", md)) return 1;

  if (o.plots) {
    const common::Gnuplot gp = common::Gnuplot::detect();
    if (!gp.found) {
      std::printf("gnuplot not found: no plots.\n");
      return 0;
    }
    std::string err;
    std::vector<common::Panel> panels;
    for (const auto& r : f1) {
      common::Panel pn;
      pn.title = r.name;
      pn.color = r.color;
      pn.note =
          r.accept < 0 ? format("KL %.4f", r.kl) : format("KL %.4f, acc. %.2f", r.kl, r.accept);
      pn.hist = &r.hist;
      panels.push_back(pn);
    }
    common::Figure fig;
    fig.name = "sghmc_fig1_double_well";
    fig.title = "SGHMC paper Fig. 1: U = θ^4 − 2θ^2, gradient noise N(0, 4) (black: true density)";
    fig.rows = 2;
    fig.cols = 3;
    fig.width = 1400;
    fig.height = 800;
    bool ok = common::plot_histograms(
        gp, o.out, fig, panels,
        [](double x) { return std::exp(-(x * x * x * x - 2 * x * x)) / 5.36516023783; }, &err);
    ok = ok && plot_fig2(gp, o.out, f2) && plot_fig3a(gp, o.out, f3);
    if (ok) {
      std::vector<common::Panel> pp(2);
      pp[0].title = "SGLD, η = 0.05";
      pp[0].color = "#1f77b4";
      pp[0].points = &path_sgld;
      pp[1].title = "SGHMC, η = 0.05, α = 0.035";
      pp[1].color = "#d62728";
      pp[1].points = &path_sghmc;
      common::Figure f;
      f.name = "sghmc_fig3b_paths";
      f.title = "SGHMC paper Fig. 3b: first 50 steps on N(0, [[1, 0.9], [0.9, 1]])";
      f.rows = 1;
      f.cols = 2;
      f.width = 1100;
      f.height = 520;
      f.x0 = -3.0;
      f.x1 = 3.0;
      f.y0 = -3.0;
      f.y1 = 3.0;
      f.xlabel = "θ₁";
      f.ylabel = "θ₂";
      const common::DensityGrid grid(
          [](double x, double y) { return std::exp(-(x * x - 1.8 * x * y + y * y) / (2 * 0.19)); },
          -3.0, 3.0, 121, -3.0, 3.0, 121);
      ok = common::plot_over_contours(gp, o.out, f, pp, grid, grid.hpd_levels({0.5, 0.9, 0.99}),
                                      "50/90/99% HPD", common::PointStyle::Path, &err);
    }
    if (!ok) {
      std::fprintf(stderr, "sgmcmc_sghmc_figs: plotting failed %s\n", err.c_str());
      return 1;
    }
    std::printf(
        "Wrote %s/{results.md, sghmc_fig1_double_well.png, sghmc_fig2_phase.png, "
        "sghmc_fig3a.png, sghmc_fig3b_paths.png}\n",
        o.out.c_str());
  }
  return 0;
}
