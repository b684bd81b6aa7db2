"""Frequency oracles over d categories: k-ary randomized response and optimized unary encoding.

Source for both: T. Wang, J. Blocki, N. Li, S. Jha, "Locally Differentially Private Protocols
for Frequency Estimation", USENIX Security 2017 (arXiv 1705.04421): Section 4.1 (direct
encoding, "GRR") and Section 4.4 (optimized unary encoding, "OUE"), with the pure-protocol
estimator of their Section 3, Theorem 2 / Eq. (2).  The personalized estimators and their
variances are in :class:`~shuffledp.mechanisms.base.FrequencyMechanism`.

Code names: ``d`` = the domain size (their d), ``eps`` = epsilon_i, ``p``/``q`` = their p and q
(probability that a report supports the true / any other category).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from shuffledp.errors import short_repr
from shuffledp.mechanisms.base import FrequencyMechanism, _values_array, as_reports, check_rng
from shuffledp.validation import as_real_array, check_array_range, check_int, describe

__all__ = ["GRRMechanism", "OUEMechanism"]

#: Rows of the (n, d) OUE report drawn at a time (bounds the float64 scratch memory).
OUE_CHUNK = 1 << 14


@dataclass(frozen=True, eq=False)
class GRRMechanism(FrequencyMechanism):
    """k-ary (generalized) randomized response over {0, ..., d-1}.

    User i reports its category with probability ``p_i = e^{eps_i} / (e^{eps_i} + d - 1)`` and
    each other category with probability ``q_i = 1 / (e^{eps_i} + d - 1)`` (Wang et al. 2017,
    Section 4.1, Eq. (5)); p_i / q_i = e^{eps_i}, so pure eps_i-LDP.  A report is one integer;
    it supports exactly the category it names.  Blanket mass (Balle, Bell, Gascon, Nissim,
    CRYPTO 2019, Section 4.1): ``d q_i = d / (e^{eps_i} + d - 1)``.  Randomizer family
    ``krr:d``: with identical budgets in the class of the stronger clones (FMT SODA 2023 with
    Errata); with personalized budgets a user provides clone mass
    2 (e^{eps_v}+d-1) / ((e^{eps_j}+d-1)(e^{eps_v}+1)) against a victim eps_v, below the
    stronger mass when eps_j < eps_v (docs/theory.md, 6.2).

    >>> m = GRRMechanism(eps=[np.log(2.0)] * 3, d=3)   # p = 1/2, q = 1/4
    >>> [float(v[0]) for v in m.support_probabilities()]
    [0.5, 0.25]
    >>> GRRMechanism(eps=[1.0, 1.0], d=1)
    Traceback (most recent call last):
    ...
    ValueError: d (number of categories) must be >= 2, got 1
    """

    name: ClassVar[str] = "grr"
    #: The randomizer family (shuffledp.families) this mechanism belongs to.
    family: ClassVar[str] = "krr"
    citation: ClassVar[str] = "Wang, Blocki, Li, Jha, USENIX Security 2017, Sec. 4.1"

    def _pq(self, eps: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        denom = np.exp(eps) + self.d - 1.0
        return np.exp(eps) / denom, 1.0 / denom

    def pmf(self, y: ArrayLike, x: ArrayLike) -> NDArray[np.float64]:
        """P(report = y | x) (broadcast against ``eps``)."""
        yv, xv = _values_array(y, "y"), _values_array(x, "x")
        p, q = self.support_probabilities()
        return np.where(yv == xv, p, q)

    def blanket_mass(self) -> NDArray[np.float64]:
        return self.d / (np.exp(self.eps) + self.d - 1.0)

    def randomize(self, x: ArrayLike, rng: np.random.Generator) -> NDArray[np.int64]:
        xv = self.check_values(x)
        rng = check_rng(rng)
        _, q = self.support_probabilities()
        # compare with the flip probability (d-1) q = (d-1)/(e^eps+d-1), not with p, which
        # rounds to 1 for large eps: a draw u < f happens with probability >= f, which keeps
        # every report possible and the realised randomizer eps_i-LDP
        keep = ~(rng.random(self.n) < (self.d - 1.0) * q)
        other = (xv + 1 + rng.integers(0, self.d - 1, size=self.n)) % self.d
        return np.where(keep, xv, other)

    def support_counts(
        self, reports: NDArray, weights: NDArray[np.float64] | None = None
    ) -> NDArray[np.float64]:
        rep = as_reports(reports)
        if rep.dtype.kind == "b":
            raise TypeError(f"grr reports must be integer categories, got {describe(reports)}")
        if rep.dtype.kind == "f":
            if not (np.isfinite(rep).all() and (rep == np.round(rep)).all()):
                raise ValueError(f"grr reports must be integer categories in [0, {self.d})")
        if rep.ndim != 1 or (rep.size and (rep.min() < 0 or rep.max() >= self.d)):
            raise ValueError(f"grr reports must be a 1-D array of categories in [0, {self.d})")
        w = _weights(weights, rep.shape[0])
        return np.bincount(rep.astype(np.int64), weights=w, minlength=self.d).astype(float)


@dataclass(frozen=True, eq=False)
class OUEMechanism(FrequencyMechanism):
    """Optimized unary encoding: a d-bit report.

    The category is one-hot encoded; the true bit is kept at 1 with probability ``p = 1/2``,
    every other bit becomes 1 with probability ``q_i = 1 / (e^{eps_i} + 1)`` (Wang et al. 2017,
    Section 4.4, Eq. (12)); the worst ratio is p (1-q) / ((1-p) q) = e^{eps_i}, pure
    eps_i-LDP.  A report supports every category whose bit is 1.  Blanket mass: the pointwise
    minimum over inputs of P(y) picks an input whose bit in y is 0 when there is one, giving
    ``gamma_i = (1 - q^d) / (2 (1 - q)) + q^{d-1} / 2``.

    >>> m = OUEMechanism(eps=[np.log(3.0)] * 2, d=4)     # q = 1/4
    >>> [float(v[0]) for v in m.support_probabilities()]
    [0.5, 0.25]
    >>> m.randomize([0, 3], np.random.default_rng(1)).shape
    (2, 4)
    """

    name: ClassVar[str] = "oue"
    #: The randomizer family (shuffledp.families) this mechanism belongs to.
    family: ClassVar[str] = "oue"
    citation: ClassVar[str] = "Wang, Blocki, Li, Jha, USENIX Security 2017, Sec. 4.4"

    def _pq(self, eps: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        return np.full(eps.shape, 0.5), 1.0 / (np.exp(eps) + 1.0)

    def pmf(self, y: ArrayLike, x: int, i: int = 0) -> float:
        """P(report = y | x) for one d-bit vector ``y`` and user ``i``'s budget."""
        yv = _values_array(y, "y")
        if yv.shape != (self.d,) or not np.isin(yv, (0.0, 1.0)).all():
            raise ValueError(f"y must be {self.d} bits (0 or 1), got {short_repr(y)}")
        yv = yv.astype(bool)
        x = check_int(x, "x", low=0, high=self.d - 1)
        i = check_int(i, "i", low=0, high=self.n - 1)
        q = float(self.support_probabilities()[1][i])
        probs = np.where(yv, q, 1.0 - q)
        probs[int(x)] = 0.5
        return float(np.prod(probs))

    def blanket_mass(self) -> NDArray[np.float64]:
        q = 1.0 / (np.exp(self.eps) + 1.0)
        return (1.0 - q**self.d) / (2.0 * (1.0 - q)) + q ** (self.d - 1) / 2.0

    def randomize(self, x: ArrayLike, rng: np.random.Generator) -> NDArray[np.uint8]:
        xv = self.check_values(x)
        rng = check_rng(rng)
        _, q = self.support_probabilities()
        out = np.empty((self.n, self.d), dtype=np.uint8)
        for start in range(0, self.n, OUE_CHUNK):
            stop = min(start + OUE_CHUNK, self.n)
            block = rng.random((stop - start, self.d)) < q[start:stop, None]
            block[np.arange(stop - start), xv[start:stop]] = rng.random(stop - start) < 0.5
            out[start:stop] = block
        return out

    def support_counts(
        self, reports: NDArray, weights: NDArray[np.float64] | None = None
    ) -> NDArray[np.float64]:
        rep = as_reports(reports)
        if rep.ndim != 2 or rep.shape[1] != self.d:
            raise ValueError(f"oue reports must have shape (n, {self.d}), got {rep.shape}")
        if rep.size and rep.dtype.kind != "b":
            in_range = rep.min() >= 0 and rep.max() <= 1
            if not in_range or (rep.dtype.kind == "f" and not np.isin(rep, (0, 1)).all()):
                raise ValueError("oue reports must be bits (0 or 1)")
        if weights is None:
            return rep.sum(axis=0, dtype=np.float64)
        w = _weights(weights, rep.shape[0])
        out = np.zeros(self.d)
        for start in range(0, rep.shape[0], OUE_CHUNK):
            stop = start + OUE_CHUNK
            out += w[start:stop] @ rep[start:stop].astype(float)
        return out


def _weights(weights: object, n: int) -> NDArray[np.float64] | None:
    """Per-report weights of :meth:`support_counts`: ``None`` or n finite reals."""
    if weights is None:
        return None
    w = as_real_array(weights, "weights", scalar=False)
    if w.shape != (n,):
        raise ValueError(f"weights must have one entry per report ({n}), got shape {w.shape}")
    check_array_range(w, "weights")
    return w
