// SPDX-License-Identifier: MIT
// Host-only core of the logistic-regression experiment (MATH.md §3.7): settings, per-dataset runs
// of every sampler on fixed-seed train/test splits, held-out AUROC, Geyer ESS, timing.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "data/csv.hpp"

namespace sgmcmc::logreg {

/// The methods of the table, in table order; SGLDFlipped is the test suite's negative control
/// (SGLD on the gradient with its sign flipped), never part of the default list.
enum class MethodId {
  SGLD,
  SGHMC,
  SGNHT,
  SGMGT1,
  SGMGT2,
  SGMGTD1,
  SGMGTD2,
  SGRHMC,
  SGHMCVhat,
  SGNHTVhat,
  NUTS,
  SGLDFlipped,
};

/// Display name ("SGMGT-D a=1", "SGHMC + V̂", ...) and a file-safe key ("sgmgtd1").
const char* method_name(MethodId id);
const char* method_key(MethodId id);
/// Every method of the table, in table order (SGLDFlipped excluded).
std::vector<MethodId> default_methods();
/// Parses a comma-separated list of keys; false (and *bad set) on an unknown key.
bool parse_methods(const std::string& list, std::vector<MethodId>& out, std::string* bad);

/// Parses a comma-separated list of keys into ids: each key must be key_of(id) for one of
/// `candidates`. False (and *bad set to the key) on an unknown key; false on an empty list.
template <class Id, class KeyOf>
bool parse_key_list(const std::string& list, const std::vector<Id>& candidates, KeyOf key_of,
                    std::vector<Id>& out, std::string* bad) {
  out.clear();
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    const std::string key = list.substr(start, comma - start);
    bool found = false;
    for (const Id id : candidates) {
      if (key == key_of(id)) {
        out.push_back(id);
        found = true;
      }
    }
    if (!found) {
      if (bad != nullptr) *bad = key;
      return false;
    }
    start = comma + 1;
  }
  return !out.empty();
}

/// Every setting of the protocol (docs/experiments/logreg.md explains each choice).
struct Settings {
  std::size_t splits = 5;         ///< train/test splits per data set
  double train_fraction = 0.8;    ///< rows in the training part
  std::uint64_t seed = 20170806;  ///< split k uses seed + k; chain streams derive from it
  std::size_t sg_steps = 20000;   ///< steps of every stochastic-gradient sampler
  double burn_in = 0.25;          ///< fraction of the budget discarded (SG: of the steps)
  std::size_t max_kept = 5000;    ///< kept draws per chain (post-burn-in, evenly thinned)
  double batch_fraction = 0.1;    ///< n = clamp(round(fraction · N_train), batch_min, max)
  std::size_t batch_min = 32;     ///< smallest minibatch
  std::size_t batch_max = 512;    ///< largest minibatch (the compile-time capacity)
  double rho = 0.2;               ///< h·√L for the momentum samplers (stiffest-mode phase/step)
  double alpha = 0.1;             ///< h·C: momentum decay per step (C, A, σ_p from it)
  double vhat_smoothing = 0.02;   ///< λ of GradientNoiseEstimator (memory ~50 batches)
  double nuts_step = 0.5;         ///< NUTS initial step size (whitened units), then adapted
  double prior_sd = 10.0;         ///< β ~ N(0, prior_sd² I)
  bool start_at_map = true;       ///< every chain starts at the MAP (false: at β = 0)
  std::vector<MethodId> methods = default_methods();
  /// Called after every (split, method) chain with a short description; may be empty.
  std::function<void(const std::string&)> progress;
};

/// The quick preset: 2 splits, 2000 SG steps, 1000 kept draws.
Settings quick_settings();

/// One chain on one split.
struct Run {
  bool ok = false;
  std::string error;                 ///< why the chain stopped (empty when ok)
  double auroc = 0.0;                ///< held-out AUROC of the posterior predictive mean
  double ess_median = 0.0;           ///< median over coordinates of Geyer's ESS of the kept draws
  double ess_min = 0.0;              ///< smallest coordinate ESS
  std::size_t ess_truncated = 0;     ///< coordinates whose Geyer sequence hit the lag window
  double seconds = 0.0;              ///< wall time of the sampling loop (post-processing excluded)
  std::uint64_t gradient_evals = 0;  ///< per-example gradient evaluations, burn-in included
  std::size_t iterations = 0;        ///< sampler steps (NUTS: transitions)
  std::size_t kept = 0;              ///< draws used for AUROC and ESS
  std::uint64_t vhat_limited = 0;    ///< V̂ runs: steps where the PSD policy clipped V̂
  double vhat_limited_coords = 0.0;  ///< V̂ runs: mean fraction of coordinates clipped per step
  std::uint64_t vhat_fallbacks = 0;  ///< V̂ runs: steps where the sampler refused the clipped V̂
  double vhat_heat = 0.0;            ///< V̂ runs: max_i V̂_i / limit_i at the end (= hV̂/(2C))
  double nuts_mean_leapfrog = 0.0;   ///< NUTS: mean leapfrog steps per kept transition
  double nuts_accept = 0.0;          ///< NUTS: mean acceptance statistic of kept transitions
  std::size_t nuts_divergent = 0;    ///< NUTS: kept transitions with a divergence
  double nuts_step = 0.0;            ///< NUTS: step size after the burn-in's adaptation
  std::vector<double> mean, sd;      ///< per coordinate, over the kept draws
  double sd_ratio = 0.0;             ///< median_j sd_j / sd_j(NUTS) on the same split (NaN: none)
  double mean_error = 0.0;           ///< median_j |mean_j − mean_j(NUTS)| / sd_j(NUTS)
};

/// One method over every split, with the summaries the table prints.
struct MethodResult {
  MethodId id = MethodId::SGLD;
  bool available = true;  ///< false: the sampler's header is not usable in this build
  std::string note;       ///< why not available, or a remark
  std::vector<Run> runs;  ///< one per split

  std::size_t ok_runs() const;
  double auroc_mean() const;  ///< over the splits that finished (NaN if none)
  double auroc_sd() const;    ///< sample sd over splits (NaN with fewer than 2)
  double ess_mean() const;    ///< mean over splits of the per-split median ESS
  double seconds_mean() const;
  double ess_per_second() const;  ///< mean over splits of median ESS / seconds
  double gradient_evals_mean() const;
  double sd_ratio_mean() const;  ///< over the splits with a NUTS reference (NaN if none)
  double mean_error_mean() const;
};

/// What the protocol derived for one data set (values of split 0; L varies little by split).
struct DatasetConfig {
  std::size_t rows = 0, train_rows = 0, test_rows = 0;
  int dim = 0;                 ///< coefficients including the intercept
  std::size_t batch = 0;       ///< minibatch size n
  double lipschitz = 0.0;      ///< L = λ_max(XᵀX)/4 + 1/prior_sd², bound on the Hessian of U
  double h_sgld = 0.0;         ///< ρ²/(αL)
  double h_momentum = 0.0;     ///< ρ/√L (SGHMC, SGNHT, SGMGT, SGMGT-D)
  double friction = 0.0;       ///< α/h: SGHMC's C, SGNHT's and SGMGT's A, SGMGT-D's σ_p
  double sigma_theta = 0.0;    ///< SGMGT-D's σ_θ = h_sgld / (2 h)
  double heat = 0.0;           ///< max_j hV_j/(2C) at the MAP: SGHMC's gradient-noise heat
  double h_sgrhmc = 0.0;       ///< SGRHMC step (see logreg.md)
  double sgrhmc_c = 0.0;       ///< SGRHMC: G⁻¹ = c · diag(Ĥ)⁻¹
  std::uint64_t budget = 0;    ///< per-example gradient evaluations per chain: sg_steps · n
  double map_potential = 0.0;  ///< U at the MAP (Newton), training part of split 0
};

/// One data set: its configuration and one MethodResult per requested method.
struct DatasetResult {
  std::string name;
  bool ok = false;
  std::string error;
  DatasetConfig config;
  std::vector<MethodResult> methods;
};

/// Loads data_dir/<name>.csv (strict loader); false with *error on failure.
bool load_dataset(const std::string& data_dir, const std::string& name, data::Dataset& out,
                  std::string* error);

/// Runs the protocol on a raw data set (as loaded: raw features, label y); `name` selects the
/// Ripley cubic basis ("ripley"). Never throws; problems are reported in the result.
DatasetResult run_dataset(const std::string& name, const data::Dataset& raw,
                          const Settings& settings);

/// The six data sets, in the paper's column order: australian, german, heart, pima, ripley,
/// caravan; their one-letter paper labels A G H P R C.
const std::vector<std::string>& dataset_names();
const char* dataset_letter(const std::string& name);

/// The paper's numbers (MATH.md §3.7), NaN where it reports none.
double paper_auroc(MethodId id, const std::string& dataset);
double paper_ess(MethodId id, const std::string& dataset);

/// Held-out AUROC of scores against 0/1 labels (Mann–Whitney, ties count one half). NaN if a
/// class is missing.
double auroc(const std::vector<double>& scores, const std::vector<int>& labels);

/// Fewest kept NUTS draws for its moments to serve as the reference of sd_ratio and mean_error
/// (relative standard error of an sd from ≥ 50 near-independent draws: ≤ 10%).
inline constexpr std::size_t kMinReferenceDraws = 50;

/// Median of a copy of v (mean of the two middle values for even sizes; NaN if empty).
double median(std::vector<double> v);

}  // namespace sgmcmc::logreg
