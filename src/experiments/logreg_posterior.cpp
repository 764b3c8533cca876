// SPDX-License-Identifier: MIT
// Host-only: the dimension-independent part of the posterior comparison (docs/stan-comparison.md):
// method names, bulk ESS, accuracy against a reference, CSV files, dimension dispatch.
#include "experiments/logreg_posterior.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <numeric>
#include <sstream>

#include "experiments/logreg_core.hpp"
#include "experiments/logreg_posterior_run.hpp"
#include "sgmcmc/diagnostics/rhat.hpp"

namespace sgmcmc::logreg {

extern template void run_posterior<7>(const PosteriorInput&, const PosteriorSettings&,
                                      std::vector<PosteriorRun>&);
extern template void run_posterior<8>(const PosteriorInput&, const PosteriorSettings&,
                                      std::vector<PosteriorRun>&);
extern template void run_posterior<14>(const PosteriorInput&, const PosteriorSettings&,
                                       std::vector<PosteriorRun>&);
extern template void run_posterior<15>(const PosteriorInput&, const PosteriorSettings&,
                                       std::vector<PosteriorRun>&);
extern template void run_posterior<25>(const PosteriorInput&, const PosteriorSettings&,
                                       std::vector<PosteriorRun>&);
extern template void run_posterior<86>(const PosteriorInput&, const PosteriorSettings&,
                                       std::vector<PosteriorRun>&);

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct MethodEntry {
  PosteriorMethod id;
  const char* key;
  const char* name;
};
constexpr MethodEntry kMethods[] = {
    {PosteriorMethod::NUTS, "nuts", "NUTS (dense metric)"},
    {PosteriorMethod::SGHMCCV, "sghmc-cv", "SGHMC-CV (preconditioned)"},
    {PosteriorMethod::SGLDCV, "sgld-cv", "SGLD-CV (preconditioned)"},
    {PosteriorMethod::SGHMCPlain, "sghmc", "SGHMC (ρ = 0.2 rule)"},
    {PosteriorMethod::SGHMCCVNoAdapt, "sghmc-cv-hot", "SGHMC-CV, h not adapted (control)"},
};

/// Φ⁻¹(p) for p ∈ (0, 1): Acklam's rational approximation, then one Newton step on erfc.
double normal_quantile(double p) {
  static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,  -2.759285104469687e+02,
                             1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
  static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                             6.680131188771972e+01, -1.328068155288572e+01};
  static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                             -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
  static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                             3.754408661907416e+00};
  double x;
  if (p < 0.02425) {
    const double q = std::sqrt(-2 * std::log(p));
    x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  } else if (p > 1 - 0.02425) {
    const double q = std::sqrt(-2 * std::log(1 - p));
    x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  } else {
    const double q = p - 0.5, r = q * q;
    x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
        (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
  }
  const double e = 0.5 * std::erfc(-x / std::sqrt(2.0)) - p;
  const double u = e * std::sqrt(2 * M_PI) * std::exp(x * x / 2);
  return x - u / (1 + x * u / 2);
}

/// Stan's multi-chain ESS (Geyer's initial positive, then monotone sequence on the mean
/// autocorrelation across chains; Vehtari et al. 2021, eq. 10 and §3.2) of equal-length chains.
double ess_chains(const std::vector<std::vector<double>>& chains) {
  const std::size_t m = chains.size();
  const std::size_t n = chains[0].size();
  std::vector<double> means(m);
  for (std::size_t c = 0; c < m; ++c) {
    means[c] = std::accumulate(chains[c].begin(), chains[c].end(), 0.0) / double(n);
  }
  // Mean over chains of the biased autocovariance at lag t, computed on demand.
  auto acov = [&](std::size_t t) {
    double s = 0.0;
    for (std::size_t c = 0; c < m; ++c) {
      const double* x = chains[c].data();
      double a = 0.0;
      for (std::size_t i = 0; i + t < n; ++i) a += (x[i] - means[c]) * (x[i + t] - means[c]);
      s += a / double(n);
    }
    return s / double(m);
  };
  const double acov0 = acov(0);
  const double mean_var = acov0 * double(n) / double(n - 1);
  double var_plus = mean_var * double(n - 1) / double(n);
  if (m > 1) {
    const double grand = std::accumulate(means.begin(), means.end(), 0.0) / double(m);
    double b = 0.0;
    for (double mu : means) b += (mu - grand) * (mu - grand);
    var_plus += b / double(m - 1);
  }
  if (!(var_plus > 0)) return kNaN;
  std::vector<double> rho;
  rho.reserve(64);
  rho.push_back(1.0);
  rho.push_back(1.0 - (mean_var - acov(1)) / var_plus);
  std::size_t t = 0;
  double even = rho[0], odd = rho[1];
  while (t + 5 < n && even + odd > 0) {
    t += 2;
    even = 1.0 - (mean_var - acov(t)) / var_plus;
    odd = 1.0 - (mean_var - acov(t + 1)) / var_plus;
    if (even + odd >= 0) {
      rho.push_back(even);
      rho.push_back(odd);
    }
  }
  const std::size_t max_t = t;
  if (even > 0 && rho.size() == max_t) rho.push_back(even);
  if (rho.size() <= max_t) rho.resize(max_t + 1, 0.0);
  // Initial monotone sequence over the pairs.
  for (std::size_t k = 2; k + 1 < max_t; k += 2) {
    if (rho[k] + rho[k + 1] > rho[k - 2] + rho[k - 1]) {
      rho[k] = rho[k + 1] = 0.5 * (rho[k - 2] + rho[k - 1]);
    }
  }
  double sum = 0.0;
  for (std::size_t k = 0; k < max_t; ++k) sum += rho[k];
  const double total = double(m * n);
  double tau = -1.0 + 2.0 * sum + (max_t < rho.size() ? rho[max_t] : 0.0);
  tau = std::max(tau, 1.0 / std::log10(total));
  return total / tau;
}

Moments read_error(std::string* error, const std::string& what) {
  if (error != nullptr) *error = what;
  return {};
}

}  // namespace

const char* posterior_method_key(PosteriorMethod m) {
  for (const auto& e : kMethods) {
    if (e.id == m) return e.key;
  }
  return "?";
}
const char* posterior_method_name(PosteriorMethod m) {
  for (const auto& e : kMethods) {
    if (e.id == m) return e.name;
  }
  return "?";
}
std::vector<PosteriorMethod> default_posterior_methods() {
  return {PosteriorMethod::NUTS, PosteriorMethod::SGHMCCV, PosteriorMethod::SGLDCV};
}
bool parse_posterior_methods(const std::string& list, std::vector<PosteriorMethod>& out,
                             std::string* bad) {
  std::vector<PosteriorMethod> all;
  for (const auto& e : kMethods) all.push_back(e.id);
  return parse_key_list(list, all, posterior_method_key, out, bad);
}

double PosteriorRun::min_ess() const {
  if (ess.empty()) return kNaN;
  return *std::min_element(ess.begin(), ess.end());
}
double PosteriorRun::max_rhat() const {
  if (rhat.empty()) return kNaN;
  return *std::max_element(rhat.begin(), rhat.end());
}
double PosteriorRun::ess_per_second() const {
  return cpu_seconds > 0 ? min_ess() / cpu_seconds : kNaN;
}

double split_rhat(const std::vector<std::vector<double>>& draws) {
  if (draws.size() < 2 || draws[0].size() < 4) return kNaN;
  const std::size_t n = draws[0].size();
  const std::size_t half = n / 2;
  std::vector<Welford<double, 1>> halves(2 * draws.size());
  for (std::size_t c = 0; c < draws.size(); ++c) {
    if (draws[c].size() != n) return kNaN;
    for (std::size_t t = 0; t < half; ++t) {
      halves[2 * c].push(Vector<double, 1>::Constant(draws[c][t]));
      halves[2 * c + 1].push(Vector<double, 1>::Constant(draws[c][n - half + t]));
    }
  }
  return rhat_from_sequences(halves.data(), halves.size())[0];
}

double ess_bulk(const std::vector<std::vector<double>>& draws) {
  if (draws.empty() || draws[0].size() < 4) return kNaN;
  const std::size_t n = draws[0].size();
  for (const auto& c : draws) {
    if (c.size() != n) return kNaN;
  }
  // Rank-normalise the pooled draws (average ranks for ties), as rstan's z_scale: Φ⁻¹((r − ½)/S).
  const std::size_t m = draws.size();
  const std::size_t total = m * n;
  std::vector<std::size_t> order(total);
  std::iota(order.begin(), order.end(), std::size_t(0));
  auto value = [&](std::size_t k) { return draws[k / n][k % n]; };
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return value(a) < value(b); });
  std::vector<double> z(total);
  for (std::size_t i = 0; i < total;) {
    std::size_t j = i;
    while (j + 1 < total && value(order[j + 1]) == value(order[i])) ++j;
    const double rank = 0.5 * double(i + j) + 1.0;
    const double q = normal_quantile((rank - 0.5) / double(total));
    for (std::size_t k = i; k <= j; ++k) z[order[k]] = q;
    i = j + 1;
  }
  // Split every chain in two halves (the middle draw of an odd length is dropped, as rstan does).
  const std::size_t half = n / 2;
  std::vector<std::vector<double>> split;
  split.reserve(2 * m);
  for (std::size_t c = 0; c < m; ++c) {
    const double* zc = z.data() + c * n;
    split.emplace_back(zc, zc + half);
    split.emplace_back(zc + (n - half), zc + n);
  }
  return ess_chains(split);
}

Accuracy accuracy(const std::vector<double>& mean, const std::vector<double>& sd,
                  const Moments& reference) {
  Accuracy a;
  a.min_sd_ratio = std::numeric_limits<double>::infinity();
  a.max_sd_ratio = 0.0;
  if (mean.size() != reference.mean.size() || sd.size() != reference.sd.size() || mean.empty()) {
    return {kNaN, kNaN, kNaN};
  }
  for (std::size_t j = 0; j < mean.size(); ++j) {
    a.max_mean_error =
        std::max(a.max_mean_error, std::abs(mean[j] - reference.mean[j]) / reference.sd[j]);
    const double r = sd[j] / reference.sd[j];
    a.min_sd_ratio = std::min(a.min_sd_ratio, r);
    a.max_sd_ratio = std::max(a.max_sd_ratio, r);
  }
  return a;
}

bool write_posterior_csv(const std::string& path, const PosteriorRun& run) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) return false;
  std::fprintf(f, "coefficient,mean,sd,ess_bulk,rhat\n");
  for (std::size_t j = 0; j < run.mean.size(); ++j) {
    std::fprintf(f, "%zu,%.17g,%.17g,%.6g,%.6g\n", j, run.mean[j], run.sd[j], run.ess[j],
                 j < run.rhat.size() ? run.rhat[j] : kNaN);
  }
  std::fprintf(
      f, "# cpu_seconds=%.6g setup_seconds=%.6g kept=%zu step_size=%.6g gradient_evals=%llu\n",
      run.cpu_seconds, run.setup_seconds, run.kept, run.step_size,
      static_cast<unsigned long long>(run.gradient_evals));
  return std::fclose(f) == 0;
}

bool read_moments_csv(const std::string& path, Moments& out, std::string* error) {
  std::ifstream in(path);
  if (!in) {
    out = read_error(error, "cannot open " + path);
    return false;
  }
  std::string line;
  if (!std::getline(in, line)) {
    out = read_error(error, path + ": empty");
    return false;
  }
  // Header: find the columns (quotes from R's write.csv removed).
  std::vector<std::string> head;
  {
    std::stringstream ss(line);
    std::string cell;
    while (std::getline(ss, cell, ',')) {
      cell.erase(std::remove(cell.begin(), cell.end(), '"'), cell.end());
      head.push_back(cell);
    }
  }
  auto col = [&](const char* name) {
    return int(std::find(head.begin(), head.end(), name) - head.begin());
  };
  const int cm = col("mean"), cs = col("sd"), ce = col("ess_bulk");
  if (cm >= int(head.size()) || cs >= int(head.size())) {
    out = read_error(error, path + ": needs columns mean and sd");
    return false;
  }
  Moments m;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> cells;
    std::stringstream ss(line);
    std::string cell;
    while (std::getline(ss, cell, ',')) cells.push_back(cell);
    if (cells.size() < head.size()) {
      out = read_error(error, path + ": short row");
      return false;
    }
    m.mean.push_back(std::strtod(cells[std::size_t(cm)].c_str(), nullptr));
    m.sd.push_back(std::strtod(cells[std::size_t(cs)].c_str(), nullptr));
    m.ess.push_back(ce < int(head.size()) ? std::strtod(cells[std::size_t(ce)].c_str(), nullptr)
                                          : kNaN);
  }
  if (m.mean.empty()) {
    out = read_error(error, path + ": no rows");
    return false;
  }
  out = std::move(m);
  return true;
}

std::vector<PosteriorRun> run_posterior_dataset(const std::string& name, const data::Dataset& raw,
                                                const PosteriorSettings& s, std::string* error) {
  std::vector<PosteriorRun> out;
  data::Dataset d = raw;
  data::PrepResult p = data::standardise_columns(d);
  if (p.ok && name == "ripley") p = data::ripley_cubic(d);
  if (!p.ok) {
    if (error != nullptr) *error = p.error;
    return out;
  }
  data::add_intercept(d);
  PosteriorInput in;
  in.data = &d;
  in.name = name;
  const double t0 = cpu_seconds_now();
  in.geometry = analyse(d, s.prior_sd);
  in.setup_seconds = cpu_seconds_now() - t0;
  if (!in.geometry.ok) {
    if (error != nullptr) *error = in.geometry.error;
    return out;
  }
  const bool known =
      with_dimension(d.cols, [&](auto dim) { run_posterior<decltype(dim)::value>(in, s, out); });
  if (!known && error != nullptr) {
    *error = "no compiled instantiation for dimension " + std::to_string(d.cols);
  }
  return out;
}

}  // namespace sgmcmc::logreg
