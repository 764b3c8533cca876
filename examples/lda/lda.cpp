// SPDX-License-Identifier: MIT
// example_lda: online LDA on a synthetic corpus (K = 5, W = 100) with SGLD, SGHMC, SGRLD and
// SGRHMC; held-out perplexity against documents processed and runtime per 100 documents.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "online_lda.hpp"

namespace {

constexpr const char* kUsage =
    "usage: example_lda [--quick] [--docs N] [--seeds R] [--grid] [--out DIR] [--no-plot]\n"
    "\n"
    "Online LDA at small scale (recipe paper 4.2, Supplement F.2; docs/examples/lda.md): a\n"
    "synthetic corpus of 10000 documents from K = 5 topics over W = 100 words is streamed in\n"
    "minibatches of 50 documents through SGLD, SGHMC, SGRLD and SGRHMC (G = diag(theta)^-1) in\n"
    "the expanded-mean parameterisation; prints held-out perplexity against documents processed\n"
    "(mean of R runs) and the runtime per 100 documents.\n"
    "\n"
    "  --quick     2000 documents, one run (about a second)\n"
    "  --docs N    documents to stream (default 10000, at most 10000)\n"
    "  --seeds R   independent runs per sampler (default 3, as the paper)\n"
    "  --grid      first search each sampler's step on {3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 1e-1}\n"
    "              (mean perplexity over a 5000-document pilot with another seed)\n"
    "  --out DIR   write results.md, perplexity.dat and perplexity.png (gnuplot) to DIR\n"
    "              (default out/lda)\n"
    "  --no-plot   do not run gnuplot\n";

struct Options {
  bool quick = false;
  int docs = 10000;
  int seeds = 3;
  bool grid = false;
  bool plot = true;
  std::string out = "out/lda";
};

int parse(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
    auto integer = [&](int& out, int lo, int hi) {
      if (!v) return false;
      char* end = nullptr;
      errno = 0;
      const long x = std::strtol(v, &end, 10);
      if (errno != 0 || end == v || *end != '\0' || x < lo || x > hi) return false;
      out = static_cast<int>(x);
      ++i;
      return true;
    };
    if (a == "--help" || a == "-h") {
      std::fputs(kUsage, stdout);
      return 1;
    } else if (a == "--quick") {
      o.quick = true;
      o.docs = 2000;
      o.seeds = 1;
    } else if (a == "--grid") {
      o.grid = true;
    } else if (a == "--no-plot") {
      o.plot = false;
    } else if (a == "--docs") {
      if (!integer(o.docs, 50, 10000)) return 2;
    } else if (a == "--seeds") {
      if (!integer(o.seeds, 1, 20)) return 2;
    } else if (a == "--out" && v) {
      o.out = v;
      ++i;
    } else {
      std::fprintf(stderr, "example_lda: bad argument '%s'\n\n%s", a.c_str(), kUsage);
      return 2;
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (const int rc = parse(argc, argv, o); rc != 0) return rc == 1 ? 0 : 2;
  const lda::Corpus corpus = lda::Corpus::generate(42, 10000, 100);
  std::printf(
      "Online LDA: K = %d topics, W = %d words, %zu training documents (|S|), %zu test\n"
      "documents (even positions observed, odd held out); minibatches of 50; Gibbs: 20 "
      "sweeps per document, the last 10 averaged.\n",
      lda::kTopics, lda::kWords, corpus.docs.size(), corpus.observed.size());
  std::printf(
      "Perplexity of the true topics: %.2f (gamma = 0.1), %.2f (gamma = 0.01); uniform: "
      "%d.\n\n",
      lda::true_perplexity(corpus, 0.1, 1), lda::true_perplexity(corpus, 0.01, 1), lda::kWords);

  std::vector<lda::RunSettings> settings = lda::default_settings();
  if (o.grid) {
    std::printf("Step search (mean perplexity over 5000 documents, seed 7):\n");
    for (auto& s : settings) {
      double best = 1e300;
      for (double h : {3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 1e-1}) {
        lda::RunSettings p = s;
        p.step = h;
        p.docs = 5000;
        p.eval_every = 500;
        p.seed = 7;
        const lda::RunResult r = lda::run(corpus, p);
        double mean = 0.0;
        for (double x : r.perplexity) mean += x / static_cast<double>(r.perplexity.size());
        std::printf("  %-7s h = %-7g %s\n", lda::name(s.method), h,
                    r.ok ? std::to_string(mean).c_str() : "failed");
        if (r.ok && mean < best) {
          best = mean;
          s.step = h;
        }
      }
    }
    std::printf("\n");
  }

  const int eval_every = o.quick ? 250 : 500;
  std::vector<std::vector<double>> curves;  // per method: mean perplexity per checkpoint
  std::vector<int> checkpoints;
  std::vector<double> seconds;
  for (const auto& base : settings) {
    std::vector<double> mean;
    double secs = 0.0;
    for (int r = 0; r < o.seeds; ++r) {
      lda::RunSettings s = base;
      s.docs = o.docs;
      s.eval_every = eval_every;
      s.seed = 1000 + static_cast<std::uint64_t>(r);
      const lda::RunResult res = lda::run(corpus, s);
      if (!res.ok) {
        std::fprintf(stderr, "example_lda: %s\n", res.failure.c_str());
        return 1;
      }
      if (mean.empty()) mean.assign(res.perplexity.size(), 0.0);
      for (std::size_t i = 0; i < mean.size(); ++i) mean[i] += res.perplexity[i] / o.seeds;
      secs += res.seconds_per_100_docs / o.seeds;
      checkpoints = res.docs_seen;
    }
    curves.push_back(mean);
    seconds.push_back(secs);
  }

  std::string table = "| documents |";
  for (const auto& s : settings) table += std::string(" ") + lda::name(s.method) + " |";
  table += "\n|---|";
  for (std::size_t m = 0; m < settings.size(); ++m) table += "---|";
  table += "\n";
  std::printf("%-10s", "documents");
  for (const auto& s : settings) std::printf("%10s", lda::name(s.method));
  std::printf("\n");
  for (std::size_t i = 0; i < checkpoints.size(); ++i) {
    std::printf("%-10d", checkpoints[i]);
    table += "| " + std::to_string(checkpoints[i]) + " |";
    for (std::size_t m = 0; m < settings.size(); ++m) {
      std::printf("%10.2f", curves[m][i]);
      char cell[32];
      std::snprintf(cell, sizeof cell, " %.2f |", curves[m][i]);
      table += cell;
    }
    std::printf("\n");
    table += "\n";
  }
  std::printf("\n%-28s", "step h (alpha, gamma)");
  for (const auto& s : settings)
    std::printf("  %s %g (%g, %g)", lda::name(s.method), s.step, s.alpha, s.gamma);
  std::printf("\n%-28s", "seconds per 100 documents");
  std::string times = "| seconds per 100 documents |";
  for (std::size_t m = 0; m < settings.size(); ++m) {
    std::printf("%10.4f", seconds[m]);
    char cell[32];
    std::snprintf(cell, sizeof cell, " %.4f |", seconds[m]);
    times += cell;
  }
  std::printf(
      "\n(mean perplexity of %d run(s); runtime: gradients (Gibbs) and steps, evaluation "
      "excluded)\n",
      o.seeds);

  std::error_code ec;
  std::filesystem::create_directories(o.out, ec);
  if (ec) {
    std::fprintf(stderr, "example_lda: cannot create %s\n", o.out.c_str());
    return 1;
  }
  if (std::FILE* f = std::fopen((o.out + "/results.md").c_str(), "w")) {
    std::fprintf(
        f, "# Online LDA (example_lda%s)\n\nHeld-out perplexity, mean of %d run(s).\n\n%s\n%s\n",
        o.quick ? " --quick" : "", o.seeds, table.c_str(), times.c_str());
    std::fclose(f);
  }
  if (std::FILE* f = std::fopen((o.out + "/perplexity.dat").c_str(), "w")) {
    std::fprintf(f, "# documents SGLD SGHMC SGRLD SGRHMC\n");
    for (std::size_t i = 0; i < checkpoints.size(); ++i) {
      std::fprintf(f, "%d", checkpoints[i]);
      for (const auto& c : curves) std::fprintf(f, " %.6g", c[i]);
      std::fprintf(f, "\n");
    }
    std::fclose(f);
  }
  if (o.plot) {
    if (std::FILE* f = std::fopen((o.out + "/perplexity.gp").c_str(), "w")) {
      std::fprintf(f,
                   "set terminal png size 800,560\nset output 'perplexity.png'\n"
                   "set title 'Online LDA (K = 5, W = 100): held-out perplexity'\n"
                   "set xlabel 'documents processed'\nset ylabel 'perplexity'\nset grid\n"
                   "set key top right\nset yrange [*:*]\n"
                   "names = 'SGLD SGHMC SGRLD SGRHMC'\n"
                   "plot for [i=2:5] 'perplexity.dat' using 1:i with linespoints lw 2 "
                   "title word(names, i - 1)\n");
      std::fclose(f);
      const std::string cmd = "cd '" + o.out + "' && gnuplot perplexity.gp >/dev/null 2>&1";
      if (std::system(cmd.c_str()) == 0) {
        std::printf("Wrote %s/{results.md, perplexity.dat, perplexity.png}\n", o.out.c_str());
      } else {
        std::printf("Wrote %s/{results.md, perplexity.dat} (gnuplot not available)\n",
                    o.out.c_str());
      }
    }
  }
  return 0;
}
