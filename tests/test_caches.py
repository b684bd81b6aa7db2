"""The cache layer (shuffledp.caching): every module-level cache is registered, calling the
bounds fills each registered cache, and clear_caches() empties all of them."""

from __future__ import annotations

import importlib
import pkgutil
import weakref
from collections import OrderedDict

import numpy as np
import pytest

import shuffledp
from shuffledp import BudgetProfile, get_bound
from shuffledp.caching import (
    cache_sizes,
    clear_caches,
    register_cache,
    register_mapping,
    registered_caches,
    unregister_cache,
)

#: The module-level caches of the package when the cache layer was introduced.
KNOWN = {
    "clones.counts": ("shuffledp.bounds.clones.count", "_COUNT_CACHE"),
    "budgets.digests": ("shuffledp.budgets", "_DIGESTS"),
    "rr_exact.pairs": ("shuffledp.bounds.rr_exact", "_CACHE"),
    "krr_exact.laws": ("shuffledp.bounds.krr_exact", "_CACHE"),
    "families.tiers": ("shuffledp.families.domination", "_TIERS"),
    "aware.plans": ("shuffledp.bounds.clones.aware", "_PLANS"),
    "aware.counts": ("shuffledp.bounds.clones.aware", "_COUNTS"),
    "window_lower.pairs": ("shuffledp.bounds.window", "_CACHE"),
    "gaussian.sigma": ("shuffledp.families.gaussian", "_SIGMA"),
    "blanket.values": ("shuffledp.bounds.blanket.bound", "_VALUES"),
    "tightest.winners": ("shuffledp.bounds.tightest", "_LAST"),
    "rr_upper.pairs": ("shuffledp.bounds.rr_upper", "_CACHE"),
    "rr_upper.argmin": ("shuffledp.bounds.rr_upper", "_ARGMIN"),
    "tier_sum.masses": ("shuffledp.bounds.tier_sum", "_MASSES"),
    "tier_sum.pipelines": ("shuffledp.bounds.tier_sum", "_CACHE"),
    "blanket.eps": ("shuffledp.bounds.blanket.bound", "_EPS"),
    "blanket.pools": ("shuffledp.bounds.blanket.pool", "_POOLS"),
    "gaussian_blanket.geometry": ("shuffledp.families.gaussian_blanket", "_GEOMETRY"),
    "gaussian_blanket.masses": ("shuffledp.families.gaussian_blanket", "_MASSES"),
    "oue_blanket.masses": ("shuffledp.families.oue_blanket", "_MASSES"),
}


def _modules():
    """Every importable module of the package (optional dependencies may be missing)."""
    out = [shuffledp]
    for info in pkgutil.walk_packages(shuffledp.__path__, "shuffledp."):
        try:
            out.append(importlib.import_module(info.name))
        except ImportError:
            continue
    return out


def _looks_like_cache(name, obj):
    if hasattr(obj, "cache_clear") and hasattr(obj, "cache_info"):  # functools caches
        return True
    if isinstance(obj, (OrderedDict, weakref.WeakKeyDictionary, weakref.WeakValueDictionary)):
        return True
    return isinstance(obj, dict) and any(w in name.upper() for w in ("CACHE", "MEMO"))


def test_every_module_level_cache_is_registered():
    modules = _modules()
    targets = {id(e.target) for e in registered_caches().values()}
    missing = []
    for mod in modules:
        if mod.__name__ == "shuffledp.caching":  # the registry itself
            continue
        for name, obj in vars(mod).items():
            if getattr(obj, "__module__", mod.__name__) != mod.__name__ and callable(obj):
                continue  # an imported function
            if _looks_like_cache(name, obj) and id(obj) not in targets:
                missing.append(f"{mod.__name__}.{name}")
    assert not missing, f"unregistered module-level caches: {missing}"
    registered = registered_caches()
    for name, (module, attr) in KNOWN.items():
        try:
            mod = importlib.import_module(module)
        except ImportError:
            continue
        if not hasattr(mod, attr):
            continue
        assert name in registered, name
        assert registered[name].target is getattr(mod, attr), name


def test_calling_the_bounds_fills_every_cache_and_clear_empties_them():
    clear_caches()
    assert all(size == 0 for size in cache_sizes().values())
    rng = np.random.default_rng(3)
    pers = BudgetProfile.uniform(n=400, low=0.5, high=2.0, rng=rng)
    ident = BudgetProfile.identical(n=6, eps0=1.0)
    keep = [pers, ident]  # the weak-keyed caches hold entries only while the profiles live
    clones = get_bound("clones")
    clones.eps(profile=pers, delta=1e-6)
    if "mechanism" in clones.info.options:  # the mechanism-aware masses
        clones.eps(profile=pers, delta=1e-6, mechanism="laplace")
    assert clones.covers(randomizer="laplace", profile=pers) is not None  # budget tiers
    get_bound("rr_exact").eps(profile=pers, delta=1e-6)
    get_bound("krr_exact").eps(profile=ident, delta=1e-3)
    gauss = BudgetProfile.from_arrays(pers.eps, delta=1e-8)
    keep.append(gauss)
    get_bound("window_lower").eps(profile=gauss, delta=1e-6, mechanism="gaussian")
    get_bound("tightest").evaluate(profile=pers, delta=1e-6, mechanism="krr:3")  # + blanket
    get_bound("blanket").delta(profile=pers, eps=0.1, mechanism="krr:3")  # its values
    # the eps-free parts of the Gaussian and OUE cases, and the merged pools of their masses
    get_bound("blanket").delta(profile=gauss, eps=0.1, mechanism="gaussian")
    get_bound("blanket").delta(profile=pers, eps=0.1, mechanism="oue:8")
    # the two-region blanket's strata and binomial laws (a few low budgets among high ones)
    get_bound("blanket").delta(profile=BudgetProfile.from_histogram([0.5, 1.5], [20, 300]),
                               eps=0.1, mechanism="laplace")
    # rr_upper's pairs, and (the error charge is most of a delta this small) its minimiser
    get_bound("rr_upper").delta(profile=BudgetProfile.identical(n=400, eps0=1.0), eps=0.9)
    # tier_sum_lower's cell masses and FFT pipelines
    get_bound("tier_sum_lower").delta(profile=BudgetProfile.from_histogram([0.5, 2.0], [50, 5]),
                                      eps=0.1, mechanism="laplace")
    sizes = cache_sizes()
    assert set(KNOWN) - {"aware.plans", "aware.counts"} <= set(sizes)
    empty = [name for name, size in sizes.items() if size == 0]
    assert not empty, f"caches not filled by calling the bounds: {empty}"
    assert all(size is not None for size in sizes.values())

    shuffledp.clear_caches()
    after = cache_sizes()
    assert after.keys() == sizes.keys()
    assert all(size == 0 for size in after.values()), after
    del keep


def test_clear_caches_is_one_function_everywhere():
    import shuffledp.bounds
    import shuffledp.caching

    assert shuffledp.clear_caches is shuffledp.bounds.clear_caches
    assert shuffledp.clear_caches is shuffledp.caching.clear_caches
    assert "clear_caches" in shuffledp.__all__


def test_cold_evaluation_recomputes():
    # after clear_caches the clone count of a profile is built again (one new entry)
    prof = BudgetProfile.uniform(n=300, low=0.5, high=1.5, rng=np.random.default_rng(4))
    bound = get_bound("clones")
    first = bound.delta(profile=prof, eps=0.3)
    assert cache_sizes()["clones.counts"] >= 1
    clear_caches()
    assert cache_sizes()["clones.counts"] == 0
    assert bound.delta(profile=prof, eps=0.3) == first
    assert cache_sizes()["clones.counts"] >= 1


def test_register_and_clear_custom_caches():
    memo: dict = {"a": 1}
    assert register_mapping("test.memo", memo) is memo
    calls = []
    register_cache("test.fn", lambda: calls.append(1))
    try:
        sizes = cache_sizes()
        assert sizes["test.memo"] == 1 and sizes["test.fn"] is None
        clear_caches()
        assert memo == {} and calls == [1]
    finally:
        unregister_cache("test.memo")
        unregister_cache("test.fn")
    assert "test.memo" not in registered_caches()


def test_bad_registration():
    with pytest.raises(TypeError, match="name must be a str, got int 3"):
        register_cache(3, lambda: None)
    with pytest.raises(ValueError, match="name must be a non-empty str"):
        register_cache(" x", lambda: None)
    with pytest.raises(TypeError, match="clear must be callable, got int 1"):
        register_cache("test.bad", 1)
    with pytest.raises(TypeError, match="size must be callable or None, got int 2"):
        register_cache("test.bad", lambda: None, size=2)
    with pytest.raises(TypeError, match="mapping must be a mutable mapping .* got tuple"):
        register_mapping("test.bad", (1, 2))
    with pytest.raises(ValueError, match="no cache registered as 'test.nope'"):
        unregister_cache("test.nope")
    assert "test.bad" not in registered_caches()


def test_runtime_experiment_starts_every_repetition_cold(tmp_path, monkeypatch):
    pytest.importorskip("pandas")
    import time_bounds  # workflow/scripts (on sys.path via conftest)

    seen = []

    class Recording:
        def __init__(self, bound):
            self.info = bound.info
            self._bound = bound

        def eps(self, **kw):
            seen.append((self.info.name, sum(cache_sizes().values())))
            return self._bound.eps(**kw)

    monkeypatch.setattr(time_bounds, "get_bound", lambda name: Recording(get_bound(name)))
    spec = {"kind": "uniform", "low": 0.5, "high": 2.0}
    time_bounds.main(inputs={}, outputs={"table": str(tmp_path / "r.csv")},
                     params={"n": [300], "profile": "u", "profile_spec": spec, "delta": 1e-6,
                             "repeats": 3, "methods": ["clones", "rr_exact"], "seed": 1})
    assert [name for name, _ in seen] == ["clones"] * 3 + ["rr_exact"] * 3
    assert all(size == 0 for _, size in seen), seen  # nothing cached at any timed call
    assert sum(cache_sizes().values()) > 0  # ... although the calls do fill the caches
