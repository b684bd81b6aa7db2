"""Regression tests of issue 30 ("nothing bad gets through"), by kind: every public entry point
checks the values and types it accepts the same way in each of its doors (``covers`` as
``eps``), regime errors keep their own reason, and NaN is never an answer.  (The CLI's hostile
inputs: tests/test_cli.py; the configuration's: tests/workflow/test_wfconfig.py; the
accounting's grid: tests/test_accounting_export.py.)"""

from __future__ import annotations

import math

import pytest

from shuffledp import BudgetProfile, ParameterRegimeError, get_bound, list_bounds
from shuffledp.compare import compare_bounds, lower_bound_check

P = BudgetProfile.identical(n=100, eps0=1.0)
BAD_VALUES = (12345, "no-such-value", 1.5, True, [1])


def _outcome(call) -> str:
    try:
        call()
    except TypeError:
        return "TypeError"
    except ParameterRegimeError:
        return "ok"  # a valid value outside the bound's regime
    except ValueError:
        return "ValueError"
    return "ok"


@pytest.mark.parametrize("name", list_bounds())
def test_covers_checks_option_values_as_eps_does(name):
    """``covers`` said "covered" for options that ``eps`` refuses (blanket_bennett with
    blanket='nope'): every bad value now gets the same answer from both doors."""
    bound = get_bound(name)
    for key in bound.info.options:
        for bad in BAD_VALUES:
            via_eps = _outcome(lambda b=bad, k=key: bound.eps(profile=P, delta=1e-6, **{k: b}))
            via_covers = _outcome(lambda b=bad, k=key: bound.covers(
                randomizer="binary_rr", profile=P, **{k: b}))
            assert via_covers == via_eps, (name, key, bad, via_covers, via_eps)


@pytest.mark.parametrize("name", list_bounds())
def test_wrongly_typed_options_are_type_errors(name):
    bound = get_bound(name)
    for key, default in bound.info.options.items():
        if isinstance(default, str):
            with pytest.raises(TypeError, match=f"option {key} of bound"):
                bound.eps(profile=P, delta=1e-6, **{key: 12345})
        elif isinstance(default, bool):
            with pytest.raises(TypeError, match=f"option {key} of bound"):
                bound.eps(profile=P, delta=1e-6, **{key: "yes"})
        elif isinstance(default, (int, float)):
            with pytest.raises(TypeError, match=f"option {key} of bound"):
                bound.eps(profile=P, delta=1e-6, **{key: "3"})


def test_lower_bound_check_refuses_what_is_not_a_value():
    for v in (math.nan, math.inf, -1.0):
        with pytest.raises(ValueError, match="value must be finite"):
            lower_bound_check(P, value=v, delta=1e-6)
    with pytest.raises(TypeError, match="value must be a real number"):
        lower_bound_check(P, value="0.1", delta=1e-6)
    with pytest.raises(ValueError, match="value must be"):
        lower_bound_check(P, value=2.0, eps=0.5)  # a delta above 1
    with pytest.raises(TypeError, match="profile"):
        lower_bound_check([1.0], value=0.1, delta=1e-6)
    with pytest.raises(TypeError, match="lowers"):
        lower_bound_check(P, value=0.1, delta=1e-6, lowers=["rr_exact"])


def test_compare_bounds_checks_its_flags():
    with pytest.raises(TypeError, match="check_lower"):
        compare_bounds(P, delta=1e-6, methods=["gdp"], check_lower="no")


def test_a_regime_error_inside_the_eps_search_keeps_its_reason(monkeypatch):
    """A bound whose delta(eps) raises its own ParameterRegimeError mid-search: that reason,
    not "cannot certify delta for any eps"."""
    from shuffledp.bounds import Bound, BoundInfo, register_bound, unregister_bound

    def delta_fn(*, profile, eps):
        if eps > 0.5:
            raise ParameterRegimeError("toy: no statistic beyond eps = 0.5")
        return 1.0

    register_bound(Bound(info=BoundInfo(name="toy_regime", kind="lower", title="toy",
                                        citation="test", personalized=True, approx_ldp=True,
                                        randomizers=("binary_rr",)), delta_fn=delta_fn))
    try:
        with pytest.raises(ParameterRegimeError, match="toy: no statistic beyond"):
            get_bound("toy_regime").eps(profile=P, delta=1e-6)
    finally:
        unregister_bound("toy_regime")


# --- hostile files and numbers --------------------------------------------------------------

def test_npy_header_promising_more_than_the_file_holds_is_refused_before_allocating():
    import io

    import numpy as np

    from shuffledp.io import parse_budgets_npy

    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buf, {"descr": "<f8", "fortran_order": False, "shape": (10**12,)})
    data = buf.getvalue() + b"\0" * 16  # 128 bytes or so, claiming 8 TB
    with pytest.raises(ValueError, match="header promises shape"):
        parse_budgets_npy(data)
    good = io.BytesIO()
    np.save(good, np.full(10, 1.0))
    assert parse_budgets_npy(good.getvalue()).n == 10
    with pytest.raises(ValueError, match="header promises"):
        parse_budgets_npy(good.getvalue()[:-8])  # one entry cut off


@pytest.mark.parametrize("text,match", [
    ("eps\n1_5\n1\n", "must be numeric, got '1_5'"),
    ("eps,count\n1,inf\n2,3\n", "'count' must be a finite number, got 'inf'"),
    ("eps\nnan\n1\n", "'eps' must be a finite number"),
    ("eps,delta\n1,-inf\n1,0\n", "'delta' must be a finite number"),
])
def test_csv_cells_underscores_and_non_finite_numbers_are_refused(text, match):
    from shuffledp.io import parse_budgets_csv

    with pytest.raises(ValueError, match=match):
        parse_budgets_csv(text)


def test_cli_numbers_refuse_underscores():
    from shuffledp.cli import main

    assert main(["bound", "--n", "1_000", "--eps0", "1", "--delta", "1e-6"]) == 2
    assert main(["bound", "--n", "1000", "--eps0", "1_0", "--delta", "1e-6"]) == 2


def test_profile_arrays_cannot_be_made_writeable():
    """Profile arrays live in immutable buffers: setflags(write=True) raises on them and on
    their bases, so nobody can change a profile (or the caches keyed by it) behind its back."""
    import numpy as np

    profiles = [BudgetProfile.from_arrays([0.5, 1.0, 1.0, 2.0]),
                BudgetProfile.from_histogram([0.5, 2.0], [3, 4], [1e-8, 0.0]),
                BudgetProfile.identical(n=10, eps0=1.0)]
    for p in profiles:
        for a in (p.tiers.eps, p.tiers.delta, p.tiers.counts, p.eps, p.delta):
            assert not a.flags.writeable
            with pytest.raises(ValueError, match="WRITEABLE"):
                a.setflags(write=True)
            base = a.base
            while isinstance(base, np.ndarray):
                with pytest.raises(ValueError, match="WRITEABLE"):
                    base.setflags(write=True)
                base = base.base
            assert base is None or isinstance(base, bytes)


def test_a_cached_answer_cannot_be_changed_by_its_caller():
    """The clone-count pmf that clones caches (and hands out): zeroing it made clones answer
    eps = 0 for every later profile with those budgets; its arrays are now immutable."""
    import numpy as np

    from shuffledp.bounds.clones.count import clone_count

    prof = BudgetProfile.identical(n=1000, eps0=1.0)
    before = get_bound("clones").eps(profile=prof, delta=1e-6)
    cc = clone_count(prof)
    with pytest.raises(ValueError):
        cc.count.pmf[:] = 0.0
    with pytest.raises(ValueError, match="WRITEABLE"):
        cc.count.pmf.setflags(write=True)
    assert isinstance(cc.count.pmf, np.ndarray)
    assert get_bound("clones").eps(profile=BudgetProfile.identical(n=1000, eps0=1.0),
                                   delta=1e-6) == before


def test_clearing_the_caches_while_other_threads_evaluate():
    """clear_caches() in one thread while another read a cache raised KeyError (a hit found by
    ``get``, gone before ``move_to_end``; about one call in a hundred under contention).  Here
    the window is made wide (a cache whose ``move_to_end`` sleeps) and every look-up and store
    goes through lru_get / lru_put, as every cache of the library does: no error, because they
    and clear_caches share one lock.  Then the same with real bounds."""
    import threading
    import time
    from collections import OrderedDict

    from shuffledp import clear_caches
    from shuffledp.caching import lru_get, lru_put, register_mapping, unregister_cache

    class SlowCache(OrderedDict):
        def move_to_end(self, key, last=True):
            time.sleep(0.002)  # another thread would clear right here
            super().move_to_end(key, last)

    cache = register_mapping("test.slow", SlowCache())
    errors: list[BaseException] = []
    stop = threading.Event()

    def reader():
        try:
            for i in range(300):
                if lru_get(cache, i % 3) is None:
                    lru_put(cache, i % 3, [i], size=2)
        except BaseException as err:  # noqa: BLE001 - any failure is the finding
            errors.append(err)

    def clear():
        while not stop.is_set():
            clear_caches()

    def race(target) -> None:
        """Two threads run ``target`` while a third clears every cache until they end."""
        stop.clear()
        cleaner = threading.Thread(target=clear)
        workers = [threading.Thread(target=target) for _ in range(2)]
        cleaner.start()
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        stop.set()
        cleaner.join()

    try:
        race(reader)
    finally:
        unregister_cache("test.slow")
    assert not errors, errors[:3]
    # the real bounds under the same contention
    profiles = [BudgetProfile.from_histogram([0.5, 1.0 + 0.01 * i], [20, 20]) for i in range(4)]

    def work():
        try:
            for i in range(8):
                p = profiles[i % len(profiles)]
                for name, opts in (("clones", {}), ("rr_exact", {}),
                                   ("clones", {"mechanism": "krr:3"})):
                    get_bound(name).delta(profile=p, eps=0.3, **opts)
        except BaseException as err:  # noqa: BLE001
            errors.append(err)

    race(work)
    assert not errors, errors[:3]


def test_csv_parser_keeps_line_endings_comments_and_rows():
    """The one-pass parser (values straight into typed arrays) reads what the old one read:
    CR, CRLF and LF line endings, blank and comment lines, quoted headers, a byte-order mark,
    and names the data row of a bad cell."""
    from shuffledp.io import parse_budgets_csv

    for text in ("eps,delta\n1.0,0\n\n# c\n2.0,1e-8\n", "eps,delta\r\n1.0,0\r\n2.0,1e-8\r\n",
                 "eps,delta\r1.0,0\r2.0,1e-8\r", '\ufeff"EPS","delta"\n1.0,0\n2.0,1e-8\n'):
        p = parse_budgets_csv(text)
        assert p.n == 2 and list(p.eps) == [1.0, 2.0] and list(p.delta) == [0.0, 1e-8]
    with pytest.raises(ValueError, match="on data row 3"):
        parse_budgets_csv("eps\n1\n# skip\n2\nx\n")
    with pytest.raises(ValueError, match="header but no data rows"):
        parse_budgets_csv("eps\n# nothing\n")
    with pytest.raises(ValueError, match="is empty"):
        parse_budgets_csv("\n# only comments\n")
