// SPDX-License-Identifier: MIT
// sgmcmc_fashion: the Bayesian 784-100-10 network on FashionMNIST (issue 11, seed 002's
// experiment) with SGHMC, SGLD, SGD, SGD with momentum, SGHMC with an online V̂, SGHMC with the
// learned refresh and the seed's SGNUTS (a biased control), at one gradient budget. Prints the
// settings and a table; writes curves, a PNG of accuracy and NLL against epochs and table.md.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "common/cli.hpp"
#include "common/gnuplot.hpp"
#include "common/table.hpp"
#include "data/idx.hpp"
#include "experiments/fashion_core.hpp"

namespace {

namespace fx = sgmcmc::fashion;
using sgmcmc::common::format;

constexpr const char* kUsage =
    "usage: sgmcmc_fashion [options]\n"
    "  --out DIR              output directory (default out/fashion)\n"
    "  --data DIR             FashionMNIST directory (default /usr/share/datasets/fashion-mnist)\n"
    "  --methods a,b,...      sghmc, sgld, sgd, sgd-momentum, sghmc-noise, sghmc-learned,\n"
    "                         sgnuts-seed (default: all, in this order)\n"
    "  --epochs E             gradient budget of every method, in epochs (default 100)\n"
    "  --burn-in B            samplers keep no sample before epoch B (default 20)\n"
    "  --samples-per-epoch S  samples kept per epoch after burn-in (default 4)\n"
    "  --batch N              images per minibatch, 2..500 (default 500)\n"
    "  --train N --test M     use the first N training and M test images (default all)\n"
    "  --validation V         hold out the last V of those training images and score on them\n"
    "                         instead of the test images (tuning without touching the test set)\n"
    "  --seed S               every random number (default 20140601)\n"
    "  --sghmc-eta X --sghmc-alpha A   SGHMC (all three variants), (eta, alpha) form\n"
    "  --sgld-eta X  --sgd-eta X  --momentum-eta X --momentum-alpha A\n"
    "  --nuts-eta X  --nuts-alpha A  --nuts-resample N   the seed's SGNUTS\n"
    "  --noise-subbatches K   SGHMC with V-hat: sub-batches per batch (default 5)\n"
    "  --learned-max-length L SGHMC with the learned refresh: cap on a learned length in steps\n"
    "                         (default 200; its 16 lengths are learned in warm-up)\n"
    "  --shuffle-labels       negative control: train on permuted labels\n"
    "  --no-progress          no progress bar on stderr\n";

struct Options {
  std::string out = "out/fashion";
  std::string data = sgmcmc::data::kFashionMnistDir;
  std::string methods;
  std::uint64_t train = 0;
  std::uint64_t test = 0;
  std::uint64_t validation = 0;
  fx::Settings s;
};

int parse(int argc, char** argv, Options& o) {
  sgmcmc::common::Args args(argc, argv, "sgmcmc_fashion", kUsage);
  o.s.progress = true;
  const double tiny = std::numeric_limits<double>::min();
  while (args.next()) {
    if (args.text("--out", o.out) || args.text("--data", o.data) ||
        args.text("--methods", o.methods) || args.count("--epochs", o.s.epochs, 1) ||
        args.count("--burn-in", o.s.burn_in_epochs) ||
        args.count("--samples-per-epoch", o.s.samples_per_epoch, 1) ||
        args.count("--batch", o.s.batch, 2) || args.count("--train", o.train, 1) ||
        args.count("--test", o.test, 1) || args.count("--validation", o.validation, 1) ||
        args.count("--seed", o.s.seed) || args.number("--sghmc-eta", o.s.sghmc_eta, tiny) ||
        args.number("--sghmc-alpha", o.s.sghmc_alpha, tiny) ||
        args.number("--sgld-eta", o.s.sgld_eta, tiny) ||
        args.number("--sgd-eta", o.s.sgd_eta, tiny) ||
        args.number("--momentum-eta", o.s.momentum_eta, tiny) ||
        args.number("--momentum-alpha", o.s.momentum_alpha, tiny) ||
        args.number("--nuts-eta", o.s.nuts_eta, tiny) ||
        args.number("--nuts-alpha", o.s.nuts_alpha, 0.0) ||
        args.count("--nuts-resample", o.s.nuts_resample, 1) ||
        args.count("--noise-subbatches", o.s.noise_subbatches, 2) ||
        args.count("--learned-max-length", o.s.learned_max_length, 1)) {
    } else if (args.is("--shuffle-labels")) {
      o.s.shuffle_labels = true;
    } else if (args.is("--no-progress")) {
      o.s.progress = false;
    } else {
      args.unknown();
    }
  }
  return args.status();
}

bool parse_methods(const std::string& list, std::vector<fx::Method>& out, std::string& bad) {
  out.clear();
  if (list.empty()) {
    for (int i = 0; i < fx::kMethods; ++i) out.push_back(fx::Method(i));
    return true;
  }
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    const std::string key = list.substr(start, comma - start);
    fx::Method m;
    if (!fx::parse_method(key, m)) {
      bad = key;
      return false;
    }
    out.push_back(m);
    start = comma + 1;
  }
  return true;
}

// `set`: the scored images, "test", or "validation" with --validation.
std::string settings_text(const Options& o, const fx::Data& d, const std::string& set) {
  const fx::Settings& s = o.s;
  std::string t;
  t += format(
      "data:     FashionMNIST (%s), %zu training and %zu %s images; MNIST itself is not "
      "packaged by Debian, so it is not run\n",
      o.data.c_str(), d.n_train, d.n_test, set.c_str());
  t += "model:    784-100-10, sigmoid hidden layer, N(0, 1) prior on every weight (models/mlp.hpp),"
       " float\n";
  t += format(
      "budget:   %llu epochs of %llu-image minibatches per method (%zu gradient passes);"
      " seed %llu\n",
      (unsigned long long)s.epochs, (unsigned long long)s.batch,
      std::size_t(s.epochs * (d.n_train / s.batch)), (unsigned long long)s.seed);
  t += format(
      "samplers: burn-in %llu epochs, then %llu samples per epoch averaged into the "
      "posterior predictive; optimisers: their current point\n",
      (unsigned long long)s.burn_in_epochs, (unsigned long long)s.samples_per_epoch);
  t += format(
      "SGHMC (all variants): eta %g, alpha %g (h = sqrt(eta), C = alpha/h); V-hat variant:"
      " %llu sub-batches, smoothing %g\n",
      s.sghmc_eta, s.sghmc_alpha, (unsigned long long)s.noise_subbatches, s.noise_smoothing);
  t += format(
      "SGHMC with learned refresh: 16 lengths learned in warm-up, each capped at %llu steps\n",
      (unsigned long long)s.learned_max_length);
  t += format("SGLD: h %g; SGD: eta %g; SGD with momentum: eta %g, alpha %g\n", s.sgld_eta,
              s.sgd_eta, s.momentum_eta, s.momentum_alpha);
  t += format(
      "seed's SGNUTS: eta %g, alpha %g, momentum resampled every %llu iterations, "
      "max depth 10, B-hat 0\n",
      s.nuts_eta, s.nuts_alpha, (unsigned long long)s.nuts_resample);
  if (s.shuffle_labels) t += "NEGATIVE CONTROL: training labels permuted\n";
  return t;
}

/// The seed's FashionMNIST accuracies (shared/seeds/002: text; other methods only in a figure).
const char* seed_figure(fx::Method m) {
  switch (m) {
    case fx::Method::SGHMC:
      return "0.85";
    case fx::Method::SGNUTSSeed:
      return "0.85";
    case fx::Method::SGLD:
    case fx::Method::SGD:
    case fx::Method::SGDMomentum:
      return "figure only";
    default:
      return "not run";
  }
}

std::string table(const std::vector<fx::Result>& results, bool markdown, const std::string& set) {
  sgmcmc::common::Table t;
  using A = sgmcmc::common::Table::Align;
  t.add_column("method", A::Left);
  t.add_column("scored by", A::Left);
  t.add_column(set + " accuracy");
  t.add_column("seed's accuracy");
  t.add_column(set + " NLL");
  t.add_column("ECE");
  t.add_column("gradients");
  t.add_column("samples");
  t.add_column("CPU s/epoch");
  for (const auto& r : results) {
    const double epochs = r.gradients > 0 && !r.curve.empty() ? r.curve.back().epoch : 0.0;
    t.add_row({fx::method_name(r.method),
               fx::is_sampler(r.method) ? "posterior predictive" : "point estimate",
               r.ok ? format("%.4f", r.final_metrics.accuracy) : r.status, seed_figure(r.method),
               r.ok ? format("%.4f", r.final_metrics.nll) : "",
               r.ok ? format("%.4f", r.final_metrics.ece) : "",
               format("%llu", (unsigned long long)r.gradients),
               fx::is_sampler(r.method) ? format("%llu", (unsigned long long)r.samples) : "",
               epochs > 0 ? format("%.3f", r.train_cpu / epochs) : ""});
  }
  return markdown ? t.markdown() : t.text();
}

bool plot(const std::string& dir, const std::vector<fx::Result>& results, std::uint64_t burn_in,
          const std::string& set, std::string& error) {
  // One data file per method: epoch, accuracy, NLL, ECE, samples.
  for (const auto& r : results) {
    std::vector<std::vector<double>> cols(5);
    for (const auto& p : r.curve) {
      cols[0].push_back(p.epoch);
      cols[1].push_back(p.metrics.accuracy);
      cols[2].push_back(p.metrics.nll);
      cols[3].push_back(p.metrics.ece);
      cols[4].push_back(double(p.samples));
    }
    if (!sgmcmc::common::write_columns(dir + "/curve_" + fx::method_key(r.method) + ".dat",
                                       "epoch accuracy nll ece samples", cols)) {
      error = "cannot write curves in " + dir;
      return false;
    }
  }
  const sgmcmc::common::Gnuplot gp = sgmcmc::common::Gnuplot::detect();
  if (!gp.found) {
    error = "gnuplot not found: no plot";
    return false;
  }
  std::string s = gp.png_terminal(1400, 1000, 11) + "\n";
  s += "set termoption noenhanced\nset output 'accuracy_nll.png'\nset multiplot layout 2,1\n";
  s += "set grid\nset key outside right top\nset xlabel 'epochs (gradient passes / (N/n))'\n";
  s += format("set arrow 1 from %llu, graph 0 to %llu, graph 1 nohead dt 2 lc rgb 'gray'\n",
              (unsigned long long)burn_in, (unsigned long long)burn_in);
  auto plot_line = [&](int column) {
    std::string p = "plot ";
    for (std::size_t k = 0; k < results.size(); ++k) {
      if (k > 0) p += ", ";
      p += std::string("'curve_") + fx::method_key(results[k].method) +
           ".dat' using 1:" + std::to_string(column) + " with lines lw 2 title " +
           sgmcmc::common::gp_string(fx::method_name(results[k].method));
    }
    return p + "\n";
  };
  s += "set title 'FashionMNIST " + set +
       " accuracy (samplers: posterior predictive after burn-in, dashed line; optimisers: point "
       "estimate)'\nset ylabel '" +
       set + " accuracy'\nset yrange [0.7:0.92]\n";
  s += plot_line(2);
  s += "set title 'FashionMNIST " + set +
       " negative log-likelihood (mean per image)'\nset ylabel '" + set +
       " NLL'\nset yrange [0.25:0.8]\n";
  s += plot_line(3);
  s += "unset multiplot\n";
  if (!sgmcmc::common::write_text(dir + "/accuracy_nll.gp", s)) {
    error = "cannot write the gnuplot script in " + dir;
    return false;
  }
  if (!gp.run(dir, "accuracy_nll.gp")) {
    error = "gnuplot failed (see " + dir + "/accuracy_nll.gp.log)";
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (const int p = parse(argc, argv, o); p != 0) return p == 1 ? 0 : 2;
  std::vector<fx::Method> methods;
  std::string bad;
  if (!parse_methods(o.methods, methods, bad)) {
    std::fprintf(stderr, "sgmcmc_fashion: unknown method '%s'\n\n%s", bad.c_str(), kUsage);
    return 2;
  }
  const auto train = sgmcmc::data::load_fashion_mnist(o.data, true);
  if (!train.ok) {
    std::fprintf(stderr, "sgmcmc_fashion: %s\n", train.error.c_str());
    return 1;
  }
  fx::Data d;
  d.train_pixels = train.images.pixels.data();
  d.train_labels = train.labels.labels.data();
  d.n_train = o.train > 0 ? std::min<std::size_t>(o.train, train.images.count) : train.images.count;
  sgmcmc::data::IdxPairResult test;  // read only when it is the scored set
  if (o.validation > 0) {
    // The last V of the training images used become the scored set.
    if (o.validation >= d.n_train) {
      std::fprintf(stderr, "sgmcmc_fashion: --validation %llu leaves no training image (of %zu)\n",
                   (unsigned long long)o.validation, d.n_train);
      return 2;
    }
    d.n_train -= o.validation;
    d.test_pixels = train.images.image(d.n_train);
    d.test_labels = d.train_labels + d.n_train;
    d.n_test = o.validation;
  } else {
    test = sgmcmc::data::load_fashion_mnist(o.data, false);
    if (!test.ok) {
      std::fprintf(stderr, "sgmcmc_fashion: %s\n", test.error.c_str());
      return 1;
    }
    d.test_pixels = test.images.pixels.data();
    d.test_labels = test.labels.labels.data();
    d.n_test = o.test > 0 ? std::min<std::size_t>(o.test, test.images.count) : test.images.count;
  }
  std::error_code ec;
  std::filesystem::create_directories(o.out, ec);
  if (ec) {
    std::fprintf(stderr, "sgmcmc_fashion: cannot create %s: %s\n", o.out.c_str(),
                 ec.message().c_str());
    return 1;
  }
  const std::string set = o.validation > 0 ? "validation" : "test";
  const std::string settings = settings_text(o, d, set);
  std::printf("%s\n", settings.c_str());
  std::fflush(stdout);

  std::vector<fx::Result> results;
  bool failed = false;
  for (fx::Method m : methods) {
    results.push_back(fx::run(m, d, o.s));
    const auto& r = results.back();
    failed = failed || !r.ok;
    std::printf(
        "%-32s %s: accuracy %.4f, NLL %.4f, ECE %.4f (%llu gradients, %.1f s CPU + %.1f s "
        "scoring)%s%s\n",
        fx::method_name(m), r.status.c_str(), r.final_metrics.accuracy, r.final_metrics.nll,
        r.final_metrics.ece, (unsigned long long)r.gradients, r.train_cpu, r.eval_cpu,
        r.notes.empty() ? "" : "\n    ", r.notes.c_str());
    std::fflush(stdout);
  }
  std::printf("\n%s\n", table(results, false, set).c_str());
  std::string md = "Settings:\n\n```\n" + settings + "```\n\n" + table(results, true, set);
  md +=
      "\nSeed's accuracies: shared/seeds/002 (text: SGHMC 0.85, SGNUTS 0.85 on FashionMNIST; "
      "SGD, SGD with momentum and SGLD appear only in its Figure 1).\n\nNotes:\n\n";
  for (const auto& r : results) {
    if (!r.notes.empty())
      md += std::string("- ") + fx::method_name(r.method) + ": " + r.notes + "\n";
  }
  if (!sgmcmc::common::write_text(o.out + "/table.md", md)) {
    std::fprintf(stderr, "sgmcmc_fashion: cannot write %s/table.md\n", o.out.c_str());
    return 1;
  }
  std::string error;
  if (!plot(o.out, results, o.s.burn_in_epochs, set, error)) {
    std::fprintf(stderr, "sgmcmc_fashion: %s\n", error.c_str());
  } else {
    std::printf("wrote %s/table.md, %s/accuracy_nll.png and %s/curve_*.dat\n", o.out.c_str(),
                o.out.c_str(), o.out.c_str());
  }
  return failed ? 1 : 0;
}
