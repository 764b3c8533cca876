// SPDX-License-Identifier: MIT
// The AVX-512 kernel's double normals (a 256-layer ziggurat, normal_kernel.inc): the tables'
// equal areas, the kernel against a scalar ziggurat written here on the same words (fast path,
// wedge, tail, retries and the bounded fallback), the law of its output, and negative controls
// (a ziggurat without its wedge test, or with the tail cut at r, fails the law checks).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "normal_check.hpp"
#include "sgmcmc/host/rng.hpp"

#if defined(SGMCMC_HOST_X86)

namespace {

using sgmcmc::host::Isa;
using sgmcmc::host::Rng;
namespace hd = sgmcmc::host::detail;

/// The standard normal density's kernel exp(-x^2/2) in long double.
long double f(long double x) {
  return std::exp(-x * x / 2);
}

/// u = (w >> 12) 2^-52 in [0, 1) and the open u = (w >> 12) 2^-52 + 2^-53 in (0, 1).
double unit(std::uint64_t w) {
  return static_cast<double>(w >> 12) * 0x1p-52;
}
long double open_unit(std::uint64_t w) {
  return (2.0L * static_cast<long double>(w >> 12) + 1) / 9007199254740992.0L;
}

/// What a slot's word became, and how.
enum class Path { Fast, Wedge, Tail, Fallback };
struct Draw {
  double z;
  Path path;
  int rounds;
};

/// Deliberate mistakes for the negative controls.
enum class Flaw { None, NoWedgeTest, NoTail };

/// The kernel's ziggurat for one word, written from its documentation (normal_kernel.inc),
/// with exact exp and log in long double where the kernel uses its polynomials.
Draw reference(std::uint64_t w, int rounds, Flaw flaw = Flaw::None) {
  auto sign_of = [](std::uint64_t word) { return (word >> 8) & 1U ? -1.0 : 1.0; };
  {
    const int i = static_cast<int>(w & 255U);
    const double u = unit(w);
    if (u < hd::kZigRatio[i]) return {sign_of(w) * (u * hd::kZigX[i]), Path::Fast, 0};
  }
  std::uint64_t c = w;
  bool tail = false;
  double tsign = 1.0;
  for (int r = 0; r < rounds; ++r) {
    const std::uint64_t c1 = hd::splitmix64(c);
    const std::uint64_t c2 = hd::splitmix64(c);
    if (!tail) {
      const int i = static_cast<int>(w & 255U);
      const double u = unit(w);
      const double x = u * hd::kZigX[i];
      if (u < hd::kZigRatio[i]) return {sign_of(w) * x, Path::Fast, r + 1};
      if (i != 0) {
        const double y = std::fma(unit(c1), hd::kZigF[i + 1] - hd::kZigF[i], hd::kZigF[i]);
        if (flaw == Flaw::NoWedgeTest || y < f(x)) return {sign_of(w) * x, Path::Wedge, r + 1};
        w = c2;
        continue;
      }
      if (flaw == Flaw::NoTail) {  // the tail's mass put at r
        return {sign_of(w) * hd::kZigR, Path::Tail, r + 1};
      }
      tail = true;
      tsign = sign_of(w);
    }
    const long double a = -std::log(open_unit(c1)) / static_cast<long double>(hd::kZigR);
    const long double b = -std::log(open_unit(c2));
    if (2 * b > a * a) {
      return {tsign * static_cast<double>(hd::kZigR + a), Path::Tail, r + 1};
    }
  }
  // Box-Muller, r cos theta, in the double kernel's layout (radius word, then angle word).
  const std::uint64_t c1 = hd::splitmix64(c);
  const std::uint64_t c2 = hd::splitmix64(c);
  const long double half_pi = 1.570796326794896619231321691639751442L;
  const long double frac =
      static_cast<long double>((c2 >> 10) & 0x000fffffffffffffULL) / std::ldexp(1.0L, 52);
  const long double th = (c2 >> 62) * half_pi + (frac - 0.5L) * half_pi;
  const long double rad = std::sqrt(-2.0L * std::log(open_unit(c1)));
  return {static_cast<double>(rad * std::cos(th)), Path::Fallback, rounds};
}

/// The words the kernel's next fill of `blocks` blocks reads, in output order (block b's normal
/// j from lane j % 16's (j / 16 + 1)-th step in the block).
std::vector<std::uint64_t> words_of(const std::uint64_t (&start)[4][16], std::size_t blocks) {
  std::uint64_t lanes[4][16];
  std::memcpy(lanes, start, sizeof lanes);
  std::vector<std::uint64_t> w(32 * blocks);
  for (std::size_t b = 0; b < blocks; ++b) {
    for (int half = 0; half < 2; ++half) {
      for (int j = 0; j < 16; ++j) {
        w[32 * b + 16 * static_cast<std::size_t>(half) + static_cast<std::size_t>(j)] =
            hd::xoshiro_next(lanes[0][j], lanes[1][j], lanes[2][j], lanes[3][j]);
      }
    }
  }
  return w;
}

struct Comparison {
  long mismatched = 0;        // fast, wedge or fallback values not bit for bit the reference's
  double tail_error = 0;      // largest relative |kernel - reference| of a tail value
  double fallback_error = 0;  // largest |kernel - reference| of a fallback value
  long paths[4] = {0, 0, 0, 0};
  int max_rounds = 0;
};

/// Runs the kernel (Rounds: its retry bound) on `fills` fills of `blocks` blocks from the lanes
/// of Rng(seed) and compares every value with the reference on the same word.
template <int Rounds>
Comparison compare(std::uint64_t seed, int fills, std::size_t blocks) {
  Rng rng(seed);
  std::uint64_t lanes[4][16];
  std::memcpy(lanes, rng.lane_words(), sizeof lanes);
  std::vector<double> out(32 * blocks);
  Comparison c;
  for (int k = 0; k < fills; ++k) {
    const std::vector<std::uint64_t> w = words_of(lanes, blocks);
    hd::kernel_avx512::fill_ziggurat<Rounds>(lanes, out.data(), blocks);
    for (std::size_t j = 0; j < w.size(); ++j) {
      const Draw d = reference(w[j], Rounds);
      ++c.paths[static_cast<int>(d.path)];
      c.max_rounds = std::max(c.max_rounds, d.rounds);
      if (d.path == Path::Tail) {
        c.tail_error = std::max(c.tail_error, std::fabs(out[j] - d.z) / std::fabs(d.z));
      } else if (d.path == Path::Fallback) {
        c.fallback_error = std::max(c.fallback_error, std::fabs(out[j] - d.z));
      } else if (std::memcmp(&out[j], &d.z, sizeof d.z) != 0) {
        ++c.mismatched;
      }
    }
  }
  return c;
}

}  // namespace

TEST_CASE("the ziggurat's tables: equal layer areas, the top layer closing at 0") {
  // Each layer's area is v (the base layer: its rectangle up to x0 and f(r), i.e. the rectangle
  // below r plus the tail's area); tolerance: a few ulp of the tables' rounding.
  const long double v = hd::kZigV;
  const long double r = hd::kZigR;
  const long double tail = std::sqrt(std::acos(-1.0L) / 2) * std::erfc(r / std::sqrt(2.0L));
  CHECK(std::fabs(r * f(r) + tail - v) / v < 1e-14L);
  CHECK(std::fabs(hd::kZigX[0] * f(r) - v) / v < 1e-14L);
  CHECK(hd::kZigX[1] == hd::kZigR);
  CHECK(hd::kZigX[256] == 0.0);
  CHECK(hd::kZigF[256] == 1.0);
  double worst = 0;
  for (int i = 1; i < 256; ++i) {
    const long double area = hd::kZigX[i] * (f(hd::kZigX[i + 1]) - f(hd::kZigX[i]));
    worst = std::max(worst, static_cast<double>(std::fabs(area - v) / v));
    CHECK(hd::kZigX[i + 1] < hd::kZigX[i]);
    CHECK(std::fabs(hd::kZigF[i] - f(hd::kZigX[i])) <= 1e-16L);
    CHECK(std::fabs(hd::kZigRatio[i] * hd::kZigX[i] - hd::kZigX[i + 1]) <= 1e-15L * hd::kZigX[i]);
  }
  MESSAGE("largest relative layer-area error: " << worst);
  // Layer areas are differences of nearby f values: relative rounding up to ~3e-14 in the top
  // layers, where f(x[i+1]) - f(x[i]) cancels most digits of f.
  CHECK(worst < 1e-13);
  // 256 layers of area v cover the density's area sqrt(pi/2) with 0.67 % to spare: the share of
  // proposals the ziggurat rejects.
  CHECK(256 * v / std::sqrt(std::acos(-1.0L) / 2) == doctest::Approx(1.0067).epsilon(1e-3));
}

TEST_CASE("the AVX-512 double kernel is the ziggurat on the same words") {
  if (!Rng::supported(Isa::Avx512)) {
    MESSAGE("no AVX-512 on this CPU: the ziggurat kernel is not run");
    return;
  }
  // 1200 fills of 256 normals: about 4 600 wedge tests and 77 tails.
  const Comparison c = compare<hd::kernel_avx512::kZigRounds>(31, 1200, 8);
  MESSAGE("paths fast / wedge / tail / fallback: "
          << c.paths[0] << " / " << c.paths[1] << " / " << c.paths[2] << " / " << c.paths[3]
          << "; most rounds " << c.max_rounds << "; tail error " << c.tail_error);
  // Bit for bit but for the tail's log (the kernel's polynomial, 2 ulp) and the wedge test's
  // decision, which exp's rounding could flip only within 1e-16 of the curve (never seen).
  CHECK(c.mismatched == 0);
  CHECK(c.tail_error < 1e-15);
  CHECK(c.paths[1] > 1000);  // the wedge and the tail are exercised
  CHECK(c.paths[2] > 20);
  CHECK(c.paths[3] == 0);  // 32 rounds are never used up
  // A fill that does not end on a chunk boundary (3 blocks, then 13) is the same code per chunk.
  const Comparison odd = compare<hd::kernel_avx512::kZigRounds>(32, 200, 13);
  CHECK(odd.mismatched == 0);
}

TEST_CASE("the ziggurat's bounded retries: one round, then the Box-Muller fallback") {
  if (!Rng::supported(Isa::Avx512)) return;
  // With a bound of one round every slot the first retry does not settle takes the fallback.
  const Comparison c = compare<1>(33, 600, 8);
  MESSAGE("fallbacks with one round: " << c.paths[3] << ", largest error " << c.fallback_error);
  CHECK(c.mismatched == 0);
  CHECK(c.paths[3] > 100);
  CHECK(c.fallback_error < 8e-15);  // the Box-Muller kernels' bound (test_host_rng.cpp)
}

TEST_CASE("the AVX-512 double normals pass moments, KS, independence and tail mass") {
  if (!Rng::supported(Isa::Avx512)) return;
  Rng rng(41);
  REQUIRE(rng.set_isa(Isa::Avx512));
  std::vector<double> x(4000000);
  rng.fill_normal(x.data(), x.size());
  double max_abs = 0;
  for (const double v : x) max_abs = std::max(max_abs, std::fabs(v));
  // The tail's largest value: r - ln(2^-53)/r.
  CHECK(max_abs <= hd::kZigR + 36.7368005696771 * hd::kZigInvR);
  CHECK(sgmcmc::test::tail_ok(x, 3.0));
  CHECK(sgmcmc::test::tail_ok(x, 3.7));  // beyond r: the tail's own draws
  CHECK(sgmcmc::test::tail_ok(x, 4.0));
  CHECK(sgmcmc::test::looks_standard_normal(x));
}

TEST_CASE("negative controls: a ziggurat without its wedge test or its tail fails the checks") {
  Rng rng(43);
  std::vector<std::uint64_t> w(4000000);
  for (auto& word : w) word = rng();
  auto sample = [&](Flaw flaw) {
    std::vector<double> x(w.size());
    for (std::size_t j = 0; j < w.size(); ++j) x[j] = reference(w[j], 32, flaw).z;
    return x;
  };
  std::vector<double> good = sample(Flaw::None);
  CHECK(sgmcmc::test::tail_ok(good, 3.7));
  CHECK(sgmcmc::test::looks_standard_normal(good));
  // Accepting every wedge point adds the 0.67 % of rejected area: too much mass near the layers'
  // edges (the KS distance and the moments see it).
  std::vector<double> no_wedge = sample(Flaw::NoWedgeTest);
  CHECK_FALSE(sgmcmc::test::looks_standard_normal(no_wedge));
  // Every tail draw put at r: no mass beyond 3.7 sd.
  std::vector<double> no_tail = sample(Flaw::NoTail);
  CHECK_FALSE(sgmcmc::test::tail_ok(no_tail, 3.7));
}

#endif  // SGMCMC_HOST_X86
