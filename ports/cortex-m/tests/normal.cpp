// SPDX-License-Identifier: MIT
// On-target checks of the Cortex-M port's branch-free normal fill (cortex_m::Rng::fill_normal):
// chi-square, moments and tails over 10^6 float draws with negative controls, accuracy against
// double-precision Box-Muller on the same words, determinism and call splitting, the double fill.
#include <cstdint>

#include "normal_stats.hpp"
#include "sgmcmc/core/noise.hpp"
#include "sgmcmc/cortex_m/check.hpp"
#include "sgmcmc/cortex_m/rng.hpp"

using sgmcmc::cortex_m::Line;
using sgmcmc::cortex_m::Rng;
using sgmcmc::test::NormalStats;

namespace {

static_assert(sgmcmc::HasFillNormal<Rng, float>::value, "the port's own fill");
static_assert(sgmcmc::HasFillNormal<Rng, double>::value, "the port's own fill");

constexpr int kBlock = 1000;
float g_block[kBlock];

/// 10^6 float draws in fills of kBlock, each scaled by `scale`, through `fill`.
template <class Fill>
NormalStats collect(Fill fill, float scale) {
  NormalStats st;
  for (int b = 0; b < 1000; ++b) {
    fill(g_block);
    for (const float z : g_block) st.add(static_cast<double>(z * scale));
  }
  return st;
}

void print(const char* name, const NormalStats& st) {
  Line().decimals(3) << name << ": chi-square " << st.chi_square() << " (33 df, 0.999 quantile "
                     << NormalStats::kChiSquare999 << "), worst moment/tail deviation "
                     << st.worst_standard_error() << " SE, |z| > 4: " << st.tail4 << " (expected "
                     << st.n * NormalStats::kTail4 << "), max |z| " << st.max_abs << '\n';
}

// Goodness of fit, 10^6 draws, fixed seeds. Chi-square below its 0.999 quantile; moments and
// P(|z| > 4) within 5 standard errors (NormalStats); |z| <= sqrt(62 ln 2) = 6.5555 (the layout's
// largest radius). Negative control: the same draws times 1.02 must fail the chi-square (expected
// statistic about 33 + 400).
void check_fit() {
  Rng rng(2024);
  const NormalStats port = collect([&](float* out) { rng.fill_normal(out, kBlock); }, 1.0f);
  print("port fill_normal<float>", port);
  SGMCMC_CHECK(port.chi_square() < NormalStats::kChiSquare999);
  SGMCMC_CHECK(port.worst_standard_error() < 5.0);
  SGMCMC_CHECK(port.max_abs <= 6.5556);

  Rng again(2024);
  const NormalStats wide = collect([&](float* out) { again.fill_normal(out, kBlock); }, 1.02f);
  print("negative control, scaled by 1.02", wide);
  SGMCMC_CHECK(wide.chi_square() > NormalStats::kChiSquare999);

  // The portable transform (newlib logf/cosf/sinf) passes the same test.
  Rng old(2024);
  sgmcmc::Vector<float, 8> v;
  const NormalStats portable = collect(
      [&](float* out) {
        for (int i = 0; i < kBlock; i += 8) {
          sgmcmc::fill_normal_portable(old, v);
          for (int j = 0; j < 8; ++j) out[i + j] = v[j];
        }
      },
      1.0f);
  print("fill_normal_portable<float>", portable);
  SGMCMC_CHECK(portable.chi_square() < NormalStats::kChiSquare999);
}

// Accuracy: each value against Box-Muller in double precision (newlib's double log, sqrt, cos,
// sin) on the same word, by the documented layout, over 10^5 pairs: |z - ref| / (1 + |ref|)
// within 2e-7 (host: 1.3e-7 against long double).
void check_accuracy() {
  Rng a(77), b(77);
  const double worst = sgmcmc::test::max_pair_error(a, b, 100000);
  Line().decimals(9) << "accuracy: max |z - ref| / (1 + |ref|) = " << worst << " over 10^5 pairs\n";
  SGMCMC_CHECK(worst <= 2e-7);
}

bool same(const float* x, const float* y, int n) {
  bool eq = true;
  for (int i = 0; i < n; ++i) eq = eq && (x[i] == y[i]);
  return eq;
}

// Determinism and call splitting: same seed, same values; even splits give the same stream; an
// odd fill uses ceil(n/2) words and drops the last pair's second value; the vector overload and
// sgmcmc::fill_normal give the pointer overload's values. Bit-reproducibility across builds: the
// first 10^5 normals of Rng(1) hash to the value an x86-64 host build with FMA computes, at -O2
// and at -Os (normal_stats.hpp, kFillHashFma).
void check_determinism() {
  const std::uint64_t hash = sgmcmc::test::fill_hash<Rng>();
  Line() << "hash of the first 10^5 normals of Rng(1): " << static_cast<unsigned long long>(hash)
         << '\n';
  SGMCMC_CHECK(hash == sgmcmc::test::kFillHashFma);

  float x[8], y[8];
  Rng a(5), b(5);
  a.fill_normal(x, 8);
  b.fill_normal(y, 4);
  b.fill_normal(y + 4, 4);
  SGMCMC_CHECK(same(x, y, 8));
  SGMCMC_CHECK(a == b);

  Rng c(5), d(5);
  c.fill_normal(x, 3);
  d.fill_normal(y, 4);
  SGMCMC_CHECK(same(x, y, 3));
  SGMCMC_CHECK(c == d);

  Rng e(5), f(5);
  sgmcmc::Vector<float, 8> v;
  sgmcmc::fill_normal(e, v);
  f.fill_normal(x, 8);
  SGMCMC_CHECK(same(v.data(), x, 8));

  Rng g(6);
  g.fill_normal(y, 8);
  SGMCMC_CHECK(!same(x, y, 8));
}

// The double fill: moments and tails within 5 SE over 10^5 draws, every value against double
// Box-Muller on the same two words within 1e-14 relative.
void check_double() {
  Rng rng(31), words(31);
  NormalStats st;
  double worst = 0;
  const double half_pi = 1.57079632679489661923;
  double z[2];
  for (int i = 0; i < 50000; ++i) {
    rng.fill_normal(z, 2);
    st.add(z[0]);
    st.add(z[1]);
    const std::uint64_t w1 = words(), w2 = words();
    const double u = std::ldexp(static_cast<double>(2 * (w1 >> 12) + 1), -53);
    const double r = std::sqrt(-2.0 * std::log(u));
    const double a =
        (std::ldexp(static_cast<double>((w2 >> 10) & 0xfffffffffffffull), -52) - 0.5) * half_pi;
    const double theta = static_cast<double>(w2 >> 62) * half_pi + a;
    const double e0 = std::fabs(z[0] - r * std::cos(theta)) / (1 + std::fabs(r * std::cos(theta)));
    const double e1 = std::fabs(z[1] - r * std::sin(theta)) / (1 + std::fabs(r * std::sin(theta)));
    worst = e0 > worst ? e0 : worst;
    worst = e1 > worst ? e1 : worst;
  }
  Line().decimals(3) << "port fill_normal<double>, 10^5 draws: worst moment/tail deviation "
                     << st.worst_standard_error() << " SE; max relative error " << worst * 1e15
                     << "e-15\n";
  SGMCMC_CHECK(st.worst_standard_error() < 5.0);
  SGMCMC_CHECK(worst <= 1e-14);
}

}  // namespace

int main() {
  check_fit();
  check_accuracy();
  check_determinism();
  check_double();
  return sgmcmc::cortex_m::check::finish();
}
