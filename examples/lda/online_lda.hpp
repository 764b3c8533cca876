// SPDX-License-Identifier: MIT
// Online LDA at small scale (recipe paper §4.2, Supplement F.2): a synthetic corpus, the
// expanded-mean model with per-document Gibbs sampling, held-out perplexity, four samplers.
#pragma once

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "sgmcmc/core/kinetic_mg.hpp"
#include "sgmcmc/host/rng.hpp"
#include "sgmcmc/samplers/sghmc.hpp"
#include "sgmcmc/samplers/sgld.hpp"
#include "sgmcmc/samplers/sgrhmc.hpp"
#include "sgmcmc/samplers/sgrld.hpp"

namespace lda {

using sgmcmc::Vector;

inline constexpr int kTopics = 5;              ///< K
inline constexpr int kWords = 100;             ///< W (vocabulary)
inline constexpr int kMaxLen = 128;            ///< longest document (fixed Gibbs buffers)
inline constexpr int kMaxBatch = 64;           ///< largest minibatch
inline constexpr int kDim = kTopics * kWords;  ///< θ = (θ_kw), entry k W + w

using Theta = Vector<double, kDim>;
using Rng = sgmcmc::host::Rng;

/// Uniform in (0, 1) from one 64-bit word.
inline double uniform(Rng& rng) {
  return (static_cast<double>(rng() >> 11) + 0.5) * 1.1102230246251565e-16;
}

/// Gamma(shape a, scale 1): the library's Marsaglia–Tsang draw (core/kinetic_mg.hpp), whose
/// rejection loop is capped. A reached cap means a failed RNG: the program stops with a message
/// instead of looping forever.
inline double gamma_draw(Rng& rng, double a) {
  bool exhausted = false;
  const double g = sgmcmc::gamma_variate(rng, a, 1.0, &exhausted);
  if (exhausted || !(g >= 0.0)) {
    std::fprintf(stderr, "lda: Gamma(%g) draw failed (%s)\n", a,
                 exhausted ? "rejection cap reached: is the RNG failing?" : "invalid shape");
    std::exit(1);
  }
  return g;
}

/// Index drawn from unnormalised weights p[0..n).
inline int categorical(Rng& rng, const double* p, int n) {
  double total = 0.0;
  for (int i = 0; i < n; ++i) total += p[i];
  double u = uniform(rng) * total;
  for (int i = 0; i < n; ++i) {
    u -= p[i];
    if (u <= 0.0) return i;
  }
  return n - 1;
}

// ---------------------------------------------------------------------------------------------
// The synthetic corpus (host side: plain vectors).

/// Documents drawn from LDA itself: topics β_k ~ Dir(topic_conc), mixtures π_d ~ Dir(doc_conc),
/// lengths uniform on [min_len, max_len], words by z ~ π_d, w ~ β_z.
struct Corpus {
  std::vector<std::array<double, kWords>> beta;                ///< the true topics
  std::vector<std::vector<std::uint16_t>> docs;                ///< the streamed training documents
  std::vector<std::vector<std::uint16_t>> observed, held_out;  ///< test documents, split

  static Corpus generate(std::uint64_t seed, int train_docs, int test_docs,
                         double topic_conc = 0.05, double doc_conc = 0.2, int min_len = 40,
                         int max_len = 120) {
    Rng rng(seed, 11);
    Corpus c;
    c.beta.resize(kTopics);
    for (auto& b : c.beta) {
      double s = 0.0;
      for (double& x : b) s += (x = gamma_draw(rng, topic_conc) + 1e-300);
      for (double& x : b) x /= s;
    }
    auto doc = [&](std::vector<std::uint16_t>& out) {
      std::array<double, kTopics> pi{};
      double s = 0.0;
      for (double& x : pi) s += (x = gamma_draw(rng, doc_conc) + 1e-300);
      for (double& x : pi) x /= s;
      const int len = min_len + static_cast<int>(uniform(rng) * (max_len - min_len + 1));
      out.resize(static_cast<std::size_t>(std::min(len, kMaxLen)));
      for (auto& w : out) {
        const int k = categorical(rng, pi.data(), kTopics);
        w = static_cast<std::uint16_t>(
            categorical(rng, c.beta[static_cast<std::size_t>(k)].data(), kWords));
      }
    };
    c.docs.resize(static_cast<std::size_t>(train_docs));
    for (auto& d : c.docs) doc(d);
    c.observed.resize(static_cast<std::size_t>(test_docs));
    c.held_out.resize(static_cast<std::size_t>(test_docs));
    for (int i = 0; i < test_docs; ++i) {
      std::vector<std::uint16_t> d;
      doc(d);
      for (std::size_t j = 0; j < d.size(); ++j) {  // even positions observed, odd held out
        (j % 2 == 0 ? c.observed : c.held_out)[static_cast<std::size_t>(i)].push_back(d[j]);
      }
    }
    return c;
  }
};

// ---------------------------------------------------------------------------------------------
// The model: expanded-mean LDA (Patterson & Teh 2013; recipe paper Fig. 3 and Eq. S.29).

/// A document as the model sees it: a pointer into the caller's storage and a length.
struct DocRef {
  const std::uint16_t* words = nullptr;
  int length = 0;
};

/// Per-document Gibbs sampling of the topic assignments z given β (θ normalised per topic),
/// with the document mixture integrated out (recipe paper Eq. S.30, with β_{k,w} where the
/// supplement prints θ_{k,w}: p(w | z = k) = β_kw under the expanded mean). Fixed buffers.
/// Adds the averaged counts E[n_dkw] of the last `sweeps - burn` sweeps to `acc` (K x W, row
/// major) and, if pi is not null, the averaged (γ + n_dk)/(N + Kγ) to pi.
inline void gibbs_document(const DocRef& d, const double* beta, double gamma, int sweeps, int burn,
                           Rng& rng, double* acc, double* pi = nullptr) {
  std::array<std::uint8_t, kMaxLen> z{};
  std::array<int, kTopics> ndk{};
  std::array<double, kTopics> p{};
  const int n = std::min(d.length, kMaxLen);
  for (int j = 0; j < n; ++j) {  // initialise from p(z | w) ∝ β_{k w}
    for (int k = 0; k < kTopics; ++k)
      p[static_cast<std::size_t>(k)] = beta[k * kWords + d.words[j]];
    z[static_cast<std::size_t>(j)] = static_cast<std::uint8_t>(categorical(rng, p.data(), kTopics));
    ++ndk[z[static_cast<std::size_t>(j)]];
  }
  const double w_avg = 1.0 / (sweeps - burn);
  for (int s = 0; s < sweeps; ++s) {
    for (int j = 0; j < n; ++j) {
      const int w = d.words[j];
      --ndk[z[static_cast<std::size_t>(j)]];
      for (int k = 0; k < kTopics; ++k) {
        p[static_cast<std::size_t>(k)] =
            (gamma + ndk[static_cast<std::size_t>(k)]) * beta[k * kWords + w];
      }
      const int k = categorical(rng, p.data(), kTopics);
      z[static_cast<std::size_t>(j)] = static_cast<std::uint8_t>(k);
      ++ndk[static_cast<std::size_t>(k)];
    }
    if (s >= burn) {
      if (acc) {
        for (int j = 0; j < n; ++j)
          acc[z[static_cast<std::size_t>(j)] * kWords + d.words[j]] += w_avg;
      }
      if (pi) {
        for (int k = 0; k < kTopics; ++k) {
          pi[k] += w_avg * (gamma + ndk[static_cast<std::size_t>(k)]) / (n + kTopics * gamma);
        }
      }
    }
  }
}

/// β = θ normalised per topic (row k of the K x W matrix); θ a Theta or a state's position map.
template <class T>
void normalise(const T& theta, double* beta) {
  for (int k = 0; k < kTopics; ++k) {
    double s = 0.0;
    for (int w = 0; w < kWords; ++w) s += theta[k * kWords + w];
    for (int w = 0; w < kWords; ++w) beta[k * kWords + w] = theta[k * kWords + w] / s;
  }
}

/// The minibatch model. U(θ) = −log p(θ | corpus) with Gamma(α, 1) priors on θ_kw; its gradient
/// on a minibatch S̃ of a corpus of |S| documents (Eq. S.29, sign flipped for U):
///   ∂U/∂θ_kw ≈ −(α − 1)/θ_kw + 1 − (|S|/|S̃|) Σ_{d∈S̃} E_z[n_dkw/θ_kw − n_dk·/θ_k·],
/// the expectation by Gibbs sampling per document. No heap: the batch is an array of
/// references, the Gibbs buffers are fixed arrays.
class Model {
 public:
  struct Params {
    double alpha = 0.01;         ///< Gamma prior shape on θ_kw
    double gamma = 0.1;          ///< Dirichlet prior on each document's topic mixture
    double corpus_docs = 10000;  ///< |S|
    int sweeps = 20;             ///< Gibbs sweeps per document and gradient
    int burn = 10;               ///< of which discarded
  };
  Model(const Params& p, std::uint64_t seed) : p_(p), rng_(seed, 21) {}

  /// Points the model at the next minibatch (n ≤ kMaxBatch documents; the storage must outlive
  /// the next step).
  void set_batch(const std::vector<std::uint16_t>* docs, int n) {
    n_ = std::min(n, kMaxBatch);
    for (int i = 0; i < n_; ++i) {
      batch_[static_cast<std::size_t>(i)] = {docs[i].data(), static_cast<int>(docs[i].size())};
    }
  }
  const Params& params() const { return p_; }

  /// g = ∇Ũ(θ) on the current minibatch (θ, g: the engine's maps, or Thetas).
  template <class T, class G>
  void gradient(const T& theta, G& g) const {
    std::array<double, kDim> beta{}, acc{};
    normalise(theta, beta.data());
    for (int i = 0; i < n_; ++i) {
      gibbs_document(batch_[static_cast<std::size_t>(i)], beta.data(), p_.gamma, p_.sweeps, p_.burn,
                     rng_, acc.data());
    }
    const double scale = p_.corpus_docs / std::max(n_, 1);
    for (int k = 0; k < kTopics; ++k) {
      double tk = 0.0, nk = 0.0;
      for (int w = 0; w < kWords; ++w) {
        tk += theta[k * kWords + w];
        nk += acc[static_cast<std::size_t>(k * kWords + w)];
      }
      for (int w = 0; w < kWords; ++w) {
        const int i = k * kWords + w;
        g[i] = -(p_.alpha - 1.0) / theta[i] + 1.0 -
               scale * (acc[static_cast<std::size_t>(i)] / theta[i] - nk / tk);
      }
    }
  }

 private:
  Params p_;
  std::array<DocRef, kMaxBatch> batch_{};
  int n_ = 0;
  mutable Rng rng_;
};

/// Held-out perplexity by document completion: for each test document, its topic mixture is
/// estimated by Gibbs sampling on the observed half with β fixed, and the held-out half scores
/// log Σ_k π̂_k β_kw per word; perplexity = exp(−Σ log p / number of held-out words).
inline double perplexity(const Corpus& c, const double* beta, double gamma, Rng& rng,
                         int sweeps = 20, int burn = 10) {
  double ll = 0.0;
  long n = 0;
  for (std::size_t d = 0; d < c.observed.size(); ++d) {
    std::array<double, kTopics> pi{};
    const DocRef ref{c.observed[d].data(), static_cast<int>(c.observed[d].size())};
    gibbs_document(ref, beta, gamma, sweeps, burn, rng, nullptr, pi.data());
    for (std::uint16_t w : c.held_out[d]) {
      double p = 0.0;
      for (int k = 0; k < kTopics; ++k) p += pi[static_cast<std::size_t>(k)] * beta[k * kWords + w];
      ll += std::log(p);
      ++n;
    }
  }
  return std::exp(-ll / static_cast<double>(n));
}

// ---------------------------------------------------------------------------------------------
// The samplers (recipe paper §4.2; G(θ) = diag(θ)⁻¹ for the Riemannian ones).

/// G⁻¹(θ) = diag(θ): the expanded-mean metric, separable.
struct SimplexInverseMetric {
  template <class T, int N>
  Vector<T, N> operator()(const Vector<T, N>& th) const {
    return th;
  }
};
/// SGRLD's Γ for it: Σ_j ∂_j θ_i δ_ij = 1 (MATH.md §2.2).
struct SimplexDivergence {
  template <int N>
  Vector<double, N> operator()(const Vector<double, N>&) const {
    return Vector<double, N>::Ones();
  }
};
/// SGRHMC's ∇·S for S = diag(√θ): 1/(2√θ_i).
struct SimplexSqrtDivergence {
  template <int N>
  Vector<double, N> operator()(const Vector<double, N>& th) const {
    return (0.5 / th.array().sqrt()).matrix();
  }
};
using SimplexMetric = sgmcmc::InverseMetric<sgmcmc::DiagonalShape, SimplexInverseMetric, true>;

enum class Method { SGLD, SGHMC, SGRLD, SGRHMC };

inline const char* name(Method m) {
  switch (m) {
    case Method::SGLD:
      return "SGLD";
    case Method::SGHMC:
      return "SGHMC";
    case Method::SGRLD:
      return "SGRLD";
    case Method::SGRHMC:
      return "SGRHMC";
  }
  return "?";
}

/// One run's settings.
struct RunSettings {
  Method method = Method::SGRLD;
  double step = 0.01;       ///< h; with a schedule h₀ of h_t = h₀ (1 + t/b)^{-c}
  double schedule_b = 0.0;  ///< schedule b (0: constant step)
  double schedule_c = 0.0;  ///< schedule c
  double alpha = 0.01;      ///< Gamma prior shape
  double gamma = 0.1;       ///< document Dirichlet
  bool euler = false;       ///< SGRHMC: explicit Euler (Algorithm 1) instead of kick–drift
  int batch = 50;           ///< documents per minibatch
  int docs = 10000;         ///< documents streamed (one pass over the corpus prefix)
  int eval_every = 1000;    ///< documents between perplexity evaluations
  std::uint64_t seed = 1;
};

/// What a run produced.
struct RunResult {
  std::vector<int> docs_seen;
  std::vector<double> perplexity;
  double seconds_per_100_docs = 0.0;  ///< wall clock of gradients and steps, evaluations excluded
  bool ok = true;
  std::string failure;
};

/// Boundary reflection (the paper's "boundary reflection to ensure the positivity"): θ_kw ← |θ_kw|,
/// and for momentum samplers r_kw ← −r_kw where θ was reflected. A floor of 1e-100 keeps 1/θ
/// finite (the Gamma(α, 1) prior with α ≪ 1 drives unused θ_kw towards 0).
template <class Z>
void reflect(Z& z, bool momentum) {
  auto th = z.position();
  for (int i = 0; i < kDim; ++i) {
    if (th[i] < 0.0) {
      th[i] = -th[i];
      if constexpr (Z::blocks > 1) {
        if (momentum) z.momentum()[i] = -z.momentum()[i];
      }
    }
    th[i] = std::max(th[i], 1e-100);
  }
}

/// Streams `docs` training documents in minibatches through one sampler, evaluating held-out
/// perplexity every eval_every documents.
inline RunResult run(const Corpus& c, const RunSettings& s) {
  RunResult out;
  Model::Params mp;
  mp.alpha = s.alpha;
  mp.gamma = s.gamma;
  mp.corpus_docs = static_cast<double>(c.docs.size());
  Model model(mp, s.seed);
  Rng rng(s.seed, 1);
  Rng eval_rng(s.seed, 2);
  Theta theta0;
  for (int i = 0; i < kDim; ++i) theta0[i] = 0.5 + uniform(rng);  // θ_kw ~ U(0.5, 1.5)
  std::array<double, kDim> beta{};
  double busy = 0.0;

  auto loop = [&](const auto& sampler, auto z, bool momentum, auto&& set_step) {
    int seen = 0, step = 0;
    while (seen + s.batch <= s.docs && seen + s.batch <= static_cast<int>(c.docs.size())) {
      const auto t0 = std::chrono::steady_clock::now();
      model.set_batch(&c.docs[static_cast<std::size_t>(seen)], s.batch);
      set_step(step);
      const sgmcmc::Status st = sampler.step(z, model, rng);
      if (!st) {
        out.ok = false;
        out.failure = std::string(name(s.method)) + ": " + st.message() + " at document " +
                      std::to_string(seen);
        return;
      }
      reflect(z, momentum);
      busy += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      seen += s.batch;
      ++step;
      if (seen % s.eval_every == 0) {
        normalise(z.position(), beta.data());
        out.docs_seen.push_back(seen);
        out.perplexity.push_back(perplexity(c, beta.data(), s.gamma, eval_rng));
      }
    }
    out.seconds_per_100_docs = busy / std::max(seen, 1) * 100.0;
  };

  switch (s.method) {
    case Method::SGLD: {
      sgmcmc::SGLD<double, kDim> sampler({s.step, sgmcmc::Scaled<double>{1.0}});
      loop(sampler, sampler.start(theta0), false, [](int) {});
      break;
    }
    case Method::SGHMC: {
      sgmcmc::SGHMC<double, kDim> sampler({s.step, 1.0, 1.0});  // C = M = I (Supplement F.2)
      loop(sampler, sampler.start(theta0), true, [](int) {});
      break;
    }
    case Method::SGRLD: {
      using S = sgmcmc::SGRLD<double, kDim, SimplexMetric, SimplexDivergence>;
      S sampler({s.step, {}, {}});
      loop(sampler, sampler.start(theta0), false, [&](int t) {
        if (s.schedule_b > 0) {
          // h_t = h₀ (1 + t/b)^{-c}, i.e. the paper's (a(1 + t/b))^{-c} with a = h₀^{-1/c}
          static_cast<void>(
              sampler.set_step_size(s.step * std::pow(1.0 + t / s.schedule_b, -s.schedule_c)));
        }
      });
      break;
    }
    case Method::SGRHMC: {
      if (s.euler) {
        using S = sgmcmc::SGRHMC<double, kDim, SimplexMetric, SimplexSqrtDivergence,
                                 sgmcmc::ExplicitEuler>;
        S sampler({s.step, {}, {}});
        loop(sampler, sampler.start(theta0), true, [](int) {});
      } else {
        using S = sgmcmc::SGRHMC<double, kDim, SimplexMetric, SimplexSqrtDivergence>;
        S sampler({s.step, {}, {}});
        loop(sampler, sampler.start(theta0), true, [](int) {});
      }
      break;
    }
  }
  return out;
}

/// The settings used by example_lda and its test: the hyper-parameters of Supplement F.2 (α, γ
/// = 0.01, 0.1 for SGLD and SGHMC; 0.0001, 0.01 for the Riemannian samplers; SGHMC C = M = I;
/// minibatches of 50) and each sampler's step from a grid search at this scale (example_lda
/// --grid: mean perplexity over a 5000-document pilot, seed 7), not the paper's values, which
/// were tuned for K = 50 topics on Wikipedia. SGRHMC steps kick–drift (Algorithm 1's explicit
/// Euler diverged for h ≥ 0.02 here and was noisier below); SGRLD uses a constant step.
inline std::vector<RunSettings> default_settings() {
  std::vector<RunSettings> s(4);
  s[0].method = Method::SGLD;
  s[0].step = 1e-3;
  s[1].method = Method::SGHMC;
  s[1].step = 1e-2;
  s[2].method = Method::SGRLD;
  s[2].step = 1e-3;
  s[3].method = Method::SGRHMC;
  s[3].step = 1e-2;
  for (int m = 2; m < 4; ++m) {
    s[static_cast<std::size_t>(m)].alpha = 1e-4;
    s[static_cast<std::size_t>(m)].gamma = 0.01;
  }
  return s;
}

/// Perplexity of the true topics (the floor a sampler can reach) with the given γ.
inline double true_perplexity(const Corpus& c, double gamma, std::uint64_t seed) {
  std::array<double, kDim> beta{};
  for (int k = 0; k < kTopics; ++k) {
    for (int w = 0; w < kWords; ++w) {
      beta[static_cast<std::size_t>(k * kWords + w)] =
          c.beta[static_cast<std::size_t>(k)][static_cast<std::size_t>(w)];
    }
  }
  Rng rng(seed, 3);
  return perplexity(c, beta.data(), gamma, rng);
}

}  // namespace lda
