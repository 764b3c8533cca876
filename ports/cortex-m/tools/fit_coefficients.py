#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Minimax polynomial coefficients for include/sgmcmc/core/math.hpp and
ports/cortex-m/include/sgmcmc/cortex_m/normal.hpp, by the Remez exchange in mpmath (60 digits).

    ports/cortex-m/tools/fit_coefficients.py      # prints every table with its max error

Each kernel approximates g(x) on [a, b] by sum_j c_j x^(p0 + step*j) and minimises
max |w(x) (approximation - g(x))|; the coefficients are printed rounded to float and to double
(the rounding error is then measured by the host tests, not here).
"""
import mpmath as mp

mp.mp.dps = 60


def remez(g, w, a, b, powers, iterations=40, grid=4000):
    """Minimax coefficients of sum c_j x^powers[j] for g on [a, b] with weight w."""
    n = len(powers)
    # Start from Chebyshev extrema (n + 1 reference points).
    ref = [(a + b) / 2 - (b - a) / 2 * mp.cos(mp.pi * i / n) for i in range(n + 1)]
    xs = [a + (b - a) * mp.mpf(i) / grid for i in range(grid + 1)]
    level = mp.mpf(0)
    coeffs = None
    for _ in range(iterations):
        # Solve sum c_j x_i^p_j - g(x_i) = (-1)^i E / w(x_i) for c and E.
        rows = []
        rhs = []
        for i, x in enumerate(ref):
            rows.append([x**p for p in powers] + [-((-1) ** i) / w(x)])
            rhs.append(g(x))
        sol = mp.lu_solve(mp.matrix(rows), mp.matrix(rhs))
        coeffs = [sol[j] for j in range(n)]
        level = abs(sol[n])

        def err(x):
            return w(x) * (sum(c * x**p for c, p in zip(coeffs, powers)) - g(x))

        es = [err(x) for x in xs]
        # Local extrema of the error with alternating signs, one per sign run.
        runs = []
        for x, e in zip(xs, es):
            if runs and (e >= 0) == (runs[-1][1] >= 0):
                if abs(e) > abs(runs[-1][1]):
                    runs[-1] = (x, e)
            else:
                runs.append((x, e))
        # Keep n + 1 consecutive runs with the largest minimum.
        while len(runs) > n + 1:
            if abs(runs[0][1]) < abs(runs[-1][1]):
                runs.pop(0)
            else:
                runs.pop()
        if len(runs) < n + 1:
            break
        ref = [x for x, _ in runs]
        worst = max(abs(e) for e in es)
        if worst - level < level * mp.mpf("1e-6"):
            break
    return coeffs, max(abs(w(x) * (sum(c * x**p for c, p in zip(coeffs, powers)) - g(x)))
                       for x in xs)


def show(name, coeffs, worst, powers):
    print(f"{name}: max weighted error {mp.nstr(worst, 4)}; powers {powers}")
    print("  float:  " + ", ".join(f"{float(mp.mpf(c)):.9e}f" for c in coeffs))
    print("  double: " + ", ".join(f"{float(c):.17e}" for c in coeffs))


def main():
    # log: log1p(f) = 2s + s R(z), s = f / (2 + f), z = s^2, f in [sqrt(1/2) - 1, sqrt(2) - 1],
    # so z in [0, (3 - 2 sqrt 2)^2]. R(z) = sum c_j z^j (j >= 1); the error of log1p is
    # s * err(R), about half the relative error of R's contribution: minimise |err(R)|.
    zmax = (3 - 2 * mp.sqrt(2)) ** 2

    def g_log(z):
        if z == 0:
            return mp.mpf(0)
        s = mp.sqrt(z)
        return 2 * mp.atanh(s) / s - 2

    for name, n in (("log R(z) float", 3), ("log R(z) double", 7)):
        powers = list(range(1, n + 1))
        c, e = remez(g_log, lambda z: mp.mpf(1), mp.mpf(0), zmax, powers)
        show(name, c, e, powers)

    # exp / expm1: e^r - 1 = r + r^2 Q(r), r in [-ln2/2, ln2/2]. Weight |r| bounds both the
    # relative error of expm1(r) (about r err(Q)) and of e^r (r^2 err(Q) / e^r).
    h = mp.log(2) / 2

    def g_exp(r):
        if r == 0:
            return mp.mpf(1) / 2
        return (mp.expm1(r) - r) / r**2

    for name, n in (("exp Q(r) float", 5), ("exp Q(r) double", 10)):
        powers = list(range(0, n))
        c, e = remez(g_exp, lambda r: abs(r) + mp.mpf("1e-30"), -h, h, powers)
        show(name, c, e, powers)

    # float's exp computed in double (exp_dq, SGMCMC_FLOAT_EXP_IN_DOUBLE): e^r = 1 + r + r^2 Q(r)
    # with the relative error of e^r minimised, weight r^2 / e^r (2^-34.2 with six terms).
    powers = list(range(0, 6))
    c, e = remez(g_exp, lambda r: r * r / mp.exp(r) + mp.mpf("1e-30"), -h, h, powers)
    show("exp Q(r) float in double (use the double row)", c, e, powers)

    # sin / cos on [-pi/4, pi/4] in t = theta^2: sin = theta + theta^3 S(t), cos = 1 + t C(t).
    # Relative error of sin is about t err(S) / (1 - t/6): minimise t |err(S)|; cos's absolute
    # error t err(C) (cos >= 0.707).
    tmax = (mp.pi / 4) ** 2

    def g_sin(t):
        if t == 0:
            return mp.mpf(-1) / 6
        th = mp.sqrt(t)
        return (mp.sin(th) - th) / th**3

    def g_cos(t):
        if t == 0:
            return mp.mpf(-1) / 2
        th = mp.sqrt(t)
        return (mp.cos(th) - 1) / t

    for name, g, n in (("sin S(t) float", g_sin, 3), ("cos C(t) float", g_cos, 4),
                       ("sin S(t) double", g_sin, 6), ("cos C(t) double", g_cos, 7)):
        powers = list(range(0, n))
        c, e = remez(g, lambda t: t + mp.mpf("1e-30"), mp.mpf(0), tmax, powers)
        show(name, c, e, powers)


def tanh_tables():
    """tanh x = x + x^3 T(x^2) for |x| <= 0.55 (beyond, tanh uses expm1). Relative error of tanh
    is about t err(T), t = x^2: minimise t |err(T)|."""
    tmax = mp.mpf("0.55") ** 2

    def g_tanh(t):
        if t == 0:
            return mp.mpf(-1) / 3
        x = mp.sqrt(t)
        return (mp.tanh(x) - x) / x**3

    for name, n in (("tanh T(t) float", 5), ("tanh T(t) double", 11)):
        powers = list(range(0, n))
        c, e = remez(g_tanh, lambda t: t + mp.mpf("1e-30"), mp.mpf(0), tmax, powers)
        show(name, c, e, powers)


if __name__ == "__main__":
    main()
    tanh_tables()
