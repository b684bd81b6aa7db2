"""The contract every registered randomizer family keeps (parametrised over
``shuffledp.families.family_names()``: a family added by a new module is picked up here).

What is checked, for one or two members of each family (families with categories at k = 3
and 10): the spec round trip; clone masses in [0, 1] and broadcast; with identical budgets at
least FMT21's e^{-eps} (every eps-LDP randomizer dominates that share of itself, Feldman,
McMillan, Talwar FOCS 2021, Lemma 3.3) for pure families and 0 for the others; the declared
``victim_order`` against the masses on a grid; ``group_clone_mass`` a lower bound over its
victim range; the variation-ratio row exactly for pure families; optional methods that a
family does not provide raise an error naming it; window masses (where provided) that are
masses (in [0, 1], summing to 1 within their stated error); mechanisms that declare the
family map to it.  The mass formulas themselves are checked against the mechanisms' own
densities in tests/families/test_families.py.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from shuffledp.errors import ParameterRegimeError
from shuffledp.families import Family, family_class, family_names, get_family

GRID = np.array([0.0, 0.05, 0.3, 0.7, 1.0, 1.6, 2.5, 4.0, 7.0, 12.0])


def _members(name: str) -> list[Family]:
    cls = family_class(name)
    if cls.needs_k:
        return [get_family(f"{name}:{k}") for k in (max(3, cls.k_min), 10)]
    return [get_family(name)]


MEMBERS = [f for name in family_names() for f in _members(name)]


def test_every_registered_family_is_tested():
    assert {f.name for f in MEMBERS} == set(family_names())
    assert len(family_names()) >= 10


@pytest.mark.parametrize("fam", MEMBERS, ids=str)
def test_spec_round_trip_and_description(fam):
    assert isinstance(fam, Family) and fam.name and fam.family == fam.name
    assert get_family(fam.spec) == fam and get_family(fam.spec.upper()) == fam
    assert get_family(fam) is fam and str(fam) == fam.spec
    assert fam.description.startswith(fam.title) and fam.title
    assert fam.victim_order in ("constant", "decreasing", "zero_below", "equal_only",
                                "general", "zero")
    assert hash(fam) == hash(get_family(fam.spec))


@pytest.mark.parametrize("fam", MEMBERS, ids=str)
def test_clone_masses_are_masses_and_hold_against_the_same_budget(fam):
    m = fam.clone_mass(GRID[:, None], GRID[None, :])
    assert m.shape == (GRID.size, GRID.size) and m.dtype == np.float64
    assert np.all(np.isfinite(m)) and np.all((m >= 0) & (m <= 1 + 1e-12))
    same = np.diag(m)
    if fam.pure:
        # FMT21 Lemma 3.3: R(x)(y) >= e^{-eps} max_x' R(x')(y) >= e^{-eps} (P0 + P1)(y) / 2
        assert np.all(same >= np.exp(-GRID) * (1 - 1e-12)), (fam, same)
    else:
        assert np.all(m == 0.0)
    assert float(fam.clone_mass(1.0, 1.0)) == float(m[4, 4])


@pytest.mark.parametrize("fam", [f for f in MEMBERS if f.pure], ids=str)
def test_victim_order_is_what_the_masses_do(fam):
    m = fam.clone_mass(GRID[:, None], GRID[None, :])  # [victim, user]
    dv = np.diff(m, axis=0)
    how = fam.victim_order
    if how == "constant":
        assert np.allclose(dv, 0.0, atol=1e-15)
    elif how == "decreasing":
        assert np.all(dv <= 1e-15)
    elif how == "zero_below":
        below = GRID[:, None] < GRID[None, :]
        assert np.all(m[below] == 0.0)
        ok = ~below[1:] & ~below[:-1]
        assert np.all(dv[ok] <= 1e-15)
    elif how == "equal_only":
        assert np.all(m[~np.eye(GRID.size, dtype=bool)] == 0.0)
    else:  # general: not monotone; the box bound below must still hold
        assert how == "general"


@pytest.mark.parametrize("fam", [f for f in MEMBERS if f.pure], ids=str)
@pytest.mark.parametrize(("lo", "hi"), [(0.3, 0.3), (0.3, 2.5), (1.0, 7.0), (0.0, 12.0)])
def test_group_clone_mass_is_a_lower_bound_over_its_victims(fam, lo, hi):
    users = GRID
    got = fam.group_clone_mass(lo, hi, users)
    victims = np.concatenate([np.linspace(lo, hi, 41), GRID[(GRID >= lo) & (GRID <= hi)]])
    worst = fam.clone_mass(victims[:, None], users[None, :]).min(axis=0)
    assert got.shape == users.shape
    assert np.all(got <= worst * (1 + 1e-12) + 1e-300), (fam, lo, hi, got, worst)
    if lo == hi:  # a single victim budget: the mass itself (up to rounding)
        assert np.allclose(got, fam.clone_mass(lo, users), rtol=1e-12, atol=0.0)
    with pytest.raises(ValueError, match="eps_lo"):
        fam.group_clone_mass(hi + 1.0, hi, users)


@pytest.mark.parametrize("fam", MEMBERS, ids=str)
def test_variation_ratio_row(fam):
    for eps0 in (0.0, 0.5, 1.0, 4.0):
        row = fam.variation_ratio(eps0)
        if not fam.pure:
            assert row is None
            continue
        # p = q = e^eps0 in every row; alpha (1 + p) + gamma = 1 is checked by VariationRatio
        assert row.log_p == eps0 and row.log_q == eps0 and 0.0 <= row.beta <= 1.0
        assert row.beta <= math.tanh(eps0 / 2.0) * (1 + 1e-12)  # at most an eps0-DP pair's TV
        assert row.source
    with pytest.raises(ValueError, match="eps0 must be finite"):
        fam.variation_ratio(-1.0)


@pytest.mark.parametrize("fam", MEMBERS, ids=str)
def test_optional_methods_name_the_family_when_missing(fam):
    if not fam.provides("cell_masses"):
        with pytest.raises(ParameterRegimeError, match=fam.spec.split(":")[0]):
            fam.window_configs(1.0, 0.0)
        with pytest.raises(ValueError, match=fam.spec.split(":")[0]):
            fam.cell_masses(0.0, np.ones(1), np.zeros(1), None)
    if not fam.provides("tail_cut"):
        assert not fam.cuts_tails
        with pytest.raises(ValueError, match=fam.spec.split(":")[0]):
            fam.tail_cut(1e-3, None)
    if not fam.provides("noise_scales"):
        assert not fam.noise_scaled
        with pytest.raises(ValueError, match=fam.spec.split(":")[0]):
            fam.noise_scales(np.ones(1), np.zeros(1))
    with pytest.raises(ValueError, match="method must be a method of Family"):
        fam.provides("nope")


@pytest.mark.parametrize("fam", [f for f in MEMBERS if f.provides("cell_masses")], ids=str)
def test_window_masses_are_masses(fam):
    eps = np.array([0.2, 1.0, 3.0, 8.0])
    delta = np.full(eps.size, 1e-6 if fam.needs_delta else 0.0)
    configs = fam.window_configs(1.0, float(delta[0]))
    assert configs
    for cfg in configs:
        for x in {cfg.x0, cfg.x1, cfg.x_star}:
            a, o, b, ea, eo, eb = fam.cell_masses(x, eps, delta, cfg.window)
            for v, e in ((a, ea), (o, eo), (b, eb)):
                assert np.all((v >= 0) & (v <= 1)) and np.all(e >= 0)
            total = a + o + b
            err = ea + eo + eb + 1e-15
            assert np.all(np.abs(total - 1.0) <= err + 4e-16 * 3), (fam, cfg, x, total)


@pytest.mark.parametrize("fam", MEMBERS, ids=str)
def test_family_flags_are_consistent(fam):
    if fam.cuts_tails or fam.noise_scaled or fam.binnable:
        assert fam.aware
    if fam.needs_delta or fam.mixture_form:
        assert not fam.pure
    if fam.needs_delta:
        assert fam.display_name and fam.needs_delta_reason
    assert fam.includes(fam) and fam.profile_at_most(fam) and type(fam).describes(fam)


def test_mechanisms_declare_their_family():
    from shuffledp import mechanisms

    seen = set()
    for name in ("LaplaceMechanism", "DuchiMechanism", "PiecewiseMechanism",
                 "GaussianMechanism"):
        cls = getattr(mechanisms, name)
        assert get_family(cls).name == cls.family
        seen.add(cls.family)
    grr = mechanisms.GRRMechanism(eps=[1.0, 1.0], d=7)
    oue = mechanisms.OUEMechanism(eps=[1.0, 1.0], d=7)
    assert get_family(grr).spec == "krr:7" and get_family(oue).spec == "oue:7"
    assert grr.randomizer() == get_family("krr:7")
    seen |= {"krr", "oue"}
    assert seen <= set(family_names())
