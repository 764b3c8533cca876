// SPDX-License-Identifier: MIT
// sgmcmc_demo: every sampler on the recipe paper's three targets (MATH.md §5.1); prints KL,
// moment-error and timing tables against exact oracles and writes gnuplot PNGs (docs/DEMO.md).
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "common/cli.hpp"
#include "common/density_grid.hpp"
#include "common/gnuplot.hpp"
#include "common/histogram.hpp"
#include "common/plots.hpp"
#include "common/quadrature.hpp"
#include "common/table.hpp"
#include "demo/chain.hpp"
#include "demo/convergence.hpp"
#include "demo/targets.hpp"

namespace {

using sgmcmc::common::format;
namespace common = sgmcmc::common;
namespace demo = sgmcmc::demo;

constexpr const char* kUsage =
    "usage: sgmcmc_demo [--out DIR] [--quick] [--seed N] [--step-scale S] [--gradient-noise V]\n"
    "                   [--no-plots] [--help]\n"
    "\n"
    "Runs SGLD, SGHMC, SGNHT, HMC, SGD and SGD-momentum on three targets with known laws\n"
    "(1-D Gaussian, 1-D double well, 2-D banana; MATH.md 5.1), prints for each sampler the KL\n"
    "divergence from the exact law, the Monte-Carlo floor of as many exact i.i.d. draws, moment\n"
    "errors and ns/step, and writes PNG plots with gnuplot. See docs/DEMO.md.\n"
    "\n"
    "  --out DIR        directory for plots, data and results.md (default out/demo)\n"
    "  --quick          20000 samples per chain instead of 200000 (a few seconds)\n"
    "  --seed N         base seed of every random stream (default 20240601)\n"
    "  --step-scale S   multiply every step size by S (SGD-momentum: eta by S^2) to see the\n"
    "                   discretisation bias grow; a step size <= 0 is rejected by the samplers\n"
    "  --gradient-noise V  variance of the additive gradient noise (default 1; 0: exact\n"
    "                   gradients); the SG samplers are told V-hat = V\n"
    "  --no-plots       tables only\n"
    "  --help           this text\n"
    "\n"
    "Exit status: 0 success, 1 a sampler returned a failed Status or an output failed, 2 bad\n"
    "arguments.\n";

struct Options {
  std::string out = "out/demo";
  bool quick = false;
  bool plots = true;
  std::uint64_t seed = 20240601;
  double step_scale = 1.0;
  double gradient_noise = 1.0;
};

/// Parses argv; returns 0 to run, 1 after --help, 2 on a bad argument (message printed).
int parse(int argc, char** argv, Options& o) {
  sgmcmc::common::Args args(argc, argv, "sgmcmc_demo", kUsage);
  while (args.next()) {
    if (args.is("--quick")) {
      o.quick = true;
    } else if (args.is("--no-plots")) {
      o.plots = false;
    } else if (!args.text("--out", o.out) && !args.count("--seed", o.seed) &&
               !args.number("--step-scale", o.step_scale) &&
               !args.number("--gradient-noise", o.gradient_noise, 0.0)) {
      args.unknown();
    }
  }
  return args.status();
}

/// One colour per table row (row 0: exact i.i.d.), shared by every figure.
const char* color_of(std::size_t row) {
  static const char* const colors[] = {"#555555", "#1f77b4", "#ff7f0e", "#2ca02c",
                                       "#d62728", "#9467bd", "#8c564b"};
  return colors[row % (sizeof colors / sizeof colors[0])];
}

/// Everything the tables and figures need about one target.
struct TargetResult {
  std::string key;
  std::string title;
  int dim = 1;
  demo::MomentOracle m1{};
  demo::MomentOracle m2{};
  std::vector<demo::ChainResult> chains;
  std::vector<demo::Convergence> checks;  // same indexing as chains
  std::vector<double> exact;              // exact i.i.d. draws, as many as each chain keeps
  std::vector<common::Histogram> hists;   // [0] exact draws, [1 + k] chain k
  std::vector<double> kl, err1, err2;     // same indexing as hists
  double z_oracle = 0.0;
  double z_quadrature = 0.0;
  double outside_mass = 0.0;  // true mass outside the histogram grid
  double floor = 0.0;         // mean KL of kFloorSets sets of exact draws
  double floor_sd = 0.0;      // and its standard deviation over the sets
  int grads_per_sample = 0;
};

/// Sets of exact i.i.d. draws averaged for the Monte-Carlo floor (one set's KL varies by about
/// ±sqrt(2 / cells) relative, ±18% for 60 bins).
constexpr int kFloorSets = 10;

/// The demo's histogram grid for a target: MATH.md §5.3's bins for 1-D; 0.25 × 0.15 cells for
/// the banana (24 × 30 on [-3, 3] × [-2.4, 2.1]); plus the outside cell.
template <class Target>
common::Histogram make_histogram() {
  if constexpr (Target::dim == 1) {
    return common::Histogram(common::Axis{-3.0, 3.0, 60});
  } else {
    return common::Histogram(common::Axis{-3.0, 3.0, 24}, common::Axis{-2.4, 2.1, 30});
  }
}

/// Sample mean of f over n points of dimension dim, minus the exact value.
template <class F>
double moment_error(const std::vector<double>& s, int dim, F f, double exact) {
  const std::size_t n = s.size() / static_cast<std::size_t>(dim);
  double sum = 0.0;
  for (std::size_t i = 0; i < n; ++i) sum += f(&s[i * static_cast<std::size_t>(dim)]);
  return sum / static_cast<double>(n) - exact;
}

/// Runs every sampler on Target, the exact i.i.d. reference and the KL/moment analysis.
/// False with `error` set when a sampler returned a failed Status.
template <class Target>
bool run_target(const demo::Plan& plan, std::uint64_t index, TargetResult& res,
                std::string& error) {
  constexpr int D = Target::dim;
  res.key = Target::key;
  res.title = Target::title;
  res.dim = D;
  res.m1 = Target::moment1;
  res.m2 = Target::moment2;
  res.z_oracle = Target::normaliser;
  res.grads_per_sample = Target::settings.grads_per_sample;

  // True cell masses by quadrature, and a check of the oracle's normaliser.
  const common::GaussLegendre rule(16);
  common::Histogram proto = make_histogram<Target>();
  std::vector<double> masses;
  if constexpr (D == 1) {
    masses = common::cell_masses_1d(proto, Target::density, Target::normaliser);
    res.z_quadrature = rule.integrate_composite(Target::density, -8.0, 8.0, 64);
  } else {
    masses = common::cell_masses_2d(proto, Target::density, Target::normaliser);
    double z = 0.0;
    const int panels = 48;
    const double lo = -6.0;
    const double w = 12.0 / panels;
    for (int i = 0; i < panels; ++i) {
      for (int j = 0; j < panels; ++j) {
        z += rule.integrate2(Target::density, lo + i * w, lo + (i + 1) * w, lo + j * w,
                             lo + (j + 1) * w);
      }
    }
    res.z_quadrature = z;
  }
  res.outside_mass = masses.back();

  for (std::size_t k = 0; k < std::size(demo::kAllKinds); ++k) {
    const demo::Kind kind = demo::kAllKinds[k];
    res.chains.push_back(
        demo::run_chain<Target>(kind, plan, index * std::size(demo::kAllKinds) + k));
    const demo::ChainResult& c = res.chains.back();
    if (!c.status) {
      error = format("%s on the %s target failed (%s): %s", demo::kind_name(kind), Target::key,
                     c.failure.c_str(), c.status.message());
      return false;
    }
    res.checks.push_back(demo::check_convergence<Target>(kind, plan, index));
    const demo::Convergence& v = res.checks.back();
    if (!v.status) {
      error = format("%s's convergence check on the %s target failed (%s): %s",
                     demo::kind_name(kind), Target::key, v.failure.c_str(), v.status.message());
      return false;
    }
  }

  // Sets of as many exact i.i.d. draws as each chain keeps: the Monte-Carlo floor is their mean
  // KL; the first set also stands for "exact draws" in the moment columns and the plots.
  sgmcmc::host::Rng rng(plan.seed, 1000 + index);
  std::vector<double> set(static_cast<std::size_t>(plan.samples) * D, 0.0);
  std::vector<double> floors;
  for (int k = 0; k < kFloorSets; ++k) {
    for (long i = 0; i < plan.samples; ++i) {
      Target::exact_draw(rng, &set[static_cast<std::size_t>(i) * D]);
    }
    common::Histogram h = proto;
    h.clear();
    h.add_all(set.data(), set.size() / D);
    floors.push_back(common::kl_true_vs_sample(masses, h));
    if (k == 0) res.exact = set;
  }
  for (double f : floors) res.floor += f / kFloorSets;
  for (double f : floors) res.floor_sd += (f - res.floor) * (f - res.floor) / (kFloorSets - 1);
  res.floor_sd = std::sqrt(res.floor_sd);

  auto analyse = [&](const std::vector<double>& s) {
    common::Histogram h = proto;
    h.clear();
    h.add_all(s.data(), s.size() / D);
    res.kl.push_back(common::kl_true_vs_sample(masses, h));
    res.err1.push_back(moment_error(s, D, Target::f1, Target::moment1.exact));
    res.err2.push_back(moment_error(s, D, Target::f2, Target::moment2.exact));
    res.hists.push_back(std::move(h));
  };
  analyse(res.exact);
  for (const auto& c : res.chains) analyse(c.samples);
  return true;
}

std::string sci(double x) {
  return format("%.2e", x);
}
/// Signed, 4 decimals, no "-0.0000".
std::string err4(double x) {
  return format("%+.4f", std::abs(x) < 5e-5 ? 0.0 : x);
}

/// The per-target results table (also returned as Markdown in *md).
std::string results_table(const TargetResult& r, long samples, std::string* md) {
  common::Table t;
  using A = common::Table::Align;
  t.add_column("sampler", A::Left);
  t.add_column("KL");
  t.add_column("KL/floor");
  t.add_column(std::string(r.m1.label) + " err");
  t.add_column(std::string(r.m2.label) + " err");
  t.add_column("R̂ (4)");
  t.add_column("ESS (4)");
  t.add_column("ns/step");
  t.add_column("∇U/step");
  t.add_column("note", A::Left);
  const double floor = r.floor;
  t.add_row({"exact i.i.d.", sci(floor), "1.0", err4(r.err1[0]), err4(r.err2[0]), "-", "-", "-",
             "-",
             format("floor: mean KL of %d sets of N draws (sd %.1e)", kFloorSets, r.floor_sd)});
  t.add_rule();
  for (std::size_t k = 0; k < r.chains.size(); ++k) {
    const demo::ChainResult& c = r.chains[k];
    std::string note = "noisy ∇U, V̂ = V correction";
    if (c.kind == demo::Kind::HMC) {
      note = format("exact ∇U, acceptance %.3f", c.accept_rate);
    } else if (demo::is_optimiser(c.kind)) {
      note = "optimiser (T = 0): KL expected huge";
    }
    const demo::Convergence& v = r.checks[k];
    t.add_row({demo::kind_name(c.kind), sci(r.kl[k + 1]), format("%.1f", r.kl[k + 1] / floor),
               err4(r.err1[k + 1]), err4(r.err2[k + 1]), v.ran ? format("%.3f", v.max_rhat) : "-",
               v.ran ? format("%.0f", v.min_ess) : "-", format("%.1f", c.ns_per_step),
               format("%d", c.grads_per_step), note});
  }
  long check_draws = 0;
  for (const demo::Convergence& v : r.checks) check_draws = v.ran ? v.draws_per_chain : check_draws;
  const std::string se =
      format(
          "i.i.d. standard errors for N = %ld: %s ±%.4f, %s ±%.4f (chains are autocorrelated: "
          "expect larger errors)\n",
          samples, r.m1.label, std::sqrt(r.m1.variance / samples), r.m2.label,
          std::sqrt(r.m2.variance / samples)) +
      format(
          "R̂ (4), ESS (4): %d more chains of the sampler from overdispersed starts, stepped "
          "together by one Batch (docs/chains.md), %ld kept draws each: the largest split R̂ "
          "and the smallest summed ESS over the coordinates (R̂ ≤ 1.01: no sign of "
          "non-convergence)\n",
          demo::kCheckChains, check_draws);
  if (md) *md = t.markdown() + "\n" + se;
  return t.text() + se;
}

/// Histogram panels for a 1-D target: exact draws, then each sampler.
bool plot_1d(const common::Gnuplot& gp, const std::string& dir, const TargetResult& r,
             const std::function<double(double)>& pdf, const demo::Plan& plan,
             const std::string& target_formula, std::string* error) {
  std::vector<common::Panel> panels;
  for (std::size_t k = 0; k < r.hists.size(); ++k) {
    common::Panel p;
    p.hist = &r.hists[k];
    p.color = color_of(k);
    if (k == 0) {
      p.title = format("exact i.i.d. draws   KL %.1e (floor %.1e)", r.kl[0], r.floor);
    } else {
      const demo::ChainResult& c = r.chains[k - 1];
      p.title = format("%s   KL %.1e = %.3g × floor", demo::kind_name(c.kind), r.kl[k],
                       r.kl[k] / r.floor);
      if (demo::is_optimiser(c.kind)) {
        p.free_y = true;
        p.note = "optimiser:\ncollapses\nto a mode";
      } else if (c.kind == demo::Kind::HMC) {
        p.note = "exact gradient + Metropolis";
      } else {
        p.note = "noisy gradient, V̂ = V";
      }
    }
    panels.push_back(p);
  }
  common::Figure fig;
  fig.name = r.key + "_hist";
  fig.title = "Sampled histograms against the exact density: " + r.title;
  fig.text = format(
      "Target: %s\n\n%ld samples per chain, one every\n%d gradient evaluations "
      "(after burn-in)\n\nSG samplers and optimisers see\ng = ∇U + N(0, V), V = %g\n\n"
      "bins of 0.1 on [-3, 3]\nKL(exact ‖ sample), empty bin = ½ draw",
      target_formula.c_str(), plan.samples, r.grads_per_sample, plan.gradient_noise);
  return common::plot_histograms(gp, dir, fig, panels, pdf, error);
}

/// Banana figures: the first steps of each chain, and a scatter of kept samples, over contours.
bool plot_banana(const common::Gnuplot& gp, const std::string& dir, const TargetResult& r,
                 const demo::Plan& plan, std::string* error) {
  const common::DensityGrid grid(demo::Banana::density, -3.2, 3.2, 257, -2.6, 2.4, 201);
  const std::vector<double> levels = grid.hpd_levels({0.5, 0.9, 0.99});
  const std::string contour_title = "exact: 50/90/99% regions";

  std::vector<common::Panel> paths;
  for (std::size_t k = 0; k < r.chains.size(); ++k) {
    const demo::ChainResult& c = r.chains[k];
    common::Panel p;
    p.title = format("%s: first %d %s", demo::kind_name(c.kind), plan.path_steps,
                     c.kind == demo::Kind::HMC ? "transitions" : "steps");
    p.color = color_of(k + 1);
    p.points = &c.path;
    if (c.kind == demo::Kind::HMC) {
      p.note = format("each of L = %d leapfrog steps", demo::Banana::settings.hmc_leapfrog);
    } else if (demo::is_optimiser(c.kind)) {
      p.note = "optimiser";
    }
    paths.push_back(p);
  }
  common::Figure fp;
  fp.name = "banana_paths";
  fp.title = format("Banana: sample paths from θ = (%g, %g) over the exact density's contours",
                    demo::Banana::start[0], demo::Banana::start[1]);
  fp.rows = 2;
  fp.cols = 3;
  fp.width = 1500;
  fp.height = 950;
  fp.xlabel = "θ₁";
  fp.ylabel = "θ₂";
  fp.x0 = -3.2;
  fp.x1 = 3.2;
  fp.y0 = -2.6;
  fp.y1 = 3.1;  // room for the key above the banana
  if (!common::plot_over_contours(gp, dir, fp, paths, grid, levels, contour_title,
                                  common::PointStyle::Path, error)) {
    return false;
  }

  std::vector<common::Panel> scatter;
  for (std::size_t k = 0; k <= r.chains.size(); ++k) {
    common::Panel p;
    p.color = color_of(k);
    p.max_points = 3000;
    if (k == 0) {
      p.title = format("exact i.i.d. draws   KL %.1e (floor %.1e)", r.kl[0], r.floor);
      p.points = &r.exact;
    } else {
      const demo::ChainResult& c = r.chains[k - 1];
      p.title = format("%s   KL %.1e = %.3g × floor", demo::kind_name(c.kind), r.kl[k],
                       r.kl[k] / r.floor);
      p.points = &c.samples;
      if (demo::is_optimiser(c.kind)) p.note = "optimiser";
    }
    scatter.push_back(p);
  }
  common::Figure fs = fp;
  fs.name = "banana_scatter";
  fs.title = "Banana: kept samples (at most 3000 shown, evenly spaced) over the exact contours";
  fs.rows = 2;
  fs.cols = 4;
  fs.width = 1800;
  fs.height = 900;
  fs.text = format(
      "Target: U = θ₁⁴/10 + (4(θ₂+1.2) - θ₁²)²/2\n\n%ld samples per chain, one every\n"
      "%d gradient evaluations (after burn-in)\n\nSG samplers and optimisers see\n"
      "g = ∇U + N(0, V I), V = %g\n\nKL on 0.25 × 0.15 cells over\n[-3, 3] × [-2.4, 2.1]",
      plan.samples, r.grads_per_sample, plan.gradient_noise);
  return common::plot_over_contours(gp, dir, fs, scatter, grid, levels, contour_title,
                                    common::PointStyle::Scatter, error);
}

/// The settings of every chain, one row per (target, sampler).
std::string settings_table(const std::vector<TargetResult>& results, std::string* md) {
  common::Table t;
  using A = common::Table::Align;
  t.add_column("target", A::Left);
  t.add_column("sampler", A::Left);
  t.add_column("parameters", A::Left);
  t.add_column("thin");
  t.add_column("steps");
  t.add_column("wall s");
  for (std::size_t i = 0; i < results.size(); ++i) {
    if (i) t.add_rule();
    for (const auto& c : results[i].chains) {
      t.add_row({results[i].key, demo::kind_name(c.kind), c.params, format("%ld", c.thin),
                 format("%ld", c.steps), format("%.2f", c.seconds)});
    }
  }
  if (md) *md = t.markdown();
  return t.text();
}

int run(const Options& opt) {
  const std::uint64_t t_start = sgmcmc::host::Clock::ticks();
  demo::Plan plan;
  plan.seed = opt.seed;
  plan.step_scale = opt.step_scale;
  plan.gradient_noise = opt.gradient_noise;
  if (opt.quick) {
    plan.samples = 20000;
    plan.burn_in_samples = 1000;
  }

  std::error_code ec;
  std::filesystem::create_directories(opt.out, ec);
  if (ec) {
    std::fprintf(stderr, "sgmcmc_demo: cannot create %s: %s\n", opt.out.c_str(),
                 ec.message().c_str());
    return 1;
  }

  common::Gnuplot gp;
  if (opt.plots) {
    gp = common::Gnuplot::detect();
    if (!gp.found) {
      std::fprintf(stderr,
                   "sgmcmc_demo: gnuplot not found on the PATH: no plots will be written (the "
                   "tables are printed anyway). Install it with `apt-get install gnuplot-nox`, "
                   "or run scripts/demo, which does.\n");
    }
  }

  std::printf("sgmcmc demo: 6 samplers × 3 targets, double precision, %s run\n",
              opt.quick ? "quick" : "full");
  std::printf("  %ld kept samples per chain; burn-in %ld sample intervals; step scale %g\n",
              plan.samples, plan.burn_in_samples, plan.step_scale);
  std::printf(
      "  seed %llu: chain k (= 6 × target + sampler) draws its noise from\n"
      "  host::Rng(seed, 2k) and its gradient noise from host::Rng(seed, 2k + 1); the\n"
      "  exact i.i.d. draws of target t come from host::Rng(seed, 1000 + t)\n",
      static_cast<unsigned long long>(plan.seed));
  std::printf(
      "  gradient noise (MATH.md 5.3a): SGLD, SGHMC, SGNHT, SGD and SGD-momentum see\n"
      "  g = ∇U(θ) + N(0, V I), V = %g, a fresh draw per evaluation; the samplers are\n"
      "  told V̂ = V (noise N(0, h(2D - hV̂))). HMC uses the exact ∇U and U (its\n"
      "  Metropolis test needs them). Every chain gets the same number of gradient\n"
      "  evaluations per kept sample (20 in 1-D, 50 for the banana).\n\n",
      plan.gradient_noise);
  std::fflush(stdout);

  std::vector<TargetResult> results(3);
  std::string error;
  bool ok = run_target<demo::Gaussian1D>(plan, 0, results[0], error) &&
            run_target<demo::DoubleWell>(plan, 1, results[1], error) &&
            run_target<demo::Banana>(plan, 2, results[2], error);
  if (!ok) {
    std::fprintf(stderr, "sgmcmc_demo: %s\n", error.c_str());
    return 1;
  }

  std::string md_settings;
  std::printf(
      "Settings (thin = steps between kept samples; steps include burn-in; wall s =\n"
      "seconds for the whole chain)\n%s\n",
      settings_table(results, &md_settings).c_str());
  std::string md = "# sgmcmc demo results\n\n## Settings\n\n" + md_settings + "\n";

  std::printf(
      "Results: KL(exact ‖ sample) on fixed bins with exact masses by quadrature; the\n"
      "floor row is the KL of as many exact i.i.d. draws. ns/step is wall time per\n"
      "step (per transition for HMC) including the model gradient and the emulated\n"
      "gradient noise. SGD and SGD-momentum are optimisers (zero temperature, MATH.md\n"
      "2.3): they collapse to a mode, so their KL is expected to be huge.\n\n");
  for (const auto& r : results) {
    std::string md_table;
    std::printf("%s   [quadrature Z = %.10g, oracle %.10g; exact mass outside the grid %.2e]\n",
                r.title.c_str(), r.z_quadrature, r.z_oracle, r.outside_mass);
    std::printf("%s\n", results_table(r, plan.samples, &md_table).c_str());
    md += "## " + r.title + "\n\n" + md_table + "\n";
  }

  bool plots_ok = true;
  if (opt.plots && gp.found) {
    std::string perr;
    const std::string dir = opt.out;
    plots_ok =
        plot_1d(
            gp, dir, results[0],
            [](double x) { return demo::Gaussian1D::density(x) / demo::Gaussian1D::normaliser; },
            plan, "U = θ²/2", &perr) &&
        plot_1d(
            gp, dir, results[1],
            [](double x) { return demo::DoubleWell::density(x) / demo::DoubleWell::normaliser; },
            plan, "U = θ⁴ - 2θ²", &perr) &&
        plot_banana(gp, dir, results[2], plan, &perr);
    if (!plots_ok) {
      std::fprintf(stderr, "sgmcmc_demo: plotting failed: %s\n", perr.c_str());
    } else {
      std::printf(
          "Plots (%s, %s): %s/{gaussian_hist,double_well_hist,banana_paths,"
          "banana_scatter}.png\n",
          gp.version.c_str(), gp.cairo ? "pngcairo" : "png", opt.out.c_str());
    }
  }
  if (!common::write_text(opt.out + "/results.md", md)) {
    std::fprintf(stderr, "sgmcmc_demo: cannot write %s/results.md\n", opt.out.c_str());
    return 1;
  }
  const double seconds = static_cast<double>(sgmcmc::host::Clock::ticks() - t_start) /
                         static_cast<double>(sgmcmc::host::Clock::ticks_per_second());
  std::printf("Tables also in %s/results.md. Total time %.1f s.\n", opt.out.c_str(), seconds);
  return plots_ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  const int p = parse(argc, argv, opt);
  if (p == 1) return 0;
  if (p != 0) return p;
  return run(opt);
}
