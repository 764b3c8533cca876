// SPDX-License-Identifier: MIT
// Host-only: the posterior comparison of the logistic-regression experiment (issue 15,
// docs/stan-comparison.md) — every sampler on all rows of a data set, K chains each, per
// coefficient mean, sd and bulk ESS, the CPU seconds used, and the accuracy against a reference.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "data/csv.hpp"

namespace sgmcmc::logreg {

/// The samplers of the posterior comparison.
enum class PosteriorMethod {
  NUTS,            ///< NUTS, dense metric: Laplace start, Stan's windowed warm-up (adapt/)
  SGHMCCV,         ///< SGHMC, control variates, dense preconditioning, temperature-adapted h
  SGLDCV,          ///< SGLD, the same
  SGHMCPlain,      ///< SGHMC as in the AUROC protocol (ρ = 0.2 rule, no CV, no preconditioning)
  SGHMCCVNoAdapt,  ///< negative control: SGHMC-CV at a fixed h far above the adapted one
};

const char* posterior_method_key(PosteriorMethod m);
const char* posterior_method_name(PosteriorMethod m);
std::vector<PosteriorMethod> default_posterior_methods();
/// Parses a comma-separated list of keys; false (and *bad set) on an unknown key.
bool parse_posterior_methods(const std::string& list, std::vector<PosteriorMethod>& out,
                             std::string* bad);

/// Settings of the posterior comparison (docs/stan-comparison.md explains each).
struct PosteriorSettings {
  std::size_t chains = 4;         ///< independent chains per sampler (streams seed, k)
  std::uint64_t seed = 20170806;  ///< base seed of the chains
  double prior_sd = 10.0;         ///< β ~ N(0, prior_sd² I)
  // NUTS
  std::size_t nuts_warmup = 300;  ///< warm-up transitions (windowed adaptation)
  std::size_t nuts_draws = 2000;  ///< kept transitions per chain
  double nuts_target = 0.8;       ///< dual-averaging target acceptance statistic
  bool nuts_windows = true;       ///< re-estimate the dense metric in Stan's slow windows
  // Stochastic-gradient samplers
  std::size_t batch = 32;           ///< minibatch size n (clamped to N): SGLD-CV, plain SGHMC
  std::size_t sghmc_cv_batch = 64;  ///< SGHMC-CV's n (its ESS per step grows with n)
  std::size_t sg_warmup = 4000;     ///< warm-up steps (step-size windows, metric windows)
  std::size_t sg_steps = 40000;     ///< steps after the warm-up
  std::size_t sg_kept = 5000;       ///< kept draws per chain (evenly thinned)
  std::size_t sg_window = 250;      ///< steps per step-size adaptation window
  double sg_tolerance = 0.1;  ///< target excess configurational temperature (sd ratio ≈ 1.05)
  double sg_decay = 0.1;      ///< α = hC of SGHMC
  bool sg_metric_windows = false;  ///< re-estimate the dense preconditioner from SG draws
  bool sg_average = true;          ///< final h: geometric mean of the later half of the windows' h
  bool sg_validated = false;       ///< ... counting a growing window with the h it ran with
  bool sg_noise_correction = false;  ///< estimate V̂ in warm-up, inject N(0, h(2D − hV̂))
  std::size_t sg_noise_every = 2;    ///< warm-up steps per V̂ pair (one extra gradient each)
  /// SG-CV census: rows of leverage x_iᵀH⁻¹x_i (H the Hessian at the MAP) above this times the
  /// median are summed exactly at every step, the batch drawn from the others (0: no census).
  double sg_census_leverage = 10.0;
  std::size_t sg_census_max = 256;  ///< at most this many census rows
  /// SG-CV warm-up: a window whose pooled temperature exceeds this (or is not finite) is undone,
  /// the chains restarting from where it began at the adapted (smaller) h.
  double sg_restart_temperature = 10.0;
  /// The same for the window's largest per-coordinate temperature (infinity: not checked).
  double sg_restart_max_temperature = std::numeric_limits<double>::infinity();
  double noadapt_factor = 4.0;  ///< the negative control's h: this times the rule's start
  bool batch_plain = true;      ///< plain SGHMC with 4 chains: one Batch (the same draws, faster)
  std::vector<PosteriorMethod> methods = default_posterior_methods();
  std::function<void(const std::string&)> progress;  ///< after every chain; may be empty
};

/// One sampler on one data set, its chains pooled.
struct PosteriorRun {
  PosteriorMethod method = PosteriorMethod::NUTS;
  bool ok = false;
  std::string error;
  std::vector<double> mean, sd, ess;  ///< per coefficient (bulk ESS over the chains)
  std::vector<double> rhat;           ///< per coefficient: split R̂ over the chains (BDA3)
  double cpu_seconds = 0.0;           ///< CPU time: setup (MAP, Hessian, reference) + every chain
  double setup_seconds = 0.0;         ///< the part spent on the MAP, the Hessian and ĝ
  std::size_t kept = 0;               ///< kept draws over all chains
  double step_size = 0.0;             ///< final h (mean over chains)
  double temperature = 0.0;           ///< SG: mean configurational temperature after warm-up
  double leapfrog = 0.0;              ///< NUTS: mean leapfrog steps per kept transition
  std::size_t divergent = 0;          ///< NUTS: divergent kept transitions
  double treedepth_hit = 0.0;         ///< NUTS: share of kept transitions at the maximal depth
  std::uint64_t gradient_evals = 0;   ///< per-example gradient evaluations, all chains
  std::size_t census = 0;             ///< SG-CV: rows summed exactly at every step
  std::size_t restarts = 0;           ///< SG-CV: warm-up windows undone (too hot)
  double min_ess() const;
  double max_rhat() const;        ///< the largest split R̂ (NaN without R̂)
  double ess_per_second() const;  ///< min ESS / cpu_seconds
};

/// A reference or a competitor read back from a CSV (coefficient,mean,sd,ess_bulk,...).
struct Moments {
  std::vector<double> mean, sd, ess;
};

/// Accuracy of a run against a reference.
struct Accuracy {
  double max_mean_error = 0.0;  ///< max_j |mean_j − ref_j| / ref sd_j
  double min_sd_ratio = 0.0;    ///< min_j sd_j / ref sd_j
  double max_sd_ratio = 0.0;
  bool within(double mean_tol, double sd_lo, double sd_hi) const {
    return max_mean_error <= mean_tol && min_sd_ratio >= sd_lo && max_sd_ratio <= sd_hi;
  }
};
Accuracy accuracy(const std::vector<double>& mean, const std::vector<double>& sd,
                  const Moments& reference);

/// Prepares a raw data set as the experiment does (standardise, Ripley's cubic basis, intercept)
/// and runs every method on all its rows. `error` is set (and out empty) on failure.
std::vector<PosteriorRun> run_posterior_dataset(const std::string& name, const data::Dataset& raw,
                                                const PosteriorSettings& s, std::string* error);

/// Writes dir/NAME_KEY.csv: coefficient,mean,sd,ess_bulk,rhat then a comment line with the CPU
/// seconds.
bool write_posterior_csv(const std::string& path, const PosteriorRun& run);
/// Reads a CSV with columns coefficient,mean,sd,ess_bulk (Stan's run_stan.R output or ours).
bool read_moments_csv(const std::string& path, Moments& out, std::string* error);

/// Rank-normalised split bulk ESS (Vehtari, Gelman, Simpson, Carpenter & Bürkner 2021), as Stan's
/// ess_bulk: draws[c] is chain c's draws of one coordinate (equal lengths ≥ 4).
double ess_bulk(const std::vector<std::vector<double>>& draws);

/// Split R̂ (BDA3; diagnostics/rhat.hpp's rhat_from_sequences) of one coordinate: draws[c] is chain
/// c's draws, each split in two halves (the middle draw of an odd length dropped). NaN for fewer
/// than 2 chains or 4 draws per chain, or unequal lengths.
double split_rhat(const std::vector<std::vector<double>>& draws);

}  // namespace sgmcmc::logreg
