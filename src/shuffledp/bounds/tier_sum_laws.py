"""The score of one report and its laws, and the direct pipeline of ``tier_sum_lower``: one
FFT per distinct budget (docs/theory.md 13.6; the bound and its docstring:
:mod:`shuffledp.bounds.tier_sum`; many distinct budgets: :mod:`shuffledp.bounds.tier_sum_many`).

Code names -> symbols: ``g`` the score of one report (``cell_scores``), ``LEVELS`` its largest
value, ``O`` the others' sum's law, ``A``/``B`` T's law under P/Q (``_Pipeline``), ``E`` = e^eps.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from shuffledp._lazy import lazy_module
from shuffledp.bounds.blanket.amplification import FFT_SAFETY, _bernstein, _halfwidth
from shuffledp.caching import register_mapping
from shuffledp.errors import ParameterRegimeError
from shuffledp.families import Family

sfft = lazy_module("scipy.fft")

__all__ = ["LEVELS", "CELLS", "cell_edges", "cell_masses", "cell_scores", "tier_laws",
           "exact_sums", "integer_sums", "SUM_UNIT"]

_U = float(np.finfo(float).eps) / 2.0
#: Work allowed per pipeline: tiers times FFT points.
WORK = float(1 << 27)
#: Largest value of the score g of one report.
LEVELS = 1024
#: Cells of the output line that define g.
CELLS = 4096
#: Mass allowed outside the FFT window (Bernstein), charged.
WINDOW_TAIL = 1e-20
#: Largest FFT size.
MAX_FFT = 1 << 22
#: FFT size above which the score is coarsened (merged values: still a valid statistic).
TARGET_FFT = 1 << 19
#: The unit of :func:`exact_sums`: every mass is floored to a multiple of it, then summed in
#: integers (exactly).  Rows of total mass at most 2 stay below 2^61 units (no overflow).
SUM_UNIT = 2.0 ** -60
#: Rows per block of :func:`exact_sums` (memory only).
_SUM_ROWS = 1 << 12


def exact_sums(m: NDArray, index: NDArray, size: int) -> tuple[NDArray, NDArray]:
    """The sums of the columns of ``m`` by bin (``index[c]`` in ``0..size-1`` the bin of
    column c), per row, as floats, and a bound per row on the l1 distance of those floats from
    the exact sums of ``m``'s entries.

    Each entry (in [0, 1]) is floored to a multiple of ``SUM_UNIT`` (an error below one unit),
    the bins are summed in 64-bit integers (exact), and each sum is converted to a float (a
    relative error of at most u): the bound is ``columns x SUM_UNIT + u x the row's sum``, at
    least a thousand times smaller than a float sum's ``columns x u`` (docs/theory.md 13.6,
    "rounding")."""
    m = np.atleast_2d(np.asarray(m, dtype=np.float64))
    out = integer_sums(m, index, size).astype(np.float64) * SUM_UNIT
    err = m.shape[1] * SUM_UNIT + _U * out.sum(axis=1) * (1.0 + 1e-9)
    return out, err


def integer_sums(m: NDArray, index: NDArray, size: int) -> NDArray[np.int64]:
    """The exact sums of :func:`exact_sums` in units of ``SUM_UNIT`` (64-bit integers): each
    entry of ``m`` (in [0, 1], row sums at most 2) floored to a multiple of the unit, the
    columns summed by bin."""
    m = np.atleast_2d(np.asarray(m, dtype=np.float64))
    index = np.asarray(index, dtype=np.int64)
    if np.any(m < 0.0) or np.any(m > 1.0) or np.any(m.sum(axis=1) > 2.0):
        raise ValueError("exact_sums: entries must lie in [0, 1], row sums at most 2")
    order = np.argsort(index, kind="stable")
    sorted_idx = index[order]
    starts = np.flatnonzero(np.concatenate([[True], sorted_idx[1:] != sorted_idx[:-1]]))
    out = np.zeros((m.shape[0], size), dtype=np.int64)
    for r in range(0, m.shape[0], _SUM_ROWS):
        block = np.floor(m[r:r + _SUM_ROWS][:, order] / SUM_UNIT).astype(np.int64)
        out[r:r + _SUM_ROWS, sorted_idx[starts]] = np.add.reduceat(block, starts, axis=1)
    return out


# --------------------------------------------------------------------------- interval masses
_MASSES: dict[tuple, tuple] = {}
register_mapping("tier_sum.masses", _MASSES)

def _mass_fn(fam: Family):
    """``mass(lo, hi, x, eps, delta) -> (values, error bounds)`` vectorised over tiers, and
    the range of fine cells for a victim budget ``(eps_v, delta_v)``."""
    if fam.name == "laplace":
        from shuffledp.families.laplace import _mass_laplace

        def mass(lo, hi, x, eps, delta):
            return _mass_laplace(lo, hi, x, 2.0 / eps)

        def span(eps_v, delta_v):  # the victim's reports: 20 scales beyond +-1
            return -1.0 - 40.0 / eps_v, 1.0 + 40.0 / eps_v
    elif fam.name == "gaussian":
        from shuffledp.families.gaussian import _mass_gauss, sigmas

        def mass(lo, hi, x, eps, delta):
            return _mass_gauss(lo, hi, x, sigmas(eps, delta))

        def span(eps_v, delta_v):
            s = float(sigmas(np.array([eps_v]), np.array([delta_v]))[0])
            return -1.0 - 8.0 * s, 1.0 + 8.0 * s
    elif fam.name == "piecewise":
        from shuffledp.families.piecewise import _mass_piecewise

        def mass(lo, hi, x, eps, delta):
            return _mass_piecewise(lo, hi, x, eps)

        def span(eps_v, delta_v):  # the victim's output range [-C, C]
            c = 1.0 + 2.0 / math.expm1(eps_v / 2.0)
            return -c, c
    elif fam.name == "laplace_shared":  # s_j x + Lap(1), s_j = eps_j / 2 (common units)
        from shuffledp.families.laplace_shared import shared_laplace_mass

        def mass(lo, hi, x, eps, delta):
            return shared_laplace_mass(lo, hi, x * (eps / 2.0))

        def span(eps_v, delta_v):  # the victim's reports: 20 scales beyond +-s_v
            return -eps_v / 2.0 - 20.0, eps_v / 2.0 + 20.0
    elif fam.name == "gaussian_shared":  # x / sigma_j + N(0, 1) (common units)
        from shuffledp.families.gaussian import sigmas
        from shuffledp.families.gaussian_shared import unit_gauss_mass

        def mass(lo, hi, x, eps, delta):
            return unit_gauss_mass(lo, hi, x / sigmas(eps, delta))

        def span(eps_v, delta_v):
            c = 1.0 / float(sigmas(np.array([eps_v]), np.array([delta_v]))[0])
            return -c - 8.0, c + 8.0
    else:  # pragma: no cover - guarded by _check
        raise ParameterRegimeError(f"tier_sum_lower has no interval masses for {fam}")
    return mass, span


def _score_numerator(statistic: str, p_v: NDArray, q_v: NDArray) -> NDArray:
    """``p_v``, ``q_v`` or ``p_v - c q_v`` for the statistics "p/w", "q/w", "(p-cq)/w"."""
    if statistic == "p/w":
        return p_v
    if statistic == "q/w":
        return q_v
    if statistic.startswith("(p-") and statistic.endswith("q)/w"):
        c = statistic[3:-4]
        return p_v - (float(c) if c else 1.0) * q_v
    raise ValueError(f"unknown statistic {statistic!r}")


def cell_edges(fam: Family, eps_v: float, delta_v: float, cells: int = CELLS) -> NDArray:
    """Edges of the fine cells (and the two infinite tails) of the victim tier's range."""
    _, span = _mass_fn(fam)
    a, b = span(eps_v, delta_v)
    # half of the cells on [-1, 1] (where the inputs are), a quarter on each side
    inner = np.linspace(max(a, -1.0), min(b, 1.0), cells // 2 + 1)
    left = np.linspace(a, inner[0], cells // 4 + 1)[:-1] if a < inner[0] else np.zeros(0)
    right = np.linspace(inner[-1], b, cells // 4 + 1)[1:] if b > inner[-1] else np.zeros(0)
    return np.concatenate([[-math.inf], left, inner, right, [math.inf]])


def cell_masses(fam: Family, eps: NDArray, delta: NDArray, v: int, x_star: float,
                cells: int = CELLS) -> tuple[NDArray, ...]:
    """Masses of the fine cells (and the two tails) of the victim tier's range: ``(o_all,
    e_all, p_v, q_v, ep_v)``, the others' masses at ``x_star`` per tier and their error bounds,
    the victim's at +1 and -1 and the sum of their error bounds per cell."""
    mass, _ = _mass_fn(fam)
    edges = cell_edges(fam, float(eps[v]), float(delta[v]), cells)
    m = edges.size - 1
    o_all = np.zeros((eps.size, m))
    e_all = np.zeros((eps.size, m))
    p_v, q_v, ep_v = np.zeros(m), np.zeros(m), np.zeros(m)
    ev, dv = eps[v:v + 1], delta[v:v + 1]
    for c in range(m):
        lo, hi = float(edges[c]), float(edges[c + 1])
        o_all[:, c], e_all[:, c] = mass(lo, hi, x_star, eps, delta)
        pv, epv = mass(lo, hi, 1.0, ev, dv)
        qv, eqv = mass(lo, hi, -1.0, ev, dv)
        p_v[c], q_v[c] = float(pv[0]), float(qv[0])
        ep_v[c] = float(epv[0]) + float(eqv[0])
    return o_all, e_all, p_v, q_v, ep_v


def cell_scores(statistic: str, p_v: NDArray, q_v: NDArray, w_bar: NDArray, eps_v: float,
                levels: int = LEVELS) -> NDArray:
    """The score g (an integer in ``0..levels``) of each fine cell: the statistic's numerator
    over the average other report's mass ``w_bar``, clipped and quantized linearly."""
    top = _score_numerator(statistic, p_v, q_v)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        ratio = top / w_bar
    ratio = np.where(top == 0, 0.0, ratio)
    ratio = np.where(np.isnan(ratio), 0.0, ratio)
    finite = ratio[np.isfinite(ratio)]
    cap = math.exp(2.0 * eps_v)
    r_hi = min(float(np.max(np.abs(finite))) if finite.size else 1.0, cap)
    r_hi = max(r_hi, 1e-300)
    r_lo = -r_hi if statistic.startswith("(") else 0.0
    with np.errstate(invalid="ignore", over="ignore"):
        g = np.floor(levels * (np.clip(ratio, r_lo, r_hi) - r_lo) / (r_hi - r_lo))
    return np.clip(np.where(np.isfinite(g), g, levels), 0, levels).astype(np.int64)


def tier_laws(fam: Family, eps: NDArray, delta: NDArray, counts: NDArray, v: int,
              statistic: str, x_star: float, levels: int = LEVELS,
              cells: int = CELLS) -> tuple[NDArray, NDArray, NDArray, NDArray, float]:
    """The laws of the score g (values ``0..levels``) of one report: ``(laws, law_p, law_q,
    errors, err_v)`` with ``laws[t]`` the law under ``R_t(x_star)`` for tier t (the others),
    ``law_p``/``law_q`` under the victim tier's ``R_v(+1)``/``R_v(-1)``, ``errors[t]`` the
    total absolute error bound of ``laws[t]`` and ``err_v`` that of the victim's two laws."""
    key = (fam.spec, eps.tobytes(), delta.tobytes(), v, x_star, cells)
    hit = _MASSES.get(key)
    if hit is None:
        hit = cell_masses(fam, eps, delta, v, x_star, cells)
        if len(_MASSES) > 8:
            _MASSES.clear()
        _MASSES[key] = hit
    o_all, e_all, p_v, q_v, ep_v = hit
    # the score of each cell against the average other report w (every user but the victim
    # at x_star): p_v / w ("p/w"), q_v / w ("q/w") or (p_v - q_v) / w ("(p-q)/w", shifted);
    # with equal budgets and x_star = -1, w = q_v and p/w is Su et al.'s statistic r
    others = counts.astype(np.float64).copy()
    others[v] -= 1.0
    w_bar = (others @ o_all) / float(others.sum()) if others.sum() > 0 else q_v
    g = cell_scores(statistic, p_v, q_v, w_bar, float(eps[v]), levels)
    # the cells' masses summed per value of g exactly (exact_sums): the masses' error bounds
    # plus the sums' own (a cell's mass below one unit, a float conversion per value)
    laws, err_sum = exact_sums(np.clip(o_all, 0.0, 1.0), g, levels + 1)
    victim, err_pq = exact_sums(np.clip(np.stack([p_v, q_v]), 0.0, 1.0), g, levels + 1)
    errs = e_all.sum(axis=1) + err_sum
    return laws, victim[0], victim[1], errs, float(ep_v.sum() + err_pq.sum())


# --------------------------------------------------------------------------- one pipeline
def _coarsen(law: NDArray, f: int) -> NDArray:
    """The law of ``g // f`` from the law of g (last axis)."""
    size = law.shape[-1]
    pad = (-size) % f
    if pad:
        law = np.concatenate([law, np.zeros(law.shape[:-1] + (pad,))], axis=-1)
    return law.reshape(law.shape[:-1] + (-1, f)).sum(axis=-1)


class _Pipeline:
    """A and B of the module docstring for one (statistic, victim tier), with the charges."""

    def __init__(self, laws: NDArray, law_p: NDArray, law_q: NDArray, errs: NDArray,
                 err_v: float, counts: NDArray, v: int) -> None:
        others = counts.astype(np.float64).copy()
        others[v] -= 1.0
        n_others = float(others.sum())
        for _ in range(64):
            levels = laws.shape[1] - 1
            vals = np.arange(levels + 1, dtype=np.float64)
            tot = laws.sum(axis=1)
            means = (laws @ vals) / np.maximum(tot, 1e-300)
            var = (laws @ (vals * vals)) / np.maximum(tot, 1e-300) - means * means
            mean_o = float(others @ means)
            var_o = float(others @ np.maximum(var, 0.0))
            half = _halfwidth(max(var_o, 1e-300), float(levels), WINDOW_TAIL)
            lo = max(math.floor(mean_o - half), 0)
            hi = min(math.ceil(mean_o + half), int(n_others) * levels) + levels
            width = hi - lo + 1
            n_fft = 1 << max(int(math.ceil(math.log2(width))), 4)
            if n_fft <= min(TARGET_FFT, WORK / laws.shape[0]) or levels < 16:
                break
            # a coarser score: g // f (merging f neighbouring values, a post-processing)
            f = max(2, math.ceil(width / (0.9 * min(TARGET_FFT, WORK / laws.shape[0]))))
            laws, law_p, law_q = (_coarsen(x, f) for x in (laws, law_p, law_q))
            # each merged value a float sum of f non-negative terms: relative error at most
            # (f - 1) u (1 + 1e-9), charged in l1
            grow = (f - 1) * _U * (1.0 + 1e-9)
            errs = errs + grow * laws.sum(axis=1) * (1.0 + 1e-9)
            err_v = err_v + grow * float(law_p.sum() + law_q.sum()) * (1.0 + 1e-9)
        if n_fft > MAX_FFT:
            raise ParameterRegimeError(
                f"tier_sum_lower: the statistic's window needs {n_fft} FFT points (at most "
                f"{MAX_FFT}); fewer users or a coarser score")
        # mass of the others' sum outside [lo, hi - levels]: Bernstein both ways (0 beyond
        # the support)
        tail_hi = (0.0 if hi - levels >= int(n_others) * levels
                   else _bernstein(hi - levels - mean_o, var_o, float(levels)))
        tail_lo = 0.0 if lo <= 0 else _bernstein(mean_o - lo, var_o, float(levels))
        # characteristic functions on the circle, shifted so that index j is T = lo + j
        # phi_O = prod_t phi_t^(n_t): moduli in logs (a zero modulus gives 0, never NaN),
        # arguments summed; the shift moves T = lo to index 0
        log_mod = np.zeros(n_fft // 2 + 1)
        arg = np.zeros(n_fft // 2 + 1)
        for t in range(laws.shape[0]):
            if others[t] <= 0:
                continue
            ph = sfft.rfft(laws[t], n_fft)
            with np.errstate(divide="ignore"):
                log_mod += others[t] * np.log(np.abs(ph))
            arg += others[t] * np.angle(ph)
        k = np.arange(n_fft // 2 + 1)
        arg += 2.0 * math.pi * ((k * (lo % n_fft)) % n_fft) / n_fft
        phi_o = np.exp(log_mod) * np.exp(1j * np.remainder(arg, 2.0 * math.pi))
        phi_p = sfft.rfft(law_p, n_fft)
        phi_q = sfft.rfft(law_q, n_fft)
        a = sfft.irfft(phi_o * phi_p, n_fft)
        b = sfft.irfft(phi_o * phi_q, n_fft)
        if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
            raise ParameterRegimeError("tier_sum_lower: the statistic's law is not finite "
                                       "(floating point); no certificate")
        # round-off of each entry (an estimate with a safety factor, as in the blanket module)
        mod_sum = 2.0 * float(np.abs(phi_o).sum()) / n_fft
        self.entry_err = FFT_SAFETY * _U * (n_others + 5.0 * math.log2(n_fft) + 8.0) * mod_sum
        # entries where both are within their error of 0 add at most that error each to a
        # positive part: leaving them out only lowers the sums (and their charge)
        keep = (a > self.entry_err) | (b > self.entry_err)
        self.a, self.b = a[keep], b[keep]
        # total variation of the computed laws from the true ones: the masses' errors of every
        # user and the aliased window tails
        self.tv = float(others @ errs) + err_v + 2.0 * (tail_hi + tail_lo)
        self.n_fft = n_fft

    def delta(self, big_e: float) -> float:
        """A lower bound on ``max(H_E(P_T || Q_T), H_E(Q_T || P_T))``."""
        out = 0.0
        for x, y in ((self.a, self.b), (self.b, self.a)):
            diff = x - big_e * y
            pos = diff > 0.0
            val = float(diff[pos].sum())
            charge = (1.0 + big_e) * (self.tv + self.entry_err * float(pos.sum()))
            out = max(out, val - charge)
        return max(out, 0.0)
