"""Shuffled binary randomized response and one-bit Duchi, identical budgets: the exact worst
case over all datasets, rounded up (registered ``rr_upper``, kind ``upper``).

Mechanism (as in :mod:`shuffledp.bounds.rr_exact`).  Every user reports its bit truthfully with
probability ``q = e^{eps0} / (1 + e^{eps0})``; the shuffled output is the number K of reported
ones.  For neighbouring datasets (the victim's bit 0 versus 1, the others' bits fixed) only the
number k of others holding a 1 matters: the others' count is
``S_k = Bin(n - 1 - k, p) + Bin(k, q)``, ``p = 1 - q``, and

    P_k(x) = q s_k(x) + p s_k(x - 1),     Q_k(x) = p s_k(x) + q s_k(x - 1).

So the true privacy curve of the shuffled protocol is exactly
``delta(eps) = max_k max(H_E(P_k || Q_k), H_E(Q_k || P_k))``, ``E = e^eps``, over
``k = 0, ..., n - 1``; by the mirror ``K -> n - K`` the pair (k, P -> Q) is the pair
(n - 1 - k, Q -> P), so ``k <= (n - 1) / 2`` with both directions is every pair.  No
configuration is the worst for every (n, eps0, eps): the maximiser moves between k = 0 and a
few dozen (docs/theory.md 9.1), so every k is evaluated.  ``rr_exact`` evaluates a subset of
the same pairs rounded down (a lower bound); this module evaluates all of them rounded up
(an upper bound), so the two bracket the truth.

One-bit Duchi (Wang et al., ICDE 2019, Algorithm 1) with budget eps0 has, at every input, a
report law between binary RR's two (a mixture of them); the hockey-stick divergence of the
shuffled output is jointly convex in the victim's pair of report laws and convex in each other
user's report law, so its maximum over Duchi's inputs is at inputs +-1, binary RR
(the claim of docs/theory.md 9.1).  The bound covers both families.

Why the largest set is a prefix.  ``s_k`` is a Poisson-binomial pmf, hence log-concave, so
``t = s_k(x) / s_k(x - 1)`` decreases in x and ``P_k / Q_k = (q t + p) / (p t + q)`` decreases in
x (q >= p).  The set ``{P_k > E Q_k}`` is therefore an initial segment of the support and
``{Q_k > E P_k}`` a final one: ``H_E(P_k || Q_k) = max_i (CP_i - E CQ_i)`` over the prefix sums
(i = 0 the empty set), ``H_E(Q_k || P_k)`` the same over the suffix sums.  This uses the
*exact* order, so no computed likelihood ratio decides anything.

Rounding up.  ``s_k`` is the convolution of two binomial windows (scipy's pmf, relative error
at most ``_PMF_RTOL`` per entry; tails cut at ``tol / 2`` each, the cut mass known), by FFT
(l1 round-off bounded as in :mod:`shuffledp.poisson_binomial`) or directly (exact up to a
relative O(u)).  With ``eta_k`` = the cut mass plus the FFT's l1 error and ``rho`` = the
relative error of an entry and of a prefix sum (``2 _PMF_RTOL + (2 L + 16) u``, L the row
length), every prefix (and suffix) of the true pair satisfies
``P(A) - E Q(A) <= CP_i (1 + rho) - E CQ_i (1 - rho) + (1 + E) eta_k``, so

    delta_up(eps) = max_k max_i [CP_i (1 + rho) - E CQ_i (1 - rho)] + (1 + E) eta_k,

and the same with suffixes.  ``eps(delta)`` is solved without a search: every constraint
``CP_i (1 + rho) + eta_k - delta <= E (CQ_i (1 - rho) - eta_k)`` is linear in E, so the smallest
E satisfying all of them is one pass of maxima (``eps = log E``, rounded up); ``inf`` when no E
does (then the local guarantee caps the result).

Range.  Identical pure budgets only (a personalized profile has ``2^(n-1)`` configurations; and
raising budgets to the largest one is not a post-processing of the shuffled output).
Every k is one window pair, so the cost grows as ``n^1.5``: ``n <= N_MAX_USERS`` = 2 10^4
(at most about 7 s on one core, at eps0 near 0; 10^4 users at eps0 = 1 take about 2 s, at
eps0 = 4 about 0.5 s; results are cached).  Beyond it ``tightest`` uses its other members.
Small targets: the FFT's absolute round-off (about 1e-14, times ``1 + e^eps``) makes the bound
vacuous for delta below about 1e-12 where the windows are long (small eps0, large n); the
direct convolution used for short windows keeps relative accuracy.

Code names -> symbols: ``k`` = others holding a one, ``s`` = pmf of S_k, ``q`` = e^eps0 /
(1 + e^eps0), ``E`` = e^eps, ``eta`` = absolute l1 error of s_k, ``rho`` = relative error.

>>> from shuffledp import BudgetProfile
>>> p = BudgetProfile.identical(n=3, eps0=math.log(3.0))
>>> round(rr_upper_delta(profile=p, eps=0.0), 7)  # total variation, worst pair k = 1
0.3125
"""

from __future__ import annotations

import math
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from shuffledp._lazy import lazy_module
from shuffledp.bounds.base import Bound, BoundInfo
from shuffledp.bounds.registry import register_bound
from shuffledp.budgets import BudgetProfile
from shuffledp.caching import lru_get, lru_put, register_mapping
from shuffledp.errors import ParameterRegimeError
from shuffledp.poisson_binomial import _fft_err_l2, binomial_windows

special = lazy_module("scipy.special")
sfft = lazy_module("scipy.fft")

__all__ = ["N_MAX_USERS", "TOL", "rr_upper_delta", "rr_upper_eps", "BOUND"]

_U = float(np.finfo(float).eps) / 2.0
#: Largest number of users evaluated (every k is a pair: cost ~ n^1.5).
N_MAX_USERS = 2 * 10**4
#: Mass cut from each binomial window (both tails together); it is charged at (1 + e^eps).
TOL = 1e-40
#: Relative error of scipy's binomial pmf entries (as in rr_exact; measured <= 5e-11).
_PMF_RTOL = 1e-9
#: Rows per batched FFT (a chunk is at most about 2^23 complex numbers).
_CHUNK_CELLS = 1 << 23
#: Direct (exact up to a relative O(u)) convolution when a chunk's work is at most this many
#: products or the shorter window has at most ``_DIRECT_SHORT`` entries; else FFT, whose
#: absolute round-off (times e^eps) would swamp small deltas at large eps0.
_DIRECT_WORK = 1 << 27
_DIRECT_SHORT = 64


@dataclass(frozen=True)
class _Rows:
    """A chunk of pairs: ``s[r]`` approximates ``Pr[S_k = off[r] + x]``, padded with zeros."""

    s: NDArray[np.float64]
    eta: NDArray[np.float64]  # absolute l1 error of each row (cut mass + FFT round-off)
    rho: float  # relative error of every entry and prefix sum


def _chunk(n: int, p: float, q: float, ks: NDArray[np.int64], tol: float) -> _Rows:
    wa = binomial_windows(n - 1 - ks, np.full(ks.size, p), tol / 2.0, np.full(ks.size, q))
    wb = binomial_windows(ks, np.full(ks.size, q), tol / 2.0, np.full(ks.size, p))
    la = max(w.pmf.size for w in wa)
    lb = max(w.pmf.size for w in wb)
    out_len = la + lb - 1
    a = np.zeros((ks.size, la))
    b = np.zeros((ks.size, lb))
    for r, (x, y) in enumerate(zip(wa, wb, strict=True)):
        a[r, : x.pmf.size] = x.pmf
        b[r, : y.pmf.size] = y.pmf
    eta = np.array([x.dropped_mass + y.dropped_mass for x, y in zip(wa, wb, strict=True)])
    if ks.size * la * lb <= _DIRECT_WORK or min(la, lb) <= _DIRECT_SHORT:
        s = np.zeros((ks.size, out_len))
        short, long_ = (a, b) if la <= lb else (b, a)
        for j in range(short.shape[1]):  # non-negative sums: relative error O(u) per term
            s[:, j:j + long_.shape[1]] += short[:, j:j + 1] * long_
        direct_terms = short.shape[1]
        fft_l1 = np.zeros(ks.size)
    else:
        nfft = sfft.next_fast_len(out_len, real=True)
        s = sfft.irfft(sfft.rfft(a, nfft, axis=1) * sfft.rfft(b, nfft, axis=1), nfft,
                       axis=1)[:, :out_len]
        np.maximum(s, 0.0, out=s)
        fft_l1 = np.array([_fft_err_l2(a[r], b[r], nfft) for r in range(ks.size)])
        fft_l1 *= math.sqrt(out_len)
        direct_terms = 0
    # every row starts at its own offset (a.offset + b.offset); within a row the order is the
    # order of x, which is all that matters (each row is one pair)
    rho = 2.0 * _PMF_RTOL + (2.0 * (out_len + direct_terms) + 16.0) * _U
    s, cut = _trim(s, tol / 2.0)
    return _Rows(s=s, eta=eta + fft_l1 + cut * (1.0 + rho), rho=rho)


def _trim(s: NDArray[np.float64], tail: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Cut from every row the longest head and tail of computed mass <= ``tail`` each, rows
    realigned at their new first entry; returns the rows and the computed mass cut per row.

    The convolution of two windows is wider than the tails of its own law need (their widths
    add, its spread grows as the root of the sum of squares), so this shortens every later pass.
    """
    rows, width = s.shape
    if width < 64:
        return s, np.zeros(rows)
    head = np.cumsum(s, axis=1)
    first = np.sum(head <= tail, axis=1)  # entries 0..first-1 carry <= tail
    back = np.cumsum(s[:, ::-1], axis=1)
    last = width - np.sum(back <= tail, axis=1)  # entries last..width-1 carry <= tail
    last = np.maximum(last, first + 1)
    keep = int(np.max(last - first))
    if keep >= width - 8:
        return s, np.zeros(rows)
    idx = np.minimum(first[:, None] + np.arange(keep)[None, :], width - 1)
    out = np.take_along_axis(s, idx, axis=1)
    out[np.arange(keep)[None, :] >= (last - first)[:, None]] = 0.0
    r = np.arange(rows)
    cut_head = np.where(first > 0, head[r, np.maximum(first - 1, 0)], 0.0)
    cut_tail = np.where(last < width, back[r, np.maximum(width - last - 1, 0)], 0.0)
    return out, cut_head + cut_tail


def _pairs(n: int, eps0: float, tol: float) -> list[_Rows]:
    q = float(special.expit(eps0))
    p = float(special.expit(-eps0))
    kmax = (n - 1) // 2
    ks_all = np.arange(kmax + 1, dtype=np.int64)
    width = 60.0 * math.sqrt(max(n * p * q, 1.0)) + 64.0  # generous row length estimate
    per = max(1, int(_CHUNK_CELLS // width))
    return [_chunk(n, p, q, ks_all[i:i + per], tol) for i in range(0, ks_all.size, per)]


_CACHE: OrderedDict[tuple, list[_Rows]] = OrderedDict()
register_mapping("rr_upper.pairs", _CACHE)
_CACHE_SIZE = 2
#: Rows kept in the cache only below this many cells in all (larger n recompute).
_CACHE_CELLS = 1 << 25


def _rows(n: int, eps0: float, tol: float) -> list[_Rows]:
    key = (int(n), float(eps0), float(tol))
    hit = lru_get(_CACHE, key)
    if hit is not None:
        return hit
    rows = _pairs(n, eps0, tol)
    if sum(r.s.size for r in rows) <= _CACHE_CELLS:
        rows = lru_put(_CACHE, key, rows, _CACHE_SIZE)
    return rows


def _laws(rows: _Rows, p: float, q: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """P and Q of every row (victim 0 versus 1): ``x`` from the row's offset to offset + L."""
    z = np.zeros((rows.s.shape[0], 1))
    f = np.concatenate([z, rows.s, z], axis=1)
    return q * f[:, 1:] + p * f[:, :-1], p * f[:, 1:] + q * f[:, :-1]


def _sums(rows: _Rows, p: float, q: float):
    big_p, big_q = _laws(rows, p, q)
    z = np.zeros((big_p.shape[0], 1))
    cp = np.concatenate([z, np.cumsum(big_p, axis=1)], axis=1)
    cq = np.concatenate([z, np.cumsum(big_q, axis=1)], axis=1)
    rp = np.concatenate([z, np.cumsum(big_p[:, ::-1], axis=1)], axis=1)
    rq = np.concatenate([z, np.cumsum(big_q[:, ::-1], axis=1)], axis=1)
    return cp, cq, rp, rq


def _check(*, profile: BudgetProfile, tol: float = TOL) -> None:
    if not (isinstance(tol, (int, float)) and not isinstance(tol, bool) and 0.0 < tol <= 1e-12):
        raise ValueError(f"tol must be a number in (0, 1e-12], got {tol!r}")
    if not profile.is_identical:
        raise ParameterRegimeError(
            "rr_upper holds for identical budgets only; the profile has eps_i in "
            f"[{profile.eps_min:g}, {profile.eps_max:g}]")
    if profile.n > N_MAX_USERS:
        raise ParameterRegimeError(
            f"rr_upper evaluates every configuration, n <= {N_MAX_USERS:g}; got n = {profile.n}")


def _raw_delta(n: int, eps0: float, eps: float, tol: float) -> tuple[float, float]:
    """``(delta_up(eps), floor)``: the rounded-up value and its part ``(1 + E) max eta``."""
    q, p = float(special.expit(eps0)), float(special.expit(-eps0))
    big_e = math.exp(eps)
    worst, floor = 0.0, 0.0
    for rows in _rows(n, eps0, tol):
        cp, cq, rp, rq = _sums(rows, p, q)
        up, lo = 1.0 + rows.rho, 1.0 - rows.rho
        h_pq = np.max(cp * up - big_e * cq * lo, axis=1)
        h_qp = np.max(rq * up - big_e * rp * lo, axis=1)
        h = np.maximum(h_pq, h_qp) + (1.0 + big_e) * rows.eta
        worst = max(worst, float(np.max(h)))
        floor = max(floor, (1.0 + big_e) * float(np.max(rows.eta)))
    return min(worst * (1.0 + 4.0 * _U), 1.0), floor


_ARGMIN: OrderedDict[tuple, float] = OrderedDict()
register_mapping("rr_upper.argmin", _ARGMIN)


def _argmin_eps(n: int, eps0: float, tol: float) -> float:
    """The eps in [0, eps0] where ``delta_up`` is smallest (golden-section search).

    ``delta_up`` is a maximum of functions ``a + eta - E (b - eta)``, affine in E = e^eps, so it
    is convex in E and unimodal in eps; past its minimum only the error charge ``(1 + E) eta``
    makes it grow."""
    key = (int(n), float(eps0), float(tol))
    hit = _ARGMIN.get(key)
    if hit is not None:
        return hit
    inv = (math.sqrt(5.0) - 1.0) / 2.0
    a, b = 0.0, eps0
    c, d = b - inv * (b - a), a + inv * (b - a)
    fc, fd = _raw_delta(n, eps0, c, tol)[0], _raw_delta(n, eps0, d, tol)[0]
    while b - a > 1e-9 * max(eps0, 1e-3):
        if fc <= fd:
            b, d, fd = d, c, fc
            c = b - inv * (b - a)
            fc = _raw_delta(n, eps0, c, tol)[0]
        else:
            a, c, fc = c, d, fd
            d = a + inv * (b - a)
            fd = _raw_delta(n, eps0, d, tol)[0]
    return lru_put(_ARGMIN, key, c if fc <= fd else d, 16)


def rr_upper_delta(*, profile: BudgetProfile, eps: float, tol: float = TOL) -> float:
    """Upper bound on the exact delta(eps) of shuffled binary RR (module docstring),
    non-increasing in eps.

    The true delta(eps) is non-increasing, so ``delta(eps) <= delta_up(eps')`` for every
    eps' <= eps.  Where the error charge ``(1 + E) eta`` is a noticeable part of the value
    (very small deltas from long FFT windows), the value is ``delta_up(min(eps, eps*))``, eps*
    the minimiser of ``delta_up`` (``delta_up`` is unimodal, :func:`_argmin_eps`), so the curve
    stays monotone instead of rising with E.

    >>> from shuffledp import BudgetProfile
    >>> d = rr_upper_delta(profile=BudgetProfile.identical(n=1000, eps0=4.0), eps=1.69)
    >>> bool(1e-6 < d < 1e-5)
    True
    """
    if not math.isfinite(eps) or eps < 0:
        raise ValueError(f"eps must be finite and >= 0, got {eps!r}")
    _check(profile=profile, tol=tol)
    eps0 = profile.eps_max
    if eps >= eps0:  # pure eps0-LDP: delta is 0
        return 0.0
    value, floor = _raw_delta(profile.n, eps0, eps, tol)
    if floor > 1e-3 * value:
        star = _argmin_eps(profile.n, eps0, tol)
        if star < eps:
            value = min(value, _raw_delta(profile.n, eps0, star, tol)[0])
    return value


def _smallest_e(num: NDArray[np.float64], den: NDArray[np.float64]) -> tuple[float, float]:
    """``(E_lo, E_hi)``: the interval of E with ``num <= E den`` in every entry."""
    need = num > 0.0
    if bool(np.any(need & (den <= 0.0))):
        return math.inf, 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        lo = float(np.max(np.where(need, num / np.where(need, den, 1.0), 1.0), initial=1.0))
        cap = den < 0.0
        hi = float(np.min(np.where(cap, num / np.where(cap, den, -1.0), math.inf),
                          initial=math.inf))
    return lo, hi


def rr_upper_eps(*, profile: BudgetProfile, delta: float, tol: float = TOL) -> float:
    """The smallest eps certified at ``delta`` (module docstring); ``inf`` if none.

    >>> from shuffledp import BudgetProfile
    >>> round(rr_upper_eps(profile=BudgetProfile.identical(n=10**4, eps0=1.0), delta=1e-6), 4)
    0.0357
    """
    _check(profile=profile, tol=tol)
    eps0 = profile.eps_max
    q, p = float(special.expit(eps0)), float(special.expit(-eps0))
    e_lo, e_hi = 1.0, math.inf
    for rows in _rows(profile.n, eps0, tol):
        cp, cq, rp, rq = _sums(rows, p, q)
        up, lo = 1.0 + rows.rho, 1.0 - rows.rho
        eta = rows.eta[:, None]
        for a, b in ((cp, cq), (rq, rp)):
            num = a * up + eta - delta
            den = b * lo - eta
            lo_e, hi_e = _smallest_e(num, den)
            e_lo, e_hi = max(e_lo, lo_e), min(e_hi, hi_e)
    if not (e_lo <= e_hi) or not math.isfinite(e_lo):
        return math.inf
    eps = math.log(e_lo)
    return math.nextafter(eps * (1.0 + 8.0 * _U) + 8.0 * _U, math.inf) if eps > 0 else 0.0


def _diagnostics(*, profile: BudgetProfile, eps: float, delta: float,
                 tol: float = TOL) -> dict[str, Any]:
    return {"pairs_searched": (profile.n - 1) // 2 + 1, "exhaustive": True}


BOUND = register_bound(
    Bound(
        info=BoundInfo(
            name="rr_upper",
            kind="upper",
            title="Shuffled binary RR / one-bit Duchi, exact worst case rounded up (identical)",
            citation="Every configuration of shuffled Warner RR, exact count laws; "
                     "docs/theory.md 9.1",
            personalized=False,
            approx_ldp=False,
            randomizers=("binary_rr", "duchi"),
            options={"tol": TOL},
            coverage_note="binary RR and one-bit Duchi, identical pure budgets, n <= 2 10^4",
        ),
        delta_fn=rr_upper_delta,
        eps_fn=rr_upper_eps,
        check_fn=_check,
        diagnostics_fn=_diagnostics,
    )
)
