"""Hockey-stick divergences of a pair of computed laws, rounded down (for lower bounds).

A pair (P, Q) of laws on a finite set, each computed with an l1 error of at most ``slack``
(truncated mass plus round-off of the law it is built from) and a relative error of at most
``rtol`` per entry.  The exact ``delta(eps) = max(H_{e^eps}(P||Q), H_{e^eps}(Q||P))`` with
``H_E(P||Q) = sum_y max(P(y) - E Q(y), 0)`` (Balle, Barthe, Gaboardi, NeurIPS 2018,
Section 2) of the *true* pair is at least the computed one minus ``(1 + E) slack`` minus the
rounding allowance below; :func:`prepared_delta` returns that, clipped at 0.  Used by the exact
lower bounds ``rr_exact`` and ``window_lower`` (docs/theory.md, sections 9 and 13).

Preparation sorts the outcomes by likelihood ratio once; every ``delta(eps)`` is then one
binary search in the prefix sums (``H(P||Q)`` = the outcomes with ``P/Q > E``, ``H(Q||P)``
= those with ``P/Q < 1/E``).  Rounding allowance of a sum of ``L`` terms:
``(2 L u + rtol) (sum P + E sum Q)`` over the summed outcomes (``u`` the unit round-off).

>>> prep = prepare_pair(np.array([0.75, 0.25]), np.array([0.25, 0.75]), slack=0.0, rtol=0.0)
>>> round(prepared_delta(prep, 0.0), 9)
0.5
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

__all__ = ["PreparedPair", "prepare_pair", "prepared_delta"]

_U = float(np.finfo(float).eps) / 2.0
_TINY = 2.0**-1074  # the smallest positive (subnormal) double


@dataclass(frozen=True)
class PreparedPair:
    """Outcomes sorted by ``P/Q`` (decreasing) with prefix and suffix sums."""

    neg_ratio: NDArray[np.float64]  # -P/Q, increasing (presorted: of a monotone envelope)
    cp: NDArray[np.float64]  # prefix sums of P in that order (with a leading 0)
    cq: NDArray[np.float64]
    rp: NDArray[np.float64]  # suffix sums (from the small-ratio end, leading 0)
    rq: NDArray[np.float64]
    slack: float  # l1 error of each of P and Q (truncation plus round-off)
    length: int
    rtol: float  # relative error of the entries
    label: str = ""


def prepare_pair(p: NDArray[np.float64], q: NDArray[np.float64], *, slack: float,
                 rtol: float, label: str = "", ops: int = 0,
                 presorted: bool = False) -> PreparedPair:
    """Sort the outcomes of the computed pair ``(p, q)`` (same length, entries >= 0) by
    likelihood ratio; ``slack`` and ``rtol`` as in the module docstring.

    ``presorted``: the caller's order is by decreasing likelihood ratio in exact arithmetic
    (e.g. a count law that is log-concave), so no sort is done even where rounding makes the
    computed ratios disagree (in far tails); the searches then read a monotone envelope of the
    ratios (from the mode of ``p`` outwards: the running maximum to the left, the running
    minimum to the right).  Every prefix of any order is a set of outcomes, so the result
    stays a lower bound; the order only decides how tight it is.

    ``ops`` bounds the number of floating-point operations behind each entry: products that
    fall below the smallest double are flushed towards 0 with an absolute error of at most
    2^-1074 each, which no relative error bound covers, so ``4 (ops + 64) 2^-1074`` per
    outcome is added to ``slack`` (negligible, except that it keeps tiny values at huge
    ``eps``, where ``e^eps`` multiplies it, from rounding up)."""
    p = np.maximum(np.asarray(p, dtype=np.float64), 0.0)
    q = np.maximum(np.asarray(q, dtype=np.float64), 0.0)
    if p.shape != q.shape or p.ndim != 1:
        raise ValueError(f"p and q must be 1-d of one length, got shapes {p.shape}, {q.shape}")
    if not (math.isfinite(slack) and slack >= 0.0 and math.isfinite(rtol) and rtol >= 0.0):
        raise ValueError(f"slack and rtol must be finite and >= 0, got {slack!r}, {rtol!r}")
    underflow = 4.0 * (max(int(ops), 0) + 64) * _TINY * p.size
    keep = (p > 0) | (q > 0)
    p, q = p[keep], q[keep]
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(q > 0, p / q, np.inf)
    if presorted and ratio.size:
        # a monotone search key robust to rounding in the far tails: from the mode of P
        # outwards, the running maximum to the left and the running minimum to the right
        m = int(np.argmax(p))
        left = np.maximum.accumulate(ratio[m::-1])[::-1]
        ratio = np.concatenate([left[:-1], np.minimum.accumulate(ratio[m:])])
    elif not presorted:
        with np.errstate(invalid="ignore"):  # inf - inf where Q = 0 twice: not monotone
            step = np.diff(ratio)
        if bool(np.all(step <= 0)):  # already decreasing
            pass
        elif bool(np.all(step >= 0)):  # increasing: reversed
            ratio, p, q = ratio[::-1], p[::-1], q[::-1]
        else:
            order = np.argsort(-ratio, kind="stable")
            ratio, p, q = ratio[order], p[order], q[order]
    zero = np.zeros(1)
    return PreparedPair(
        neg_ratio=-ratio,
        cp=np.concatenate([zero, np.cumsum(p)]),
        cq=np.concatenate([zero, np.cumsum(q)]),
        rp=np.concatenate([zero, np.cumsum(p[::-1])]),
        rq=np.concatenate([zero, np.cumsum(q[::-1])]),
        slack=float(slack) + underflow,
        length=int(ratio.size),
        rtol=float(rtol),
        label=label,
    )


def prepared_delta(prep: PreparedPair, eps: float) -> float:
    """Lower bound on the true pair's ``delta(eps)``, both directions (module docstring).

    Beyond ``eps = 700`` (``e^eps`` overflows) only outcomes that one law gives and the other
    does not count, and any absolute error makes the bound 0.
    """
    if eps > 700.0:
        if prep.slack > 0.0:
            return 0.0
        # the longest prefix without Q mass and the longest suffix without P mass (Q = 0 < P
        # and P = 0 < Q in a sorted pair): sets that the other law does not reach
        i = int(np.searchsorted(prep.cq, 0.0, side="right")) - 1
        j = int(np.searchsorted(prep.rp, 0.0, side="right")) - 1
        keep = 1.0 - 2.0 * prep.length * _U - prep.rtol
        return float(max(prep.cp[i] * keep, prep.rq[j] * keep, 0.0))
    big_e = math.exp(eps)
    # H(P||Q): outcomes with P/Q > E are the first i
    i = int(np.searchsorted(prep.neg_ratio, -big_e, side="left"))
    h_pq = prep.cp[i] - big_e * prep.cq[i]
    r_pq = prep.cp[i] + big_e * prep.cq[i]
    # H(Q||P): outcomes with Q/P > E, i.e. P/Q < 1/E, are the last j
    j = prep.length - int(np.searchsorted(prep.neg_ratio, -1.0 / big_e, side="right"))
    h_qp = prep.rq[j] - big_e * prep.rp[j]
    r_qp = prep.rq[j] + big_e * prep.rp[j]
    round_pq = (2.0 * prep.length * _U + prep.rtol) * r_pq
    round_qp = (2.0 * prep.length * _U + prep.rtol) * r_qp
    slack = (1.0 + big_e) * prep.slack
    return float(max(h_pq - round_pq - slack, h_qp - round_qp - slack, 0.0))
