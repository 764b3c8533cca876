// SPDX-License-Identifier: MIT
// Host-only: the dimension-independent part of the logistic-regression experiment (preparation,
// splits, MAP and curvature, derived step sizes, AUROC, ESS summaries, the paper's numbers).
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "experiments/logreg_run.hpp"

namespace sgmcmc::logreg {

extern template void run_split<7>(const SplitInput&, const Settings&, std::vector<Run>&);
extern template void run_split<8>(const SplitInput&, const Settings&, std::vector<Run>&);
extern template void run_split<14>(const SplitInput&, const Settings&, std::vector<Run>&);
extern template void run_split<15>(const SplitInput&, const Settings&, std::vector<Run>&);
extern template void run_split<25>(const SplitInput&, const Settings&, std::vector<Run>&);
extern template void run_split<86>(const SplitInput&, const Settings&, std::vector<Run>&);

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

Eigen::Map<const RowMajor> design(const data::Dataset& d) {
  return Eigen::Map<const RowMajor>(d.x.data(), Eigen::Index(d.rows), Eigen::Index(d.cols));
}

double sigmoid_d(double x) {
  return sigmoid(x);
}

/// U(β) on a data set (prior precision prec).
double potential(const data::Dataset& d, const Eigen::VectorXd& beta, double prec) {
  const Eigen::VectorXd eta = design(d) * beta;
  double u = 0.5 * prec * beta.squaredNorm();
  for (std::size_t i = 0; i < d.rows; ++i) {
    u += softplus(eta[Eigen::Index(i)]) - double(d.y[i]) * eta[Eigen::Index(i)];
  }
  return u;
}

/// Newton's method with Armijo backtracking for the MAP; fills g.map, g.map_potential, g.hessian.
bool newton_map(const data::Dataset& d, double prec, Geometry& g) {
  const auto x = design(d);
  const Eigen::Index dim = x.cols();
  Eigen::VectorXd beta = Eigen::VectorXd::Zero(dim);
  Eigen::VectorXd y(Eigen::Index(d.rows));
  for (std::size_t i = 0; i < d.rows; ++i) y[Eigen::Index(i)] = d.y[i];
  double u = potential(d, beta, prec);
  Eigen::MatrixXd h(dim, dim);
  for (int it = 0; it < 100; ++it) {
    const Eigen::VectorXd eta = x * beta;
    Eigen::VectorXd p(eta.size()), w(eta.size());
    for (Eigen::Index i = 0; i < eta.size(); ++i) {
      p[i] = sigmoid_d(eta[i]);
      w[i] = p[i] * (1.0 - p[i]);
    }
    const Eigen::VectorXd grad = x.transpose() * (p - y) + prec * beta;
    h.noalias() = x.transpose() * w.asDiagonal() * x;
    h.diagonal().array() += prec;
    const Eigen::VectorXd delta = h.ldlt().solve(grad);
    const double decrement = grad.dot(delta);
    if (!std::isfinite(decrement)) return false;
    if (decrement < 1e-12) break;
    double t = 1.0;
    double u_new = potential(d, beta - delta, prec);
    for (int k = 0; k < 40 && !(u_new <= u - 1e-4 * t * decrement); ++k) {
      t *= 0.5;
      u_new = potential(d, beta - t * delta, prec);
    }
    beta -= t * delta;
    u = u_new;
  }
  const Eigen::VectorXd eta = x * beta;
  Eigen::VectorXd w(eta.size());
  for (Eigen::Index i = 0; i < eta.size(); ++i) {
    const double p = sigmoid_d(eta[i]);
    w[i] = p * (1.0 - p);
  }
  h.noalias() = x.transpose() * w.asDiagonal() * x;
  h.diagonal().array() += prec;
  g.map = beta;
  g.map_potential = u;
  g.hessian = h;
  return beta.allFinite() && std::isfinite(u);
}

}  // namespace

Geometry analyse(const data::Dataset& train, double prior_sd) {
  Geometry g;
  const double prec = 1.0 / (prior_sd * prior_sd);
  const auto x = design(train);
  Eigen::MatrixXd bound = 0.25 * (x.transpose() * x);
  bound.diagonal().array() += prec;
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(bound, Eigen::EigenvaluesOnly);
  g.lipschitz = es.eigenvalues().maxCoeff();
  if (!newton_map(train, prec, g)) {
    g.error = "Newton's method for the MAP did not converge";
    return g;
  }
  const Eigen::LLT<Eigen::MatrixXd> llt(g.hessian);
  if (llt.info() != Eigen::Success) {
    g.error = "the Hessian at the MAP is not positive definite";
    return g;
  }
  const Eigen::MatrixXd l = llt.matrixL();
  g.cholesky_inverse =
      l.triangularView<Eigen::Lower>().solve(Eigen::MatrixXd::Identity(l.rows(), l.cols()));
  g.whitened_origin = -(l.transpose() * g.map);
  const Eigen::VectorXd dinv_sqrt = g.hessian.diagonal().cwiseSqrt().cwiseInverse();
  const Eigen::MatrixXd scaled = dinv_sqrt.asDiagonal() * bound * dinv_sqrt.asDiagonal();
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es2(scaled, Eigen::EigenvaluesOnly);
  g.lambda_diag = es2.eigenvalues().maxCoeff();
  // Per-example gradients a_i = (σ(x_iᵀθ̂) − y_i) x_i at the MAP and their variance S² (MATH.md
  // §5.3(b)): V = N(N − n)/n · S² is the minibatch gradient's noise there.
  {
    const Eigen::VectorXd eta = x * g.map;
    Eigen::VectorXd r(eta.size());
    for (Eigen::Index i = 0; i < eta.size(); ++i)
      r[i] = sigmoid_d(eta[i]) - double(train.y[std::size_t(i)]);
    const Eigen::MatrixXd a = r.asDiagonal() * x;
    const Eigen::RowVectorXd mean = a.colwise().mean();
    g.example_var = (a.rowwise() - mean).colwise().squaredNorm().transpose() / double(a.rows() - 1);
  }
  g.ok =
      std::isfinite(g.lipschitz) && std::isfinite(g.lambda_diag) && g.cholesky_inverse.allFinite();
  if (!g.ok) g.error = "non-finite curvature";
  return g;
}

namespace {

/// The step-size rules of docs/experiments/logreg.md from the training set's geometry.
DatasetConfig derive(const data::Dataset& all, const data::Dataset& train,
                     const data::Dataset& test, const Geometry& g, const Settings& s) {
  DatasetConfig c;
  c.rows = all.rows;
  c.train_rows = train.rows;
  c.test_rows = test.rows;
  c.dim = int(train.cols);
  const double want = std::round(s.batch_fraction * double(train.rows));
  const std::size_t hi = std::min({s.batch_max, train.rows, std::size_t(kBatchCapacity)});
  c.batch = std::min(hi, std::max(s.batch_min, std::size_t(want)));
  c.lipschitz = g.lipschitz;
  c.h_momentum = s.rho / std::sqrt(g.lipschitz);
  c.h_sgld = s.rho * s.rho / (s.alpha * g.lipschitz);
  c.friction = s.alpha / c.h_momentum;
  c.sigma_theta = c.h_sgld / (2.0 * c.h_momentum);
  // Gradient-noise heat hV_j/(2C) at the MAP (MATH.md §1.3: Var θ_j gains about that fraction),
  // V_j = N(N − n)/n · S²_j.
  const double big_n = double(train.rows), n = double(c.batch);
  const Eigen::VectorXd v = big_n * (big_n - n) / n * g.example_var;
  c.heat = c.h_momentum * v.maxCoeff() / (2.0 * c.friction);
  // SGRHMC with G⁻¹ = c·D⁻¹ (D = diag Ĥ) is, in ψ = S⁻¹θ (S = G^{-1/2}), SGHMC with unit mass,
  // step h, per-coordinate friction C_j = c/D_jj and Hessian c·D^{-1/2}ĤD^{-1/2}; its
  // gradient-noise heat is h(SVS)_jj/(2G⁻¹_jj) = hV_j/2 whatever c. So: h gives the same maximal
  // heat as SGHMC's, h = 2·heat/max_j V_j; c puts the stiffest scaled mode at ρ per step,
  // h√(c λ_diag) = ρ, capped so that no coordinate's friction per step hc/D_jj exceeds 1.
  c.h_sgrhmc = 2.0 * c.heat / v.maxCoeff();
  const double c_phase = (s.rho / c.h_sgrhmc) * (s.rho / c.h_sgrhmc) / g.lambda_diag;
  c.sgrhmc_c = std::min(c_phase, g.hessian.diagonal().minCoeff() / c.h_sgrhmc);
  c.budget = std::uint64_t(s.sg_steps) * std::uint64_t(c.batch);
  c.map_potential = g.map_potential;
  return c;
}

/// Fills sd_ratio and mean_error of every finished run from the NUTS run of the same split
/// (NaN when NUTS is absent, failed or kept fewer than kMinReferenceDraws draws).
void compare_with_reference(const std::vector<MethodId>& methods, std::vector<Run>& runs) {
  const Run* ref = nullptr;
  for (std::size_t m = 0; m < methods.size() && m < runs.size(); ++m) {
    if (methods[m] == MethodId::NUTS && runs[m].ok && runs[m].kept >= kMinReferenceDraws) {
      ref = &runs[m];
    }
  }
  for (Run& r : runs) {
    r.sd_ratio = r.mean_error = kNaN;
    if (ref == nullptr || !r.ok || r.sd.size() != ref->sd.size()) continue;
    std::vector<double> ratio, err;
    for (std::size_t j = 0; j < r.sd.size(); ++j) {
      ratio.push_back(r.sd[j] / ref->sd[j]);
      err.push_back(std::abs(r.mean[j] - ref->mean[j]) / ref->sd[j]);
    }
    r.sd_ratio = median(ratio);
    r.mean_error = median(err);
  }
}

bool supported_dim(std::size_t d) {
  return d == 7 || d == 8 || d == 14 || d == 15 || d == 25 || d == 86;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Methods.

const char* method_name(MethodId id) {
  switch (id) {
    case MethodId::SGLD:
      return "SGLD";
    case MethodId::SGHMC:
      return "SGHMC";
    case MethodId::SGNHT:
      return "SGNHT";
    case MethodId::SGMGT1:
      return "SGMGT a=1";
    case MethodId::SGMGT2:
      return "SGMGT a=2";
    case MethodId::SGMGTD1:
      return "SGMGT-D a=1";
    case MethodId::SGMGTD2:
      return "SGMGT-D a=2";
    case MethodId::SGRHMC:
      return "SGRHMC";
    case MethodId::SGHMCVhat:
      return "SGHMC + V̂";
    case MethodId::SGNHTVhat:
      return "SGNHT + V̂";
    case MethodId::NUTS:
      return "NUTS (full data)";
    case MethodId::SGLDFlipped:
      return "SGLD, gradient sign flipped";
  }
  return "?";
}

const char* method_key(MethodId id) {
  switch (id) {
    case MethodId::SGLD:
      return "sgld";
    case MethodId::SGHMC:
      return "sghmc";
    case MethodId::SGNHT:
      return "sgnht";
    case MethodId::SGMGT1:
      return "sgmgt1";
    case MethodId::SGMGT2:
      return "sgmgt2";
    case MethodId::SGMGTD1:
      return "sgmgtd1";
    case MethodId::SGMGTD2:
      return "sgmgtd2";
    case MethodId::SGRHMC:
      return "sgrhmc";
    case MethodId::SGHMCVhat:
      return "sghmc-vhat";
    case MethodId::SGNHTVhat:
      return "sgnht-vhat";
    case MethodId::NUTS:
      return "nuts";
    case MethodId::SGLDFlipped:
      return "sgld-flipped";
  }
  return "?";
}

std::vector<MethodId> default_methods() {
  return {MethodId::SGLD,      MethodId::SGHMC,     MethodId::SGNHT,   MethodId::SGMGT1,
          MethodId::SGMGT2,    MethodId::SGMGTD1,   MethodId::SGMGTD2, MethodId::SGRHMC,
          MethodId::SGHMCVhat, MethodId::SGNHTVhat, MethodId::NUTS};
}

bool parse_methods(const std::string& list, std::vector<MethodId>& out, std::string* bad) {
  std::vector<MethodId> all = default_methods();
  all.push_back(MethodId::SGLDFlipped);
  return parse_key_list(list, all, method_key, out, bad);
}

bool method_available(MethodId id, std::string* note) {
  bool ok = true;
  const char* header = "";
  switch (id) {
    case MethodId::SGMGT1:
    case MethodId::SGMGT2:
    case MethodId::SGMGTD1:
    case MethodId::SGMGTD2:
      ok = SGMCMC_LOGREG_HAVE_SGMGT != 0;
      header = "sgmcmc/samplers/sgmgt.hpp";
      break;
    case MethodId::SGRHMC:
      ok = SGMCMC_LOGREG_HAVE_SGRHMC != 0;
      header = "sgmcmc/samplers/sgrhmc.hpp";
      break;
    case MethodId::NUTS:
      ok = SGMCMC_LOGREG_HAVE_NUTS != 0;
      header = "sgmcmc/samplers/nuts.hpp";
      break;
    default:
      break;
  }
  if (!ok && note != nullptr)
    *note = std::string("not available: ") + header + " not in this build";
  return ok;
}

Settings quick_settings() {
  Settings s;
  s.splits = 2;
  s.sg_steps = 2000;
  s.max_kept = 1000;
  return s;
}

// ---------------------------------------------------------------------------------------------
// Summaries.

std::size_t MethodResult::ok_runs() const {
  return std::size_t(std::count_if(runs.begin(), runs.end(), [](const Run& r) { return r.ok; }));
}

namespace {
template <class F>
double mean_over_ok(const std::vector<Run>& runs, F&& f) {
  double sum = 0.0;
  std::size_t n = 0;
  for (const Run& r : runs) {
    if (!r.ok) continue;
    sum += f(r);
    ++n;
  }
  return n > 0 ? sum / double(n) : kNaN;
}
}  // namespace

namespace {
template <class F>
double mean_finite(const std::vector<Run>& runs, F&& f) {
  double sum = 0.0;
  std::size_t n = 0;
  for (const Run& r : runs) {
    if (!r.ok || !std::isfinite(f(r))) continue;
    sum += f(r);
    ++n;
  }
  return n > 0 ? sum / double(n) : kNaN;
}
}  // namespace
double MethodResult::auroc_mean() const {
  return mean_over_ok(runs, [](const Run& r) { return r.auroc; });
}
double MethodResult::auroc_sd() const {
  const double m = auroc_mean();
  double ss = 0.0;
  std::size_t n = 0;
  for (const Run& r : runs) {
    if (!r.ok) continue;
    ss += (r.auroc - m) * (r.auroc - m);
    ++n;
  }
  return n >= 2 ? std::sqrt(ss / double(n - 1)) : kNaN;
}
double MethodResult::ess_mean() const {
  return mean_finite(runs, [](const Run& r) { return r.ess_median; });
}
double MethodResult::seconds_mean() const {
  return mean_over_ok(runs, [](const Run& r) { return r.seconds; });
}
double MethodResult::ess_per_second() const {
  return mean_finite(runs, [](const Run& r) { return r.ess_median / r.seconds; });
}
double MethodResult::gradient_evals_mean() const {
  return mean_over_ok(runs, [](const Run& r) { return double(r.gradient_evals); });
}
double MethodResult::sd_ratio_mean() const {
  return mean_finite(runs, [](const Run& r) { return r.sd_ratio; });
}
double MethodResult::mean_error_mean() const {
  return mean_finite(runs, [](const Run& r) { return r.mean_error; });
}

double median(std::vector<double> v) {
  if (v.empty()) return kNaN;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double auroc(const std::vector<double>& scores, const std::vector<int>& labels) {
  const std::size_t n = scores.size();
  std::vector<std::size_t> idx(n);
  std::iota(idx.begin(), idx.end(), std::size_t(0));
  std::sort(idx.begin(), idx.end(),
            [&](std::size_t a, std::size_t b) { return scores[a] < scores[b]; });
  double rank_sum_pos = 0.0;
  std::size_t pos = 0;
  for (std::size_t i = 0; i < n;) {
    std::size_t j = i;
    while (j + 1 < n && scores[idx[j + 1]] == scores[idx[i]]) ++j;
    const double avg_rank = 0.5 * double(i + j) + 1.0;  // ranks are 1-based
    for (std::size_t k = i; k <= j; ++k) {
      if (labels[idx[k]] == 1) {
        rank_sum_pos += avg_rank;
        ++pos;
      }
    }
    i = j + 1;
  }
  const std::size_t neg = n - pos;
  if (pos == 0 || neg == 0) return kNaN;
  return (rank_sum_pos - double(pos) * double(pos + 1) / 2.0) / (double(pos) * double(neg));
}

namespace detail {

void finish_run(const std::vector<double>& draws, int dim, const data::Dataset& test, Run& run) {
  const std::size_t k = draws.size() / std::size_t(dim);
  run.kept = k;
  if (k == 0) {
    run.ok = false;
    run.error = "no draw kept (the budget ended within the burn-in)";
    return;
  }
  // Posterior predictive mean on the test rows, in chunks of draws (one matrix product each).
  const auto xt = design(test);
  Eigen::VectorXd score = Eigen::VectorXd::Zero(xt.rows());
  constexpr std::size_t kChunk = 512;
  for (std::size_t start = 0; start < k; start += kChunk) {
    const std::size_t len = std::min(kChunk, k - start);
    const Eigen::Map<const RowMajor> theta(draws.data() + start * std::size_t(dim),
                                           Eigen::Index(len), Eigen::Index(dim));
    const Eigen::MatrixXd eta = xt * theta.transpose();
    score += eta.unaryExpr([](double e) { return sigmoid_d(e); }).rowwise().sum();
  }
  score /= double(k);
  run.auroc = auroc(std::vector<double>(score.data(), score.data() + score.size()), test.y);
  // ESS and moments need a few draws; with fewer (NUTS on a tiny budget) they are NaN.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  run.ess_median = run.ess_min = nan;
  run.ess_truncated = 0;
  if (k >= 4) {
    std::vector<double> ess(std::size_t(dim), 0.0);
    for (int j = 0; j < dim; ++j) {
      const auto e = ess_geyer(draws.data() + j, k, std::size_t(dim));
      ess[std::size_t(j)] = std::isfinite(e.ess) ? e.ess : 0.0;
      run.ess_truncated += e.truncated ? 1 : 0;
    }
    run.ess_median = median(ess);
    run.ess_min = *std::min_element(ess.begin(), ess.end());
  }
  run.mean.assign(std::size_t(dim), 0.0);
  run.sd.assign(std::size_t(dim), 0.0);
  for (int j = 0; j < dim; ++j) {
    double m = 0.0, ss = 0.0;
    for (std::size_t t = 0; t < k; ++t) m += draws[t * std::size_t(dim) + std::size_t(j)];
    m /= double(k);
    for (std::size_t t = 0; t < k; ++t) {
      const double e = draws[t * std::size_t(dim) + std::size_t(j)] - m;
      ss += e * e;
    }
    run.mean[std::size_t(j)] = m;
    run.sd[std::size_t(j)] = k >= 2 ? std::sqrt(ss / double(k - 1)) : nan;
  }
  if (!std::isfinite(run.auroc)) {
    run.ok = false;
    run.error = "AUROC undefined (a class is missing from the test part)";
  }
}

}  // namespace detail

// ---------------------------------------------------------------------------------------------
// Data sets.

const std::vector<std::string>& dataset_names() {
  static const std::vector<std::string> names = {"australian", "german", "heart",
                                                 "pima",       "ripley", "caravan"};
  return names;
}

const char* dataset_letter(const std::string& name) {
  if (name == "australian") return "A";
  if (name == "german") return "G";
  if (name == "heart") return "H";
  if (name == "pima") return "P";
  if (name == "ripley") return "R";
  if (name == "caravan") return "C";
  return "?";
}

bool load_dataset(const std::string& data_dir, const std::string& name, data::Dataset& out,
                  std::string* error) {
  data::LoadResult r = data::load_csv(data_dir + "/" + name + ".csv");
  if (!r.ok) {
    if (error != nullptr) *error = r.error;
    return false;
  }
  out = std::move(r.data);
  return true;
}

namespace {
int column(const std::string& dataset) {
  const auto& n = dataset_names();
  return int(std::find(n.begin(), n.end(), dataset) - n.begin());
}
}  // namespace

double paper_auroc(MethodId id, const std::string& dataset) {
  // MATH.md §3.7, columns A G H P R C.
  static const double sgnht[] = {0.89, 0.75, 0.90, 0.86, 0.95, 0.65};
  static const double sgmgt1[] = {0.92, 0.78, 0.91, 0.86, 0.87, 0.70};
  static const double sgmgtd1[] = {0.95, 0.86, 0.95, 0.93, 0.98, 0.73};
  static const double sgmgt2[] = {0.93, 0.79, 0.93, 0.88, 0.86, 0.62};
  static const double sgmgtd2[] = {0.95, 0.90, 0.95, 0.90, 0.97, 0.69};
  const int c = column(dataset);
  if (c < 0 || c >= 6) return kNaN;
  switch (id) {
    case MethodId::SGNHT:
      return sgnht[c];
    case MethodId::SGMGT1:
      return sgmgt1[c];
    case MethodId::SGMGTD1:
      return sgmgtd1[c];
    case MethodId::SGMGT2:
      return sgmgt2[c];
    case MethodId::SGMGTD2:
      return sgmgtd2[c];
    default:
      return kNaN;
  }
}

double paper_ess(MethodId id, const std::string& dataset) {
  static const double sgnht[] = {869, 941, 1911, 2077, 1761, 1873};
  static const double sgmgtd1[] = {3147, 2131, 2448, 4244, 1494, 3605};
  static const double sgmgtd2[] = {2700, 1989, 2768, 3430, 2265, 2969};
  const int c = column(dataset);
  if (c < 0 || c >= 6) return kNaN;
  switch (id) {
    case MethodId::SGNHT:
      return sgnht[c];
    case MethodId::SGMGTD1:
      return sgmgtd1[c];
    case MethodId::SGMGTD2:
      return sgmgtd2[c];
    default:
      return kNaN;
  }
}

// ---------------------------------------------------------------------------------------------
// The protocol.

DatasetResult run_dataset(const std::string& name, const data::Dataset& raw,
                          const Settings& settings) {
  DatasetResult result;
  result.name = name;
  for (MethodId id : settings.methods) {
    MethodResult m;
    m.id = id;
    m.available = method_available(id, &m.note);
    result.methods.push_back(m);
  }
  if (settings.batch_max > std::size_t(kBatchCapacity) || settings.batch_min < 2 ||
      settings.max_kept < 4 || settings.sg_steps < 8 || settings.splits < 1) {
    result.error = "invalid settings";
    return result;
  }
  // Preparation (data/logreg/README.md): standardise on all rows, Ripley's cubic basis, intercept.
  data::Dataset d = raw;
  data::PrepResult p = data::standardise_columns(d);
  if (p.ok && name == "ripley") p = data::ripley_cubic(d);
  if (!p.ok) {
    result.error = p.error;
    return result;
  }
  data::add_intercept(d);
  if (!supported_dim(d.cols)) {
    result.error = "no compiled instantiation for dimension " + std::to_string(d.cols);
    return result;
  }
  for (std::size_t k = 0; k < settings.splits; ++k) {
    data::SplitResult split = data::train_test_split(d, settings.train_fraction, settings.seed + k);
    if (!split.ok) {
      result.error = split.error;
      return result;
    }
    SplitInput in;
    in.train = &split.train;
    in.test = &split.test;
    in.split = k;
    in.geometry = analyse(split.train, settings.prior_sd);
    if (!in.geometry.ok) {
      result.error = in.geometry.error;
      return result;
    }
    in.config = derive(d, split.train, split.test, in.geometry, settings);
    if (k == 0) result.config = in.config;
    std::vector<Run> runs;
    // supported_dim(d.cols) was checked above.
    static_cast<void>(with_dimension(
        d.cols, [&](auto dim) { run_split<decltype(dim)::value>(in, settings, runs); }));
    compare_with_reference(settings.methods, runs);
    for (std::size_t m = 0; m < runs.size() && m < result.methods.size(); ++m) {
      result.methods[m].runs.push_back(runs[m]);
    }
  }
  result.ok = true;
  return result;
}

}  // namespace sgmcmc::logreg
