"""Chi-square statistics for the shuffle acceptance tests, in plain Python.

The p-value of a chi-square statistic is the regularized upper incomplete gamma function
``Q(df/2, x/2)``, computed with the series for ``x < a + 1`` and Lentz's continued fraction
otherwise (Numerical Recipes, 3rd ed., 6.2). Used by the CI statistical tests, the negative
controls and ``pokerctl rng check``; the functions take plain count lists so they work for any
test layout.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

_EPS = 1e-15
_TINY = 1e-300
_MAX_ITER = 100_000


def _gamma_p_series(a: float, x: float) -> float:
    term = total = 1.0 / a
    ap = a
    for _ in range(_MAX_ITER):
        ap += 1.0
        term *= x / ap
        total += term
        if abs(term) < abs(total) * _EPS:
            break
    return total * math.exp(-x + a * math.log(x) - math.lgamma(a))


def _gamma_q_fraction(a: float, x: float) -> float:
    b = x + 1.0 - a
    c = 1.0 / _TINY
    d = 1.0 / b
    h = d
    for i in range(1, _MAX_ITER):
        an = -i * (i - a)
        b += 2.0
        d = an * d + b
        if abs(d) < _TINY:
            d = _TINY
        c = b + an / c
        if abs(c) < _TINY:
            c = _TINY
        d = 1.0 / d
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < _EPS:
            break
    return h * math.exp(-x + a * math.log(x) - math.lgamma(a))


def gamma_q(a: float, x: float) -> float:
    """Regularized upper incomplete gamma ``Q(a, x) = Gamma(a, x) / Gamma(a)``."""
    if a <= 0 or x < 0:
        raise ValueError("gamma_q needs a > 0 and x >= 0")
    if x == 0:
        return 1.0
    if x < a + 1.0:
        return max(0.0, 1.0 - _gamma_p_series(a, x))
    return _gamma_q_fraction(a, x)


def chi2_sf(x: float, df: int) -> float:
    """P(X >= x) for X chi-square with ``df`` degrees of freedom."""
    return gamma_q(df / 2.0, x / 2.0)


@dataclass(frozen=True, slots=True, kw_only=True)
class ChiSquare:
    statistic: float
    df: int
    p: float


def goodness_of_fit(observed: Sequence[int], expected: Sequence[float]) -> ChiSquare:
    """Pearson's chi-square of counts against expected counts (same total), df = cells - 1."""
    if len(observed) != len(expected) or len(observed) < 2:
        raise ValueError("need two or more cells, as many expected as observed")
    stat = sum((o - e) ** 2 / e for o, e in zip(observed, expected, strict=True))
    df = len(observed) - 1
    return ChiSquare(statistic=stat, df=df, p=chi2_sf(stat, df))


def uniform_fit(observed: Sequence[int]) -> ChiSquare:
    """Chi-square of counts against equal cell probabilities."""
    e = sum(observed) / len(observed)
    return goodness_of_fit(observed, [e] * len(observed))


def independence(table: Sequence[Sequence[int]]) -> ChiSquare:
    """Chi-square test of independence of an r x c contingency table, df = (r-1)(c-1).

    Empty rows and columns carry no information about dependence and are dropped first.
    """
    table = [r for r in table if any(r)]
    keep = [j for j, col in enumerate(zip(*table, strict=True)) if any(col)]
    table = [[r[j] for j in keep] for r in table]
    rows = [sum(r) for r in table]
    cols = [sum(c) for c in zip(*table, strict=True)]
    n = sum(rows)
    stat = 0.0
    for i, r in enumerate(table):
        for j, o in enumerate(r):
            e = rows[i] * cols[j] / n
            stat += (o - e) ** 2 / e
    df = (len(rows) - 1) * (len(cols) - 1)
    if df == 0:  # a single row or column: nothing can depend on anything
        return ChiSquare(statistic=stat, df=0, p=1.0)
    return ChiSquare(statistic=stat, df=df, p=chi2_sf(stat, df))


def pooled_fit(
    observed: Sequence[int], probabilities: Sequence[float], min_expected: float = 5.0
) -> ChiSquare:
    """Goodness of fit after merging adjacent cells (in the given order) whose expected count is
    below ``min_expected``, the usual validity rule for Pearson's approximation."""
    n = sum(observed)
    obs: list[int] = []
    exp: list[float] = []
    acc_o, acc_e = 0, 0.0
    for o, p in zip(observed, probabilities, strict=True):
        acc_o += o
        acc_e += n * p
        if acc_e >= min_expected:
            obs.append(acc_o)
            exp.append(acc_e)
            acc_o, acc_e = 0, 0.0
    if acc_e > 0 or acc_o:
        if exp:
            obs[-1] += acc_o
            exp[-1] += acc_e
        else:
            obs.append(acc_o)
            exp.append(acc_e)
    return goodness_of_fit(obs, exp)
