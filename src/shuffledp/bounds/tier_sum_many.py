"""``tier_sum_lower`` with many distinct budgets (more than ``tier_sum.FEW_TIERS``): the same
statistic's exact law, with each user's characteristic function evaluated only at the low
frequencies that matter and the others bounded (docs/theory.md 13.7).

The statistic is the one of :mod:`shuffledp.bounds.tier_sum` (``T = sum_i g(y_i)``, the pair
"others at x1 = -1", one victim: the user of largest eps), with two changes that are choices of
g only, so the value stays a lower bound whatever they are:

* the average other report's cell masses ``w`` that define g come from ``REPRESENTATIVES``
  budgets (one per equal-count bin of the others' budgets, weighted by its count) rather than
  from every budget;
* g is coarsened (merged neighbouring values) so that T's window fits ``TARGET_FFT`` points,
  whatever the number of budgets.

Each user t (budget eps_t, one of ``n_t`` users) has an exact law ``a_t`` of g on ``0..L``:
the family's certified interval masses of the runs of fine cells on which g is constant,
normalised (the normalised law is within ``2 e_t`` in total variation of the true one, ``e_t``
the masses' error bound).  The others' sum O has the characteristic function
``phi_O(theta) = prod_t phi_t(theta)^{n_t}``; on the FFT's circle, ``theta_k = 2 pi k / N``:

* for ``k <= K`` it is computed as ``exp(sum_t n_t log phi_t(theta_k))`` with
  ``log phi_t = -i theta c + log(1 + psi_t)``, ``psi_t = sum_l a_t[l] (e^{-i theta (l - c)} - 1)``
  (``c = L // 2``; no cancellation), with a worst-case bound on the rounding of every term;
* for ``k > K`` it is replaced by 0, and every entry of the inverse transform is charged
  ``(2 / N) sum_{k > K} B_k``, with ``B_k`` a certified bound on ``|phi_O(theta_k)|``: the
  smaller of (Q) ``exp(-(theta^2 S_2 - theta^4 C_4) / 2)``, from
  ``|phi_t|^2 = E cos(theta (X - X')) <= 1 - theta^2 sigma_t^2 + theta^4 (m4_t + 3 sigma_t^4) / 12``
  (``cos x <= 1 - x^2/2 + x^4/24``) and ``log(1 - u) <= -u``, with
  ``S_2 = sum n_t sigma_t^2``, ``C_4 = sum n_t (m4_t + 3 sigma_t^4) / 12``; and (P)
  ``exp(-2 (1 - |cos(theta d / 2)|) sum_t n_t M_{t,d})`` for pair distances d (``pair_distances``),
  ``M_{t,d} = sum over the disjoint pairs (l, l + d), l mod 2d < d, of min(a_t[l], a_t[l+d])``,
  from ``|a + b e^{i theta d}| <= a + b - 2 min(a, b) (1 - |cos(theta d / 2)|)``.

A frequency where some user's ``|1 + psi_t|`` is within its rounding bound of 0 is dropped
too, charged ``prod_t (|1 + psi_t| + rounding)^{n_t}``.  K is chosen from the representatives
so that (Q) is below ``e^-LOG_CUT`` beyond it; the charge
is computed from the exact aggregates, whatever K turned out to be.  The window of T is chosen
from the representatives too (with a margin) and the mass outside it is charged from the exact
mean and variance (Bernstein), as in the direct pipeline.  Cost: O(users x (runs + K L)), memory
O(``CHUNK`` x runs); no per-user FFT.

Code names -> symbols: ``a_t`` (``law``) user t's law of g, ``L`` (``levels``) g's largest value,
``N`` (``n_fft``), ``K`` (``k_max``), ``c`` (``centre``), ``B_k`` (``bound``).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from shuffledp._lazy import lazy_module
from shuffledp.bounds.blanket.amplification import FFT_SAFETY, _bernstein, _halfwidth
from shuffledp.bounds.tier_sum_laws import (
    LEVELS,
    MAX_FFT,
    SUM_UNIT,
    WINDOW_TAIL,
    _coarsen,
    _mass_fn,
    _Pipeline,
    cell_edges,
    cell_masses,
    cell_scores,
    exact_sums,
    integer_sums,
)
from shuffledp.errors import ParameterRegimeError
from shuffledp.families import Family

sfft = lazy_module("scipy.fft")

__all__ = ["ManyPipeline", "TooManyFrequencies", "representatives", "cf_modulus_bound",
           "pair_distances"]

_U = float(np.finfo(float).eps) / 2.0
#: Budgets whose cell masses define the score.
REPRESENTATIVES = 2048
#: FFT size aimed at (T's window in coarse units).
TARGET_FFT = 1 << 17
#: Users per chunk of the pass.
CHUNK = 1 << 14
#: K is first chosen where the representatives' bound on ``|phi_O|`` falls below ``e^-LOG_CUT``.
LOG_CUT = 60.0
#: Pair distances of bound (P): 1..8, then about 1.25-fold steps up to the score's range.
PAIR_GROWTH = 1.25
#: Most work (users x score values x frequencies) of a pass.
MORE_WORK = float(1 << 31)
#: Largest total bound on the dropped frequencies' terms (``2 sum_{k > K} B_k``).
DROP_TOTAL = 1e-18
#: Relative margin added to the window chosen from the representatives.
WINDOW_MARGIN = 0.1


class TooManyFrequencies(ParameterRegimeError):
    """The users' laws are too lumpy for few frequencies (the caller may take the direct
    pipeline)."""


def representatives(eps: NDArray, weights: NDArray, count: int) -> tuple[NDArray, NDArray]:
    """Indices of at most ``count`` budgets and their weights: the budgets sorted by eps are
    cut into ``count`` bins of equal total weight, each represented by the budget at its
    weighted middle with the bin's total weight."""
    order = np.argsort(eps, kind="stable")
    w = weights[order].astype(np.float64)
    cum = np.cumsum(w)
    total = float(cum[-1]) if cum.size else 0.0
    if total <= 0.0:
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    bins = np.minimum((count * (cum - 0.5 * w) / total).astype(np.int64), count - 1)
    targets = (np.arange(count) + 0.5) * total / count
    pick = np.minimum(np.searchsorted(cum, targets), cum.size - 1)
    wts = np.bincount(bins, weights=w, minlength=count)
    idx, inv = np.unique(order[pick], return_inverse=True)
    out_w = np.zeros(idx.size)
    np.add.at(out_w, inv, wts)
    keep = out_w > 0
    idx, out_w = idx[keep], out_w[keep]
    by_eps = np.argsort(eps[idx], kind="stable")
    return idx[by_eps], out_w[by_eps]


def pair_distances(levels: int) -> NDArray:
    """The pair distances d of bound (P) for a score on ``0..levels``."""
    d = {1, 2, 3, 4, 5, 6, 7, 8}
    x = 8.0
    while x * PAIR_GROWTH <= levels:
        x *= PAIR_GROWTH
        d.add(int(round(x)))
    return np.asarray(sorted(k for k in d if k <= max(levels, 1)), dtype=np.int64)


def cf_modulus_bound(theta: NDArray, s2: float, c4: float, distances: NDArray,
                     pair_sums: NDArray) -> NDArray:
    """The log of a bound on ``|prod_t phi_t(theta)^{n_t}|`` from the aggregates of the module
    docstring: the smaller of (Q) and (P) at each theta (radians)."""
    quartic = -0.5 * (theta * theta * s2 - theta ** 4 * c4)
    out = np.minimum(quartic, 0.0)
    for d, m_d in zip(distances, pair_sums, strict=True):
        out = np.minimum(out, -2.0 * (1.0 - np.abs(np.cos(theta * d / 2.0))) * m_d)
    return out


def _pair_sums(law: NDArray, distances: NDArray) -> NDArray:
    """``M_{t,d}`` for each pair distance d, per row of ``law``."""
    size = law.shape[1]
    out = np.zeros((law.shape[0], distances.size))
    for j, d in enumerate(distances):
        first = np.arange(size - d)
        first = first[(first % (2 * d)) < d]
        if first.size:
            out[:, j] = np.minimum(law[:, first], law[:, first + d]).sum(axis=1)
    return out


def _aggregates(law: NDArray, n_t: NDArray, lvals: NDArray,
                distances: NDArray) -> tuple[float, float, float, float, NDArray]:
    """``(sum n_t mu_t, sum n_t sigma_t^2, S_2, C_4, sum n_t M_{t,d})`` of normalised laws
    (``mu_t`` in the centred values ``lvals``)."""
    mu = law @ lvals
    dev = lvals[None, :] - mu[:, None]
    var = np.einsum("ij,ij->i", law, dev * dev)
    m4 = np.einsum("ij,ij->i", law, dev ** 4)
    return (float(n_t @ mu), float(n_t @ var), float(n_t @ var),
            float(n_t @ ((m4 + 3.0 * var * var) / 12.0)), n_t @ _pair_sums(law, distances))


class _Pass:
    """The users' laws of the coarse score, chunk by chunk: ``sum_t n_t log phi_t`` at given
    frequencies with a worst-case bound on its rounding, and the aggregates."""

    def __init__(self, mass, x_star: float, eps: NDArray, delta: NDArray, others: NDArray,
                 runs: tuple[NDArray, NDArray, NDArray], levels: int, n_fft: int,
                 distances: NDArray) -> None:
        self.mass, self.x_star, self.eps, self.delta = mass, x_star, eps, delta
        self.others, self.runs, self.levels, self.n_fft = others, runs, levels, n_fft
        self.distances = distances
        self.live = np.flatnonzero(others > 0)
        self.centre = levels // 2
        self.lvals = np.arange(levels + 1, dtype=np.float64) - self.centre
        self.tv = 0.0
        self.aggregates: tuple = ()

    def _laws(self, t: NDArray) -> tuple[NDArray, float]:
        """Normalised laws of the users ``t`` and their total variation charge."""
        run_lo, run_hi, _ = self.runs
        m = np.empty((t.size, run_lo.size))
        e = np.empty((t.size, run_lo.size))
        for r in range(run_lo.size):
            m[:, r], e[:, r] = self.mass(float(run_lo[r]), float(run_hi[r]), self.x_star,
                                         self.eps[t], self.delta[t])
        # the runs' masses summed per score value in units of 2^-60 (integer_sums: floored,
        # summed in integers), their total (exact), then normalised
        units = integer_sums(np.clip(m, 0.0, 1.0), self.runs[2], self.levels + 1)
        total = units.sum(axis=1)
        if np.any(total * SUM_UNIT <= 0.5):
            raise ParameterRegimeError("tier_sum_lower: a user's score law has mass below 1/2 "
                                       "(floating point); no certificate")
        law = units.astype(np.float64) / total.astype(np.float64)[:, None]
        # The floored masses x are within e_t + runs units of the true ones in l1 (the true
        # masses sum to 1: the runs tile the line), so x / sum(x) is within twice that; the
        # float law is x / sum(x) up to three roundings per entry (the sum's conversion, the
        # total's, the division): a relative 3.0001 u (docs/theory.md 13.7, "rounding").
        tv = float(self.others[t] @ (2.0 * (e.sum(axis=1) + run_lo.size * SUM_UNIT)
                                     + 3.0001 * _U))
        return law, tv

    def run(self, ks: NDArray, *, with_aggregates: bool) -> tuple[NDArray, ...]:
        """``(sum_t n_t log phi_t(theta_k) + i theta_k c n_others, its error bound, zero,
        log_ub)`` for the frequencies ``ks`` (``log phi_t = -i theta c + log(1 + psi_t)``; the
        centre's phase is left to the caller).  Where some user's ``|1 + psi_t|`` is within
        its rounding bound of 0 (``zero``), ``log_ub`` bounds ``log |phi_O|`` instead (the
        caller drops that frequency and charges it)."""
        theta = 2.0 * math.pi * ks / self.n_fft
        x = np.outer(self.lvals, theta)
        em1 = -2.0 * np.sin(x / 2.0) ** 2 - 1j * np.sin(x)  # e^{-ix} - 1, no cancellation
        reach = max(self.centre, self.levels - self.centre)
        err_psi = (self.levels + 8.0) * _U * np.minimum(2.0, theta * reach)
        log_mod = np.zeros(ks.size)
        arg = np.zeros(ks.size)
        err_log = np.zeros(ks.size)
        abs_log = np.zeros(ks.size)
        log_ub = np.zeros(ks.size)
        zero = np.zeros(ks.size, dtype=bool)
        agg = [0.0, 0.0, 0.0, 0.0, np.zeros(self.distances.size)]
        chunks = 0
        for i in range(0, self.live.size, CHUNK):
            t = self.live[i:i + CHUNK]
            n_t = self.others[t]
            law, tv = self._laws(t)
            if with_aggregates:
                self.tv += tv
                for j, val in enumerate(_aggregates(law, n_t, self.lvals, self.distances)):
                    agg[j] = agg[j] + val
            psi = law @ em1
            mod1 = np.abs(1.0 + psi)
            bad = mod1 <= err_psi[None, :]
            zero |= bad.any(axis=0)
            with np.errstate(divide="ignore"):
                # |phi_t| <= |1 + psi_t| + its rounding bound, at every frequency
                log_ub += n_t @ np.log(np.minimum(mod1 + err_psi[None, :], 1.0))
                lg_re = np.where(bad, 0.0, 0.5 * np.log1p(2.0 * psi.real + np.abs(psi) ** 2))
            lg_im = np.arctan2(psi.imag, 1.0 + psi.real)
            gap = np.where(bad, 1.0, mod1 - err_psi[None, :])
            err_log += n_t @ np.where(bad, 0.0, err_psi[None, :] / gap)
            log_mod += n_t @ lg_re
            arg += n_t @ lg_im
            abs_log += n_t @ (np.abs(lg_re) + np.abs(lg_im))
            chunks += 1
        if with_aggregates:
            agg[0] += self.centre * float(self.others.sum())  # means in the score's values
            self.aggregates = tuple(agg)
        # the sums' own rounding (pairwise within a chunk, then chunk by chunk)
        err_log += 2.0 * _U * (math.log2(max(self.live.size, 2)) + chunks + 4.0) * abs_log
        return log_mod + 1j * arg, err_log, zero, log_ub


class ManyPipeline(_Pipeline):
    """A and B of :mod:`shuffledp.bounds.tier_sum` for many distinct budgets (module
    docstring); ``delta`` is the direct pipeline's."""

    def __init__(self, fam: Family, eps: NDArray, delta: NDArray, counts: NDArray, v: int,
                 statistic: str, x_star: float) -> None:
        mass, _ = _mass_fn(fam)
        others = counts.astype(np.float64).copy()
        others[v] -= 1.0
        n_others = float(others.sum())
        if n_others <= 0:
            raise ParameterRegimeError("tier_sum_lower: no other user")
        # ---- the score, from representatives (any score gives a valid statistic)
        rest = others.copy()
        rest[v] = 0.0
        idx, wts = representatives(eps, rest, REPRESENTATIVES)
        r_eps = np.concatenate([[eps[v]], eps[idx]])
        r_delta = np.concatenate([[delta[v]], delta[idx]])
        r_w = np.concatenate([[others[v]], wts])
        o_all, _, p_v, q_v, ep_v = cell_masses(fam, r_eps, r_delta, 0, x_star)
        w_bar = (r_w @ o_all) / float(r_w.sum())
        g = cell_scores(statistic, p_v, q_v, w_bar, float(eps[v]), LEVELS)
        r_laws = np.stack([np.bincount(g, weights=np.clip(o, 0.0, 1.0), minlength=LEVELS + 1)
                           for o in o_all])
        # ---- coarsening and window from the representatives' moments
        f = 1
        for _ in range(64):
            laws_f = _coarsen(r_laws, f) if f > 1 else r_laws
            levels = laws_f.shape[1] - 1
            vals = np.arange(levels + 1, dtype=np.float64)
            tot = laws_f.sum(axis=1)
            means = (laws_f @ vals) / tot
            var = np.maximum((laws_f @ (vals * vals)) / tot - means * means, 0.0)
            mean_est, var_est = float(r_w @ means), float(r_w @ var)
            half = (1.0 + WINDOW_MARGIN) * _halfwidth(max(var_est, 1e-300), float(levels),
                                                      WINDOW_TAIL) + 2.0 * levels
            width = 2.0 * half + levels + 1
            if width <= TARGET_FFT or levels < 16:
                break
            f *= max(2, math.ceil(width / (0.9 * TARGET_FFT)))
        gc = g // f
        lo = max(math.floor(mean_est - half), 0)
        hi = min(math.ceil(mean_est + half), int(n_others) * levels) + levels
        n_fft = 1 << max(int(math.ceil(math.log2(hi - lo + 1))), 4)
        if n_fft > MAX_FFT:
            raise ParameterRegimeError(
                f"tier_sum_lower: the statistic's window needs {n_fft} FFT points (at most "
                f"{MAX_FFT})")
        # ---- the runs of fine cells with one coarse score, their edges
        edges = cell_edges(fam, float(eps[v]), float(delta[v]))
        starts = np.concatenate([[0], np.flatnonzero(np.diff(gc)) + 1])
        runs = (edges[starts], edges[np.concatenate([starts[1:], [gc.size]])], gc[starts])
        victim, err_pq = exact_sums(np.clip(np.stack([p_v, q_v]), 0.0, 1.0), gc, levels + 1)
        law_p, law_q = victim
        err_v = float(ep_v.sum() + err_pq.sum())
        # ---- K from the representatives' aggregates: the last frequency whose bound is above
        # e^-LOG_CUT (the exact aggregates decide the charge, and a second pass if needed)
        centre = levels // 2
        lvals = np.arange(levels + 1, dtype=np.float64) - centre
        distances = pair_distances(levels)
        r_norm = laws_f / laws_f.sum(axis=1, keepdims=True)
        rep = _aggregates(r_norm, r_w, lvals, distances)
        k_all = np.arange(n_fft // 2 + 1)
        theta_all = 2.0 * math.pi * k_all / n_fft
        above = np.flatnonzero(cf_modulus_bound(theta_all, rep[2], rep[3], distances, rep[4])
                               > -LOG_CUT)
        k_max = min(n_fft // 2, int(above[-1]) + 8 if above.size else 8)
        users = int(np.count_nonzero(others > 0))
        if k_max * users * (levels + 1) > MORE_WORK:
            raise TooManyFrequencies(
                f"tier_sum_lower: the score's laws need about {k_max} of {n_fft // 2} "
                f"frequencies (the users' laws are too lumpy or too few for fewer)")
        # ---- the pass over the users
        acc = _Pass(mass, x_star, eps, delta, others, runs, levels, n_fft, distances)
        log_o, err_log, zero, log_ub = acc.run(np.arange(k_max + 1), with_aggregates=True)
        mean_o, var_o, s2, c4, pair_sums = acc.aggregates
        tv = acc.tv
        safe = cf_modulus_bound(theta_all, s2 * (1.0 - 1e-9), c4 * (1.0 + 1e-9), distances,
                                pair_sums * (1.0 - 1e-9))
        # dropped frequencies cost 2 sum_{k > K} B_k / N per entry; at most DROP_TOTAL in all
        tail = np.cumsum(np.exp(safe)[::-1])[::-1]  # tail[k] = sum_{j >= k} B_j
        need = np.flatnonzero(2.0 * tail > DROP_TOTAL)
        k_need = min(n_fft // 2, int(need[-1])) if need.size else 0
        if k_need > k_max:
            if (k_need - k_max) * acc.live.size * (levels + 1) > MORE_WORK:
                raise TooManyFrequencies(
                    f"tier_sum_lower: the score's laws need {k_need} of {n_fft // 2} "
                    f"frequencies (the users' laws are too lumpy or too few for fewer)")
            more = np.arange(k_max + 1, k_need + 1)
            lg2, el2, z2, ub2 = acc.run(more, with_aggregates=False)
            log_o, err_log = np.concatenate([log_o, lg2]), np.concatenate([err_log, el2])
            zero, log_ub = np.concatenate([zero, z2]), np.concatenate([log_ub, ub2])
            k_max = k_need
        ks = np.arange(k_max + 1)
        # ---- phi_O on the circle, shifted so that index j is T = lo + j; the centre's phase
        # e^{-i theta_k c n_others} and the shift's e^{+i theta_k lo} in exact integers
        shift = (int(round(n_others)) * centre - lo) % n_fft
        phase = -2.0 * math.pi * ((ks * shift) % n_fft) / n_fft
        phi_o = np.zeros(n_fft // 2 + 1, dtype=complex)
        phi_o[:k_max + 1] = np.where(zero, 0.0, np.exp(log_o.real) * np.exp(
            1j * np.remainder(log_o.imag + phase, 2.0 * math.pi)))
        err_log = np.where(zero, 0.0, err_log)
        if not np.all(np.isfinite(phi_o)) or not np.all(np.isfinite(err_log)):
            raise ParameterRegimeError("tier_sum_lower: the statistic's law is not finite "
                                       "(floating point); no certificate")
        phi_p = sfft.rfft(law_p, n_fft)
        phi_q = sfft.rfft(law_q, n_fft)
        a = sfft.irfft(phi_o * phi_p, n_fft)
        b = sfft.irfft(phi_o * phi_q, n_fft)
        # ---- charges per entry: the product's rounding (worst case, per frequency), the
        # inverse transform's (the direct pipeline's estimate) and the dropped frequencies
        abs_phi = np.abs(phi_o[:k_max + 1])
        err_prod = 2.0 * float((abs_phi * np.expm1(err_log)).sum()) / n_fft
        mod_sum = 2.0 * float(abs_phi.sum()) / n_fft
        err_fft = FFT_SAFETY * _U * (5.0 * math.log2(n_fft) + 8.0) * mod_sum
        # the frequencies beyond K, and those where a factor vanished numerically (dropped,
        # |phi_O| at most exp(log_ub) there)
        self.dropped = 2.0 * (float(np.exp(safe[k_max + 1:]).sum())
                              + float(np.exp(log_ub[zero]).sum())) / n_fft
        self.entry_err = err_prod + err_fft + self.dropped
        keep = (a > self.entry_err) | (b > self.entry_err)
        self.a, self.b = a[keep], b[keep]
        # ---- the window's tails from the exact mean and variance (Bernstein)
        tail_hi = (0.0 if hi - levels >= int(n_others) * levels
                   else _bernstein(hi - levels - mean_o, var_o, float(levels)))
        tail_lo = 0.0 if lo <= 0 else _bernstein(mean_o - lo, var_o, float(levels))
        self.tv = tv + err_v + 2.0 * (tail_hi + tail_lo)
        self.n_fft = n_fft
        self.k_max = k_max
        self.levels = levels
        self.score = gc  # the coarse score of each fine cell (for tests and diagnostics)
        self.lo = lo  # index j of A and B is T = lo + j
