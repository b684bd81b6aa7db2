"""Independent high-precision oracle for the soundness harness (tests/bounds/test_soundness.py).

This module shares no code with :mod:`shuffledp` (it does not import it).  Everything is
computed by enumeration in mpmath with ``DPS = 60`` significant digits, inside
``mp.workdps(DPS)`` (the global mpmath precision of other tests is left alone).

Shuffled binary randomized response, personalized budgets (``rr_delta``, ``rr_eps``).
    User i holds a bit x_i and reports it truthfully with probability
    ``q_i = e^{eps_i} / (1 + e^{eps_i})``; the lie probability ``1 - q_i`` is computed as
    ``1 / (1 + e^{eps_i})`` (no cancellation at eps_i = 50).  The analyst sees the number of
    reported ones, a Poisson-binomial (exact recursion).  For n <= 7 users every dataset
    x in {0,1}^n and every victim v is enumerated; the neighbour flips x_v.  Both orders of
    every neighbouring pair occur in that enumeration, and

        delta(eps) = max over ordered neighbouring pairs (P, Q) of sum_k max(P(k) - e^eps Q(k), 0).

    Pairs are deduplicated only by the symmetry "the law depends on the multiset of
    (eps_j, x_j)": the key is (eps_v, x_v, sorted multiset of the others' (eps_j, x_j)).

Shuffled k-ary randomized response, identical budgets (``krr_delta``, ``krr_eps``).
    Each user reports its value in {0, ..., k-1} with probability ``e^eps0 / (e^eps0 + k - 1)``
    and each other value with ``1 / (e^eps0 + k - 1)``; the analyst sees the histogram of the
    reports.  For n <= 5 every dataset in {0..k-1}^n and every change of one victim's value
    a -> b (a != b) is enumerated (deduplicated by (a, b, sorted others' values), since the
    budgets are identical).

Evaluation.  For one ordered pair the outcomes are sorted by likelihood ratio r = P/Q
(decreasing) with prefix sums A_j = sum P, B_j = sum Q; then ``H(eps) = A_j - e^eps B_j`` with
j = #{outcomes with r > e^eps}, which is literally the sum of the positive terms
``P(k) - e^eps Q(k)`` (``*_delta_direct`` evaluate that sum term by term, without any
deduplication, and the harness checks that the two agree).  When eps >= log(max r) the
curve is exactly 0 (no exponential of a huge eps is ever formed, so eps = 1e300 is fine).

Inversion.  ``*_eps`` return a bracket ``(lo, hi)`` with ``lo <= eps(delta) <= hi`` and
``hi - lo <= 1e-12`` (``EPS_BRACKET``), where ``eps(delta)`` is the smallest eps >= 0 with
``delta(eps) <= delta``.  The bracket is *certified* by evaluating the curve at both ends:
``delta(hi) <= delta`` and ``delta(lo) > delta`` (or ``lo = hi = 0`` when ``delta(0) <= delta``).
Its centre comes from the exact per-pair solution of ``A_j - e^eps B_j = delta``; if the
certification ever failed the answer falls back to plain bisection on [0, max log r].

Hand-checkable cases (n = 2, eps_1 = eps_2 = ln 3, so q = 3/4; the worst pair is the
other user at 0, P = law(0,0) = (9/16, 6/16, 1/16), Q = law(1,0) = (3/16, 10/16, 3/16)):

>>> import math
>>> from mpmath import mpf
>>> round(float(rr_delta((math.log(3), math.log(3)), 0.0)), 12)  # total variation: 6/16
0.375
>>> lo, hi = rr_eps((math.log(3), math.log(3)), 0.5)
>>> (lo, hi) == (0, 0)
True
"""

from __future__ import annotations

import functools
import itertools
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Sequence

from mpmath import mp, mpf

__all__ = [
    "DPS",
    "EPS_BRACKET",
    "N_MAX_RR",
    "N_MAX_KRR",
    "OracleError",
    "rr_delta",
    "rr_eps",
    "rr_delta_direct",
    "rr_count_law",
    "krr_delta",
    "krr_eps",
    "krr_delta_direct",
    "bisect_eps",
]

#: Working precision (significant decimal digits).
DPS = 60
#: Width of the certified eps bracket returned by ``rr_eps`` / ``krr_eps``.
EPS_BRACKET = 1e-12
#: Largest n of the enumerations (2^n datasets x n victims; 3^n x n x 2 for 3-RR).
N_MAX_RR = 7
N_MAX_KRR = 5


class OracleError(RuntimeError):
    """The oracle could not certify its own answer (never expected)."""


# --------------------------------------------------------------------------- basic laws
def _truth_lie(eps: float) -> tuple[mpf, mpf]:
    """(q, 1 - q) of binary RR, 1 - q computed as 1 / (1 + e^eps)."""
    e = mp.exp(mpf(eps))
    return e / (1 + e), 1 / (1 + e)


def _poisson_binomial(one_probs: Sequence[mpf]) -> list[mpf]:
    """Exact pmf of a sum of independent Bernoulli(one_probs[i])."""
    law = [mpf(1)]
    for p in one_probs:
        q = 1 - p
        nxt = [mpf(0)] * (len(law) + 1)
        for c, w in enumerate(law):
            nxt[c] += w * q
            nxt[c + 1] += w * p
        law = nxt
    return law


def rr_count_law(eps_list: Sequence[float], bits: Sequence[int]) -> list[mpf]:
    """Law of the number of reported ones when user i holds bits[i] (mpf list, length n+1).

    >>> import math
    >>> [round(float(x * 16), 12) for x in rr_count_law((math.log(3), math.log(3)), (0, 0))]
    [9.0, 6.0, 1.0]
    """
    with mp.workdps(DPS):
        probs = []
        for e, b in zip(eps_list, bits, strict=True):
            truth, lie = _truth_lie(e)
            probs.append(truth if b else lie)
        return _poisson_binomial(probs)


# --------------------------------------------------------------------------- one pair
class _Pair:
    """One ordered pair (P, Q) prepared for fast exact evaluation of H_{e^eps}(P || Q).

    With the ratios r_0 >= r_1 >= ... of P/Q and prefix sums A_j, B_j (j outcomes), for E
    between r_j and r_{j-1} the divergence is ``H(E) = A_j - E B_j``; ``g[j] = H(r_{j-1})``
    (non-decreasing in j, g[1] = 0) locates the piece on which H crosses a target.
    """

    __slots__ = ("ratios", "neg_ratios", "a", "b", "g", "max_ratio")

    def __init__(self, p: Sequence[mpf], q: Sequence[mpf]) -> None:
        terms = []
        for pk, qk in zip(p, q, strict=True):
            if pk <= 0:
                continue  # contributes max(0 - E q, 0) = 0
            if qk <= 0:
                raise OracleError("Q(k) = 0 < P(k): not possible for finite budgets")
            terms.append((pk / qk, pk, qk))
        terms.sort(key=lambda t: t[0], reverse=True)
        self.ratios = [t[0] for t in terms]
        self.neg_ratios = [-r for r in self.ratios]  # increasing, for bisect
        a, b = [mpf(0)], [mpf(0)]
        for _, pk, qk in terms:
            a.append(a[-1] + pk)
            b.append(b[-1] + qk)
        self.a, self.b = a, b
        # g[0] is unused (-1 keeps the list sorted); g[j] = A_j - r_{j-1} B_j for j >= 1
        self.g = [mpf(-1)] + [a[j] - self.ratios[j - 1] * b[j] for j in range(1, len(a))]
        self.max_ratio = self.ratios[0] if self.ratios else mpf(0)

    def delta(self, big_e: mpf) -> mpf:
        j = bisect_left(self.neg_ratios, -big_e)  # number of ratios > big_e
        if j == 0:
            return mpf(0)
        return self.a[j] - big_e * self.b[j]

    def eps_ratio(self, d: mpf) -> mpf:
        """e^{eps_p} for this pair's own inverse eps_p(d) = min {eps >= 0: H <= d}."""
        m = len(self.ratios)
        j = bisect_right(self.g, d) - 1  # largest j with H(r_{j-1}) <= d (j >= 1 as d >= 0)
        if j < 1:
            raise OracleError("negative target")
        upper = self.ratios[j - 1]
        lower = self.ratios[j] if j < m else mpf(0)
        x = (self.a[j] - d) / self.b[j]  # solves A_j - E B_j = d on this piece
        return max(min(max(x, lower), upper), mpf(1))


class _Curve:
    """The maximum over a family of ordered pairs."""

    def __init__(self, pairs: Iterable[_Pair]) -> None:
        self.pairs = list(pairs)
        top = max((p.max_ratio for p in self.pairs), default=mpf(0))
        self.log_max_ratio = mp.log(top) if top > 1 else mpf(0)

    def delta(self, eps: mpf) -> mpf:
        if eps >= self.log_max_ratio:
            return mpf(0)  # every ratio <= e^eps: every term is <= 0
        big_e = mp.exp(eps)
        return max((p.delta(big_e) for p in self.pairs), default=mpf(0))

    def eps_bracket(self, d: mpf) -> tuple[mpf, mpf]:
        if self.delta(mpf(0)) <= d:
            return mpf(0), mpf(0)
        x = max(p.eps_ratio(d) for p in self.pairs)
        centre = mp.log(x)
        half = mpf(EPS_BRACKET) / 4
        lo, hi = max(centre - half, mpf(0)), centre + half
        if self.delta(hi) <= d and (lo == 0 or self.delta(lo) > d):
            return lo, hi
        return bisect_eps(self.delta, d, mpf(0), self.log_max_ratio)  # pragma: no cover


def bisect_eps(delta_fn, d, lo, hi, width: float = EPS_BRACKET) -> tuple[mpf, mpf]:
    """Plain bisection for the smallest eps with delta_fn(eps) <= d, on [lo, hi] with
    delta_fn(lo) > d >= delta_fn(hi); returns the final bracket (width <= ``width``).

    >>> from mpmath import mp, mpf
    >>> with mp.workdps(DPS):
    ...     lo, hi = bisect_eps(lambda e: mp.exp(-e), mpf("1e-3"), mpf(0), mpf(50))
    >>> bool(lo <= mp.log(1000) <= hi and hi - lo <= 1e-12)
    True
    """
    with mp.workdps(DPS):
        lo, hi = mpf(lo), mpf(hi)
        if delta_fn(lo) <= d:
            return lo, lo
        if not delta_fn(hi) <= d:
            raise OracleError("bisection: upper end does not satisfy the target")
        while hi - lo > width:
            mid = (lo + hi) / 2
            if delta_fn(mid) <= d:
                hi = mid
            else:
                lo = mid
        return lo, hi


# --------------------------------------------------------------------------- binary RR
def _canonical(eps_list: Sequence[float]) -> tuple[float, ...]:
    out = tuple(sorted(float(e) for e in eps_list))
    if not 1 <= len(out) <= N_MAX_RR:
        raise ValueError(f"the binary RR oracle enumerates 1 <= n <= {N_MAX_RR}, got {len(out)}")
    if any(not (0.0 <= e <= 1e3) for e in out):
        raise ValueError(f"budgets must be in [0, 1e3], got {out}")
    return out


@functools.lru_cache(maxsize=32)  # about 10 MB per curve at n = 7
def _rr_curve(eps_sorted: tuple[float, ...]) -> _Curve:
    n = len(eps_sorted)
    with mp.workdps(DPS):
        tl = [_truth_lie(e) for e in eps_sorted]
        laws: dict[tuple[int, ...], list[mpf]] = {}
        for x in itertools.product((0, 1), repeat=n):
            laws[x] = _poisson_binomial([tl[i][0] if b else tl[i][1] for i, b in enumerate(x)])
        pairs = []
        seen: set[tuple] = set()
        for x in laws:
            for v in range(n):
                others = tuple(sorted((eps_sorted[j], x[j]) for j in range(n) if j != v))
                key = (eps_sorted[v], x[v], others)
                if key in seen:
                    continue
                seen.add(key)
                y = list(x)
                y[v] = 1 - y[v]
                pairs.append(_Pair(laws[x], laws[tuple(y)]))
        return _Curve(pairs)


@functools.lru_cache(maxsize=1 << 18)
def _rr_delta(eps_sorted: tuple[float, ...], eps: float) -> mpf:
    with mp.workdps(DPS):
        return _rr_curve(eps_sorted).delta(mpf(eps))


@functools.lru_cache(maxsize=1 << 18)
def _rr_eps(eps_sorted: tuple[float, ...], delta: float) -> tuple[mpf, mpf]:
    with mp.workdps(DPS):
        return _rr_curve(eps_sorted).eps_bracket(mpf(delta))


def rr_delta(eps_list: Sequence[float], eps: float) -> mpf:
    """Exact delta(eps) of shuffled binary RR with budgets ``eps_list`` (n <= 7), as an mpf
    with 60 significant digits (absolute error far below 1e-50)."""
    if not eps >= 0:
        raise ValueError(f"eps must be >= 0, got {eps!r}")
    return _rr_delta(_canonical(eps_list), float(eps))


def rr_eps(eps_list: Sequence[float], delta: float) -> tuple[mpf, mpf]:
    """Certified bracket ``(lo, hi)``, ``hi - lo <= 1e-12``, around the exact eps(delta) =
    min {eps >= 0 : delta(eps) <= delta} of shuffled binary RR (n <= 7)."""
    if not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1), got {delta!r}")
    return _rr_eps(_canonical(eps_list), float(delta))


def _hockey_direct(p: Sequence[mpf], q: Sequence[mpf], big_e: mpf) -> mpf:
    total = mpf(0)
    for pk, qk in zip(p, q, strict=True):
        term = pk - big_e * qk
        if term > 0:
            total += term
    return total


def rr_delta_direct(eps_list: Sequence[float], eps: float) -> mpf:
    """The same curve by the literal definition: every dataset, every victim, both laws
    recomputed, the hockey-stick sum term by term, no deduplication (slow; for
    cross-checking ``rr_delta``; eps must be moderate since e^eps is formed)."""
    n = len(eps_list)
    with mp.workdps(DPS):
        big_e = mp.exp(mpf(eps))
        best = mpf(0)
        for x in itertools.product((0, 1), repeat=n):
            for v in range(n):
                y = list(x)
                y[v] = 1 - y[v]
                p = rr_count_law(eps_list, x)
                q = rr_count_law(eps_list, y)
                best = max(best, _hockey_direct(p, q, big_e))
        return best


# --------------------------------------------------------------------------- k-ary RR
def _krr_histogram_law(values: Sequence[int], eps0: float, k: int) -> dict[tuple, mpf]:
    """Law of the report histogram (counts of 0..k-1) when user i holds values[i]."""
    e = mp.exp(mpf(eps0))
    keep = e / (e + k - 1)
    other = 1 / (e + k - 1)
    law: dict[tuple, mpf] = {(0,) * k: mpf(1)}
    for val in values:
        nxt: dict[tuple, mpf] = {}
        for hist, w in law.items():
            for r in range(k):
                h = list(hist)
                h[r] += 1
                h = tuple(h)
                nxt[h] = nxt.get(h, mpf(0)) + w * (keep if r == val else other)
        law = nxt
    return law


def _aligned(p: dict, q: dict) -> tuple[list[mpf], list[mpf]]:
    keys = sorted(set(p) | set(q))
    return [p.get(h, mpf(0)) for h in keys], [q.get(h, mpf(0)) for h in keys]


def _check_krr(n: int, eps0: float, k: int) -> tuple[int, float, int]:
    if not 1 <= int(n) <= N_MAX_KRR:
        raise ValueError(f"the k-RR oracle enumerates 1 <= n <= {N_MAX_KRR}, got {n}")
    if not 2 <= int(k) <= 4:
        raise ValueError(f"k must be in 2..4, got {k}")
    if not 0.0 <= float(eps0) <= 1e3:
        raise ValueError(f"eps0 must be in [0, 1e3], got {eps0}")
    return int(n), float(eps0), int(k)


@functools.lru_cache(maxsize=64)
def _krr_curve(n: int, eps0: float, k: int) -> _Curve:
    with mp.workdps(DPS):
        laws: dict[tuple[int, ...], dict] = {}
        pairs = []
        seen: set[tuple] = set()
        for x in itertools.product(range(k), repeat=n):
            for v in range(n):
                for b in range(k):
                    if b == x[v]:
                        continue
                    others = tuple(sorted(x[:v] + x[v + 1 :]))
                    key = (x[v], b, others)
                    if key in seen:
                        continue
                    seen.add(key)
                    y = x[:v] + (b,) + x[v + 1 :]
                    for z in (x, y):
                        zs = tuple(sorted(z))
                        if zs not in laws:
                            laws[zs] = _krr_histogram_law(zs, eps0, k)
                    p, q = _aligned(laws[tuple(sorted(x))], laws[tuple(sorted(y))])
                    pairs.append(_Pair(p, q))
        return _Curve(pairs)


@functools.lru_cache(maxsize=1 << 18)
def _krr_delta(n: int, eps0: float, k: int, eps: float) -> mpf:
    with mp.workdps(DPS):
        return _krr_curve(n, eps0, k).delta(mpf(eps))


@functools.lru_cache(maxsize=1 << 18)
def _krr_eps(n: int, eps0: float, k: int, delta: float) -> tuple[mpf, mpf]:
    with mp.workdps(DPS):
        return _krr_curve(n, eps0, k).eps_bracket(mpf(delta))


def krr_delta(n: int, eps0: float, eps: float, k: int = 3) -> mpf:
    """Exact delta(eps) of n shuffled k-RR users with identical budget eps0 (n <= 5).

    >>> import math
    >>> round(float(krr_delta(2, math.log(2), 0.0, k=3)), 12)  # TV 3/16 (by hand)
    0.1875
    """
    if not eps >= 0:
        raise ValueError(f"eps must be >= 0, got {eps!r}")
    n, eps0, k = _check_krr(n, eps0, k)
    return _krr_delta(n, eps0, k, float(eps))


def krr_eps(n: int, eps0: float, delta: float, k: int = 3) -> tuple[mpf, mpf]:
    """Certified bracket around eps(delta) of shuffled k-RR (as ``rr_eps``)."""
    if not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1), got {delta!r}")
    n, eps0, k = _check_krr(n, eps0, k)
    return _krr_eps(n, eps0, k, float(delta))


def krr_delta_direct(n: int, eps0: float, eps: float, k: int = 3) -> mpf:
    """The k-RR curve by the literal definition (every dataset, victim and change a -> b,
    no deduplication, term-by-term hockey-stick sum; slow, for cross-checking)."""
    with mp.workdps(DPS):
        big_e = mp.exp(mpf(eps))
        best = mpf(0)
        for x in itertools.product(range(k), repeat=n):
            for v in range(n):
                for b in range(k):
                    if b == x[v]:
                        continue
                    y = x[:v] + (b,) + x[v + 1 :]
                    p, q = _aligned(_krr_histogram_law(x, eps0, k),
                                    _krr_histogram_law(y, eps0, k))
                    best = max(best, _hockey_direct(p, q, big_e))
        return best
