// SPDX-License-Identifier: MIT
// sgmcmc_multiwell: the SGMG-style multiple-well experiment (MATH.md §3.7) — SGNHT, SGMGT and
// SGMGT-D (a = 1, 2) against the quadrature truth: TV, KL, mode visits; a table and gnuplot PNGs.
// Every chain runs through the run driver (run/driver.hpp), its statistics gathered by the sink.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "common/cli.hpp"
#include "common/gnuplot.hpp"
#include "common/histogram.hpp"
#include "common/plots.hpp"
#include "common/quadrature.hpp"
#include "common/table.hpp"
#include "sgmcmc/host/rng.hpp"
#include "sgmcmc/run/driver.hpp"
#include "sgmcmc/samplers/sgmgt.hpp"
#include "sgmcmc/samplers/sgnht.hpp"

namespace {

namespace common = sgmcmc::common;
using common::format;
using V1 = sgmcmc::Vector<double, 1>;

constexpr const char* kUsage =
    "usage: sgmcmc_multiwell [--out DIR] [--steps N] [--chains K] [--step-size H] [--noise V]\n"
    "                        [--resample R] [--seed S] [--c-seed S] [--quick] [--no-plots]\n"
    "\n"
    "The SGMG-style multiple-well experiment (MATH.md 3.7; docs/experiments/multiwell.md):\n"
    "U(theta) = 3/4 theta^2 - 3/2 sum_{i=1..10} c_i sin(pi i (theta + 4) / 4), c_i ~ U(0, 1)\n"
    "drawn from sgmcmc::host::Rng(c-seed). Every sampler gets the same step size, number of\n"
    "steps (= gradient evaluations) and noisy gradient dU + N(0, V); no V-hat correction.\n"
    "\n"
    "  --out DIR       table.md, PNGs and their data (default out/multiwell)\n"
    "  --steps N       steps per chain (default 2000000)\n"
    "  --chains K      independent chains per sampler (default 4)\n"
    "  --step-size H   h of every sampler (default 0.01)\n"
    "  --noise V       gradient-noise variance (default 1)\n"
    "  --resample R    SGMGT/SGMGT-D resampling period of MATH.md 3.5 (default 50; 0: never)\n"
    "  --seed S        base seed of the chains (default 20170806)\n"
    "  --c-seed S      seed of the c_i draw (default 2017)\n"
    "  --quick         200000 steps, 2 chains\n"
    "  --no-plots      table only\n"
    "  --help          this text\n";

struct Options {
  std::string out = "out/multiwell";
  long steps = 2000000;
  int chains = 4;
  double h = 0.01;
  double noise = 1.0;
  int resample = 50;
  std::uint64_t seed = 20170806;
  std::uint64_t c_seed = 2017;
  bool plots = true;
};

// ------------------------------------------------------------------------------------ target

/// U(θ) = (3/4)θ² − (3/2) Σ_{i=1}^{10} c_i sin(πi(θ + 4)/4) (MATH.md §3.7).
struct MultiWell {
  std::array<double, 10> c{};

  /// c_i ~ U(0, 1) i.i.d.: the i-th call of uniform_open01<double> on host::Rng(seed, 0).
  static MultiWell draw(std::uint64_t seed) {
    sgmcmc::host::Rng rng(seed, 0);
    MultiWell w;
    for (double& ci : w.c) ci = sgmcmc::uniform_open01<double>(rng);
    return w;
  }
  double u(double th) const {
    double s = 0.0;
    for (int i = 1; i <= 10; ++i) s += c[i - 1] * std::sin(M_PI * i * (th + 4.0) / 4.0);
    return 0.75 * th * th - 1.5 * s;
  }
  double du(double th) const {
    double s = 0.0;
    for (int i = 1; i <= 10; ++i) {
      s += c[i - 1] * (M_PI * i / 4.0) * std::cos(M_PI * i * (th + 4.0) / 4.0);
    }
    return 1.5 * th - 1.5 * s;
  }
};

/// ∇U + N(0, V), a fresh draw per call from the model's own stream (MATH.md §5.3(a)).
class NoisyMultiWell {
 public:
  NoisyMultiWell(const MultiWell& w, double v, std::uint64_t seed, std::uint64_t stream)
      : w_(&w), sd_(std::sqrt(v)), rng_(seed, stream) {}
  template <class Theta, class Grad>
  void gradient(const Theta& th, Grad& g) const noexcept {
    g[0] = w_->du(th[0]) + sd_ * sgmcmc::normal<double>(rng_);
  }

 private:
  const MultiWell* w_;
  double sd_;
  mutable sgmcmc::host::Rng rng_;
};

/// The truth on [lo, hi]: the normaliser by composite Gauss–Legendre, the density, and the
/// basins of attraction of exp(−U) (between consecutive local maxima of the density).
struct Truth {
  static constexpr double lo = -8.0, hi = 8.0;
  const MultiWell* w = nullptr;
  double z = 1.0;
  std::vector<double> modes;   ///< local minima of U, left to right
  std::vector<double> bounds;  ///< basin edges: lo, the local maxima of U, hi
  std::vector<double> mass;    ///< probability of each basin
  std::vector<double> core_u;  ///< U level below which a point is in its basin's core

  double pdf(double th) const { return std::exp(-w->u(th)) / z; }

  explicit Truth(const MultiWell& mw) : w(&mw) {
    const common::GaussLegendre gl(16);
    z = gl.integrate_composite([&](double x) { return std::exp(-mw.u(x)); }, lo, hi, 4000);
    const int n = 160000;
    const double dx = (hi - lo) / n;
    bounds.push_back(lo);
    for (int i = 1; i < n; ++i) {
      const double x = lo + i * dx;
      const double a = mw.u(x - dx), b = mw.u(x), c = mw.u(x + dx);
      if (b < a && b <= c) modes.push_back(x);
      if (b > a && b >= c) bounds.push_back(x);
    }
    bounds.push_back(hi);
    // A grid maximum can precede the first minimum (U decreasing at lo): keep one mode per basin.
    while (bounds.size() > modes.size() + 1) {
      if (!modes.empty() && bounds[1] < modes[0]) {
        bounds.erase(bounds.begin() + 1);
      } else {
        bounds.erase(bounds.end() - 2);
      }
    }
    for (std::size_t k = 0; k < modes.size(); ++k) {
      mass.push_back(
          gl.integrate_composite([&](double x) { return pdf(x); }, bounds[k], bounds[k + 1], 200));
      // Core: U within half the lower barrier of the basin above its minimum.
      const double um = mw.u(modes[k]);
      const double left = k == 0 ? INFINITY : mw.u(bounds[k]);
      const double right = k + 1 == modes.size() ? INFINITY : mw.u(bounds[k + 1]);
      const double barrier = std::min(left, right) - um;
      core_u.push_back(um + 0.5 * std::min(barrier, 4.0));
    }
  }
  int basin(double th) const {
    const auto it = std::upper_bound(bounds.begin() + 1, bounds.end() - 1, th);
    return static_cast<int>(it - bounds.begin()) - 1;
  }
  bool in_core(double th, int b) const { return w->u(th) <= core_u[static_cast<std::size_t>(b)]; }
  /// Modes holding at least this mass: the ones a chain is expected to visit.
  int significant(double min_mass) const {
    return static_cast<int>(
        std::count_if(mass.begin(), mass.end(), [&](double m) { return m >= min_mass; }));
  }
};

// ------------------------------------------------------------------------------------ runs

/// One chain's record: a histogram of every step, its trace (thinned), mode statistics.
struct ChainResult {
  bool ok = true;
  std::string error;
  double tv = 0.0, kl = 0.0, basin_tv = 0.0;
  long switches = 0;              ///< entries into the core of a basin other than the last one
  int modes_visited = 0;          ///< basins whose core was entered at least once
  std::vector<double> occupancy;  ///< fraction of steps in each basin
};

struct MethodResult {
  std::string name;
  std::string key;
  std::string settings;
  std::vector<ChainResult> chains;
  common::Histogram pooled{common::Axis{Truth::lo, Truth::hi, 160}};
  std::vector<double> trace;  ///< chain 0, every kTraceThin-th step of the first kTraceSteps
};

constexpr long kTraceSteps = 200000;
constexpr long kTraceThin = 20;

/// The run driver's sink for one chain: every state goes into the chain's histogram and the
/// pooled one, the trace (chain 0), and the basin and core bookkeeping.
struct ChainTally {
  const Truth* truth;
  common::Histogram* hist;
  common::Histogram* pooled;
  std::vector<double>* trace;
  std::vector<long> in_basin;
  std::vector<char> visited;
  int last_core = -1;
  long switches = 0;

  ChainTally(const Truth& t, common::Histogram& h, common::Histogram& p, std::vector<double>* tr)
      : truth(&t),
        hist(&h),
        pooled(&p),
        trace(tr),
        in_basin(t.modes.size(), 0),
        visited(t.modes.size(), 0) {}

  template <class St>
  void operator()(const St& z, std::uint64_t step) {
    const double th = z.position()[0];
    const long i = static_cast<long>(step);
    hist->add(th);
    pooled->add(th);
    if (trace && i < kTraceSteps && i % kTraceThin == 0) trace->push_back(th);
    if (th < Truth::lo || th >= Truth::hi) return;
    const int b = truth->basin(th);
    ++in_basin[static_cast<std::size_t>(b)];
    if (b != last_core && truth->in_core(th, b)) {
      if (last_core >= 0) ++switches;
      last_core = b;
      visited[static_cast<std::size_t>(b)] = 1;
    }
  }
};

/// Runs `steps` steps of sampler s from z through the run driver, every state kept.
template <class S, class St, class Model>
ChainResult run_chain(const Truth& truth, long steps, const S& s, St& z, const Model& model,
                      sgmcmc::host::Rng& rng, common::Histogram& pooled,
                      std::vector<double>* trace) {
  ChainResult r;
  common::Histogram h(pooled.x_axis());
  ChainTally tally(truth, h, pooled, trace);
  const sgmcmc::RunResult run = sgmcmc::run(
      s, z, model, rng, sgmcmc::RunPlan{0, static_cast<std::uint64_t>(steps), 1}, tally);
  if (!run.status) {
    r.ok = false;
    r.error = format("%s at step %llu", run.status.message(),
                     static_cast<unsigned long long>(run.failed_at));
    return r;
  }
  r.switches = tally.switches;
  const std::vector<double> p = common::cell_masses_1d(
      h, [&](double x) { return std::exp(-truth.w->u(x)); }, truth.z);
  for (std::size_t i = 0; i < p.size(); ++i)
    r.tv += 0.5 * std::fabs(p[i] - h.counts()[i] / h.total());
  r.kl = common::kl_true_vs_sample(p, h);
  for (std::size_t b = 0; b < tally.in_basin.size(); ++b) {
    r.occupancy.push_back(double(tally.in_basin[b]) / double(steps));
    r.basin_tv += 0.5 * std::fabs(r.occupancy.back() - truth.mass[b]);
    r.modes_visited += tally.visited[b];
  }
  return r;
}

double mean_of(const std::vector<ChainResult>& c, double ChainResult::*f) {
  double s = 0.0;
  for (const auto& r : c) s += r.*f;
  return s / double(c.size());
}
double sd_of(const std::vector<ChainResult>& c, double ChainResult::*f) {
  const double m = mean_of(c, f);
  double s = 0.0;
  for (const auto& r : c) s += (r.*f - m) * (r.*f - m);
  return c.size() > 1 ? std::sqrt(s / double(c.size() - 1)) : 0.0;
}

/// 0: run, 1: --help printed, 2: bad argument (message printed).
int parse(int argc, char** argv, Options& o) {
  sgmcmc::common::Args args(argc, argv, "sgmcmc_multiwell", kUsage);
  std::uint64_t n = 0;
  while (args.next()) {
    if (args.is("--quick")) {
      o.steps = 200000;
      o.chains = 2;
    } else if (args.is("--no-plots")) {
      o.plots = false;
    } else if (args.count("--steps", n, 1000)) {
      o.steps = static_cast<long>(n);
    } else if (args.count("--chains", n, 1)) {
      o.chains = static_cast<int>(n);
    } else if (args.count("--resample", n, 0)) {
      o.resample = static_cast<int>(n);
    } else if (!args.text("--out", o.out) && !args.count("--seed", o.seed) &&
               !args.count("--c-seed", o.c_seed) &&
               !args.number("--step-size", o.h, std::numeric_limits<double>::min()) &&
               !args.number("--noise", o.noise, 0.0)) {
      args.unknown();
    }
  }
  return args.status();
}

// ------------------------------------------------------------------------------------ plots

bool plot_traces(const common::Gnuplot& gp, const std::string& dir,
                 const std::vector<MethodResult>& methods, const Truth& truth, double h,
                 std::string* error) {
  std::vector<std::vector<double>> cols(1 + methods.size());
  const std::size_t n = methods.front().trace.size();
  for (std::size_t i = 0; i < n; ++i) cols[0].push_back(double(i) * kTraceThin);
  std::string header = "step";
  for (std::size_t k = 0; k < methods.size(); ++k) {
    cols[k + 1] = methods[k].trace;
    header += " | " + methods[k].name;
  }
  if (!common::write_columns(dir + "/traces.dat", header, cols)) {
    *error = "cannot write traces.dat";
    return false;
  }
  const int rows = static_cast<int>((methods.size() + 1) / 2);
  std::string s = gp.png_terminal(1600, 260 * rows, 10) + "\nset output 'traces.png'\n";
  s += format("set multiplot layout %d,2 title \"Traces (chain 0, first %ld steps, h = %g)\"\n",
              rows, kTraceSteps, h);
  s += format("set yrange [%g:%g]\nset xlabel 'step'\nset ylabel 'θ'\nunset key\n", -5.0, 5.0);
  for (std::size_t k = 0; k < truth.modes.size(); ++k) {  // the modes that hold ≥ 1e-3
    if (truth.mass[k] < 1e-3) continue;
    s += format(
        "set arrow from graph 0, first %g to graph 1, first %g nohead lc rgb '#bbbbbb' "
        "dt 2\n",
        truth.modes[k], truth.modes[k]);
  }
  for (std::size_t k = 0; k < methods.size(); ++k) {
    s += "set title " + common::gp_string(methods[k].name) + "\n";
    s += format("plot 'traces.dat' using 1:%zu with lines lw 0.6 lc rgb '#1f77b4'\n", k + 2);
  }
  s += "unset multiplot\n";
  if (!common::write_text(dir + "/traces.gp", s) || !gp.run(dir, "traces.gp")) {
    *error = "gnuplot failed on traces.gp (see traces.gp.log)";
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (const int rc = parse(argc, argv, o); rc != 0) return rc == 1 ? 0 : 2;
  std::error_code ec;
  std::filesystem::create_directories(o.out, ec);
  if (ec) {
    std::fprintf(stderr, "sgmcmc_multiwell: cannot create %s\n", o.out.c_str());
    return 1;
  }

  const MultiWell well = MultiWell::draw(o.c_seed);
  const Truth truth(well);
  std::printf("SGMG-style multiple well (MATH.md 3.7), c-seed %llu: c =",
              static_cast<unsigned long long>(o.c_seed));
  for (double ci : well.c) std::printf(" %.4f", ci);
  std::printf("\n%zu modes on [%g, %g]:", truth.modes.size(), Truth::lo, Truth::hi);
  for (std::size_t k = 0; k < truth.modes.size(); ++k) {
    std::printf(" %.3f (%.4f)", truth.modes[k], truth.mass[k]);
  }
  std::printf("\nh = %g, %ld steps x %d chains, gradient noise V = %g, resample R = %d\n\n", o.h,
              o.steps, o.chains, o.noise, o.resample);

  // ---------------------------------------------------------------- the samplers
  std::vector<MethodResult> methods;
  auto run_method = [&](const std::string& name, const std::string& key,
                        const std::string& settings, const auto& s, auto&& start) {
    MethodResult m;
    m.name = name;
    m.key = key;
    m.settings = settings;
    for (int c = 0; c < o.chains; ++c) {
      const std::uint64_t stream = static_cast<std::uint64_t>(methods.size() * 100 + c);
      NoisyMultiWell model(well, o.noise, o.seed + 1, stream);
      sgmcmc::host::Rng rng(o.seed, stream);
      auto z = start(s, rng);
      m.chains.push_back(
          run_chain(truth, o.steps, s, z, model, rng, m.pooled, c == 0 ? &m.trace : nullptr));
    }
    methods.push_back(std::move(m));
  };
  const V1 theta0(0.0);
  // SGNHT starts at (θ₀, r = 0, ξ = A); SGMGT/SGMGT-D draw p and ξ from their exact laws.
  auto start_fixed = [&](const auto& s, sgmcmc::host::Rng&) { return s.start(theta0); };
  auto start_drawn = [&](const auto& s, sgmcmc::host::Rng& rng) { return s.start(theta0, rng); };

  {
    sgmcmc::SGNHT<double, 1>::Params p;
    p.step_size = o.h;
    p.diffusion = 1.0;
    const sgmcmc::SGNHT<double, 1> s(p);
    run_method("SGNHT", "sgnht", "A = 1", s, start_fixed);
  }
  std::vector<int> periods = {o.resample};
  if (o.resample > 0) periods.push_back(0);  // also without resampling: what the Gibbs moves add
  for (int resample : periods) {
    const std::string tag = resample > 0 ? format(", R=%d", resample) : ", no resampling";
    for (int a : {1, 2}) {
      sgmcmc::SGMGT<double, 1>::Params p;
      p.step_size = o.h;
      p.shape = a;
      p.mass = 1.0;
      p.softness = a == 1 ? 5.0 : 3.0;
      p.diffusion = 1.0;
      p.resample_period = resample;
      const sgmcmc::SGMGT<double, 1> s(p);
      run_method(format("SGMGT a=%d%s", a, tag.c_str()), format("sgmgt%d_r%d", a, resample),
                 format("m = 1, c = %g, A = 1", p.softness), s, start_drawn);
    }
    for (int a : {1, 2}) {
      sgmcmc::SGMGTD<double, 1>::Params p;
      p.step_size = o.h;
      p.shape = a;
      p.mass = 1.0;
      p.softness = a == 1 ? 5.0 : 3.0;
      p.sigma_theta = 0.3;
      p.sigma_p = 1.0;
      p.sigma_xi = 0.3;
      p.gamma = 1.0;
      p.resample_period = resample;
      const sgmcmc::SGMGTD<double, 1> s(p);
      run_method(format("SGMGT-D a=%d%s", a, tag.c_str()), format("sgmgtd%d_r%d", a, resample),
                 format("m = 1, c = %g, σθ = 0.3, σp = 1, σξ = 0.3, γ = 1", p.softness), s,
                 start_drawn);
    }
  }

  // ---------------------------------------------------------------- exact i.i.d. floor
  // The KL/TV of o.steps exact draws (inverse CDF on a fine grid), same bins: the Monte-Carlo
  // floor.
  double floor_tv = 0.0, floor_kl = 0.0;
  {
    const int n = 400000;
    std::vector<double> cdf(n + 1, 0.0);
    const double dx = (Truth::hi - Truth::lo) / n;
    for (int i = 0; i < n; ++i) {
      const double x = Truth::lo + i * dx;
      cdf[i + 1] = cdf[i] + dx / 6 * (truth.pdf(x) + 4 * truth.pdf(x + dx / 2) + truth.pdf(x + dx));
    }
    for (double& c : cdf) c /= cdf.back();
    sgmcmc::host::Rng rng(o.seed, 999999);
    common::Histogram h(common::Axis{Truth::lo, Truth::hi, 160});
    for (long i = 0; i < o.steps; ++i) {
      const double u = sgmcmc::uniform_open01<double>(rng);
      const auto it = std::upper_bound(cdf.begin(), cdf.end(), u);
      const std::size_t k =
          std::min<std::size_t>(std::max<std::ptrdiff_t>(it - cdf.begin(), 1), n) - 1;
      const double f = (u - cdf[k]) / std::max(cdf[k + 1] - cdf[k], 1e-300);
      h.add(Truth::lo + (double(k) + f) * dx);
    }
    const auto p = common::cell_masses_1d(
        h, [&](double x) { return std::exp(-well.u(x)); }, truth.z);
    for (std::size_t i = 0; i < p.size(); ++i)
      floor_tv += 0.5 * std::fabs(p[i] - h.counts()[i] / h.total());
    floor_kl = common::kl_true_vs_sample(p, h);
  }

  // ---------------------------------------------------------------- table
  const int significant = truth.significant(1e-3);
  common::Table t;
  t.add_column("sampler", common::Table::Align::Left);
  t.add_column("TV (bins 0.1)");
  t.add_column("KL(true‖sample)");
  t.add_column("basin TV");
  t.add_column(format("modes visited (of %d ≥ 1e-3)", significant));
  t.add_column("core switches / 1e5 steps");
  bool all_ok = true;
  for (const auto& m : methods) {
    bool ok = true;
    for (const auto& c : m.chains) {
      if (!c.ok) {
        std::fprintf(stderr, "%s: %s\n", m.name.c_str(), c.error.c_str());
        ok = false;
      }
    }
    if (!ok) {
      all_ok = false;
      t.add_row({m.name, "failed"});
      continue;
    }
    double visited = 0.0, switches = 0.0;
    for (const auto& c : m.chains) {
      visited += c.modes_visited;
      switches += double(c.switches);
    }
    visited /= double(m.chains.size());
    switches = switches / double(m.chains.size()) / double(o.steps) * 1e5;
    t.add_row({m.name,
               format("%.4f ± %.4f", mean_of(m.chains, &ChainResult::tv),
                      sd_of(m.chains, &ChainResult::tv)),
               format("%.4f ± %.4f", mean_of(m.chains, &ChainResult::kl),
                      sd_of(m.chains, &ChainResult::kl)),
               format("%.4f ± %.4f", mean_of(m.chains, &ChainResult::basin_tv),
                      sd_of(m.chains, &ChainResult::basin_tv)),
               format("%.2f", visited), format("%.1f", switches)});
  }
  t.add_rule();
  t.add_row({"exact i.i.d. draws (MC floor)", format("%.4f", floor_tv), format("%.4f", floor_kl),
             "", "", ""});
  std::printf("%s\n", t.text().c_str());
  std::printf(
      "mean ± sd over %d chains of %ld steps each; TV and KL over 160 bins of width 0.1 on "
      "[-8, 8] against quadrature.\n",
      o.chains, o.steps);

  std::string md = "# Multiple-well experiment (generated by sgmcmc_multiwell)\n\n";
  md += format("c-seed %llu, h = %g, %ld steps × %d chains, gradient noise V = %g, R = %d.\n\n",
               static_cast<unsigned long long>(o.c_seed), o.h, o.steps, o.chains, o.noise,
               o.resample);
  md += t.markdown() + "\n";
  md += "| sampler | settings |\n|---|---|\n";
  for (const auto& m : methods) md += "| " + m.name + " | " + m.settings + " |\n";
  if (!common::write_text(o.out + "/table.md", md)) {
    std::fprintf(stderr, "sgmcmc_multiwell: cannot write %s/table.md\n", o.out.c_str());
    return 1;
  }

  // ---------------------------------------------------------------- plots
  if (o.plots) {
    const common::Gnuplot gp = common::Gnuplot::detect();
    if (!gp.found) {
      std::printf("gnuplot not found: no plots\n");
    } else {
      common::Figure fig;
      fig.name = "densities";
      fig.title = format("Multiple well: %d chains × %ld steps, h = %g (histograms of all steps)",
                         o.chains, o.steps, o.h);
      fig.rows = 3;
      fig.cols = 3;
      fig.width = 1500;
      fig.height = 1050;
      fig.x0 = -5.0;
      fig.x1 = 5.0;
      std::vector<common::Panel> panels;
      for (const auto& m : methods) {
        common::Panel p;
        p.title = m.name;
        p.hist = &m.pooled;
        p.note = format("TV %.3f", mean_of(m.chains, &ChainResult::tv));
        panels.push_back(p);
      }
      std::string err;
      if (!common::plot_histograms(
              gp, o.out, fig, panels, [&](double x) { return truth.pdf(x); }, &err)) {
        std::fprintf(stderr, "sgmcmc_multiwell: %s\n", err.c_str());
      }
      if (!plot_traces(gp, o.out, methods, truth, o.h, &err)) {
        std::fprintf(stderr, "sgmcmc_multiwell: %s\n", err.c_str());
      }
      std::printf("wrote %s/{table.md,densities.png,traces.png}\n", o.out.c_str());
    }
  }
  return all_ok ? 0 : 1;
}
