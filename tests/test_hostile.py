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


# --- the second hostile pass (issue 30): 1,993 cases; each kind it found -------------------

def _families_with_k():
    from shuffledp.families import family_names, get_family

    out = []
    for name in family_names():
        try:
            get_family(name)
            out.append(name)
        except ValueError:  # needs k
            out.append(f"{name}:4")
    return out


@pytest.mark.parametrize("randomizer", _families_with_k())
@pytest.mark.parametrize("budgets", [[0.0] * 4, [0.0, 0.0, 1.0, 1.0]])
def test_a_zero_budget_is_a_stated_regime_for_every_randomizer(randomizer, budgets):
    """eps_i = 0 (infinite noise for Laplace and piecewise): every bound answers or says why,
    never a ZeroDivisionError or a 'math domain error'."""
    from shuffledp.compare import check_claim

    profile = BudgetProfile.from_histogram(budgets, [250] * len(budgets))
    evals = compare_bounds(profile, delta=1e-6, randomizer=randomizer)
    assert {e.method for e in evals} == set(list_bounds())
    for e in evals:
        assert e.ok or e.reason
        if e.ok:
            assert e.result.eps >= 0.0
    assert check_claim(profile, eps=0.5, delta=1e-6, randomizer=randomizer).verdict in (
        "proven", "refuted", "undetermined")


def test_laplace_and_piecewise_name_the_budget_they_cannot_run():
    p = BudgetProfile.from_histogram([0.0, 1.0], [500, 500])
    for randomizer in ("laplace", "piecewise"):
        with pytest.raises(ParameterRegimeError, match=r"needs every eps_i > 0 .* min eps_i = 0"):
            get_bound("window_lower").eps(profile=p, delta=1e-6, mechanism=randomizer)


@pytest.mark.parametrize("spec, match", [
    ("krr:1000000000000000000", r"k \(categories\) must be in \[2, 1e\+12\]"),
    ("oue:10000000000000", r"k \(categories\) must be in"),
    ("krr:1_0", "digits 0-9"), ("krr:+5", "digits 0-9"), ("krr:١٠", "digits 0-9"),
])
def test_randomizer_specs_outside_what_the_formulas_can_hold_are_refused(spec, match):
    from shuffledp.families import get_family

    with pytest.raises(ValueError, match=match):
        get_family(spec)


def test_a_family_without_masses_of_its_own_gets_the_generic_clones():
    p = BudgetProfile.identical(n=1000, eps0=1.0, delta0=1e-8)
    evals = {e.method: e for e in compare_bounds(p, delta=1e-6, randomizer="gaussian_l2")}
    assert "mechanism" not in evals["clones"].options
    assert evals["tightest"].ok or evals["tightest"].reason


def test_counts_whose_sum_overflows_int64_are_refused_with_the_limit():
    with pytest.raises(ValueError, match=r"must be <= 1e\+09, got about 9.22e\+18"):
        BudgetProfile.from_histogram([1.0, 2.0], [2**62, 2**62])
    with pytest.raises(ValueError, match="must be <= 1e"):
        BudgetProfile.from_histogram([1.0, 2.0, 3.0, 4.0], [2**62] * 4)  # wraps to 0


def test_masked_arrays_and_nested_mus_are_refused():
    import numpy as np

    from shuffledp.gdp import compose_gdp

    with pytest.raises(TypeError, match="masked array"):
        BudgetProfile.from_arrays(np.ma.masked_array([1.0, 2.0, 3.0], mask=[0, 1, 0]))
    with pytest.raises(ValueError, match="1-D"):
        compose_gdp([[1.0]])


def test_negative_zero_is_stored_and_printed_as_zero():
    p = BudgetProfile.from_arrays([-0.0, 1.0])
    assert math.copysign(1.0, p.eps_min) == 1.0
    q = BudgetProfile.identical(n=10, eps0=-0.0)
    assert math.copysign(1.0, q.eps_max) == 1.0


@pytest.mark.parametrize("kwargs, error, match", [
    ({"methods": []}, ValueError, "at least one bound"),
    ({"methods": ["gdp", "gdp"]}, ValueError, "each bound once"),
    ({"methods": ["clones"], "options": {"gdp": {}}}, ValueError, "that methods does not"),
])
def test_compare_bounds_refuses_empty_repeated_and_unused(kwargs, error, match):
    with pytest.raises(error, match=match):
        compare_bounds(P, delta=1e-6, **kwargs)


@pytest.mark.parametrize("evals", ["x", None, [1, 2], 5])
def test_best_answer_wants_evaluations(evals):
    from shuffledp.compare import best_answer

    with pytest.raises(TypeError, match="evals must"):
        best_answer(evals)


@pytest.mark.parametrize("options", [{"victim_groups": 0}, {"victim_groups": 10**9},
                                     {"victim_groups": 2.5}])
def test_tightest_checks_its_options_in_every_door(options):
    b = get_bound("tightest")
    for call in (lambda: b.eps(profile=P, delta=1e-6, **options),
                 lambda: b.covers(randomizer="laplace", profile=P, **options)):
        assert _outcome(call) in ("ValueError", "TypeError")


def test_privacy_profiles_that_are_not_profiles_are_refused():
    from shuffledp.accounting import profile_pld

    with pytest.raises(TypeError, match="must be a function"):
        profile_pld(5, 1.0)
    with pytest.raises(TypeError, match="must be a number"):
        profile_pld(lambda e: "x", 1.0)
    for f in (lambda e: math.nan, lambda e: 2.0, lambda e: -1.0):
        with pytest.raises(ValueError, match=r"must be a delta in \[0, 1\]"):
            profile_pld(f, 1.0)
    # a value that rises with eps is allowed (numerical bounds need not be monotone): each is
    # an upper bound at its eps, and the profile never rises, so the smallest so far holds
    pld = profile_pld(lambda e: min(0.5 + e, 1.0), 1.0)
    assert float(pld.get_delta_for_epsilon(0.9)) <= 0.5 + 1e-3


@pytest.mark.parametrize("p, q, tail, error, match", [
    ("ab", "cd", 0.0, TypeError, "p must be"),
    ([0.5, 0.5], [0.5, 0.6], 0.0, ValueError, "q must be a .sub-.probability"),
    ([math.nan, 1.0], [0.5, 0.5], 0.0, ValueError, "finite"),
    ([0.5, 0.5], [0.5, 0.5], -1.0, ValueError, "tail_mass"),
    ([], [], 0.0, ValueError, "at least one outcome"),
    ([0.9, 0.9], [0.5, 0.5], 0.0, ValueError, "p must be a .sub-.probability"),
])
def test_pairs_that_are_not_distributions_are_refused(p, q, tail, error, match):
    from shuffledp.accounting import pld_from_pair

    with pytest.raises(error, match=match):
        pld_from_pair(p, q, tail)


@pytest.mark.parametrize("kwargs, error, match", [
    ({"method": "gdp"}, ValueError, "rigorous upper bound"),
    ({"method": "foo"}, ValueError, "unknown bound"),
    ({"points": -1}, ValueError, "points"),
    ({"options": {"foo": 1}}, ValueError, "unknown option"),
    ({"generic_masses": "x"}, TypeError, "generic_masses"),
    ({"method": 3}, TypeError, "method"),
])
def test_a_shuffled_round_event_checks_its_arguments_when_built(kwargs, error, match):
    from shuffledp.accounting import ShuffledRoundDpEvent

    with pytest.raises(error, match=match):
        ShuffledRoundDpEvent(P, "laplace", **kwargs)


def test_the_accountant_refuses_a_nan_target():
    from shuffledp.accounting import ShuffledRoundDpEvent, ShufflePLDAccountant

    acc = ShufflePLDAccountant()
    acc.compose(ShuffledRoundDpEvent(BudgetProfile.identical(n=1000, eps0=1.0), "binary_rr",
                                     method="clones"))
    with pytest.raises(ValueError, match="target_delta"):
        acc.get_epsilon(math.nan)
    with pytest.raises(ValueError, match="target_epsilon"):
        acc.get_delta(-1.0)


def test_sgd_rounds_beyond_what_fits_in_memory_are_refused():
    import shuffledp.sgd.accounting as sa

    with pytest.raises(ValueError, match="rounds must be <= 10000"):
        sa.rounds_epsilon(method="clones", profile=BudgetProfile.identical(n=1000, eps0=1.0),
                          rounds=10**9, delta=1e-5, randomizer="duchi")


def test_seeds_beyond_64_bits_are_refused():
    from shuffledp.experiments.seeding import check_seed

    assert check_seed(2**63 - 1) == 2**63 - 1
    with pytest.raises(ValueError, match=r"\[0, 2\^63 - 1\]"):
        check_seed(2**63)


def test_clones_rounds_fall_back_to_the_local_guarantee_when_the_pld_gives_up(monkeypatch):
    """Many rounds: the composed clones PLD's truncated tails pass delta (eps = inf, seen at
    10^4 rounds); the local-only guarantee holds too and is the answer then."""
    import shuffledp.sgd.accounting as sa

    class GaveUp:
        def epsilon(self, delta):
            return math.inf

        def delta(self, eps):
            return 1.0

    p = BudgetProfile.identical(n=1000, eps0=1.0)
    monkeypatch.setattr(sa, "rounds_accounts", lambda **kw: [GaveUp()])
    assert sa.FALLBACK_DELTA < 1.0
    kw = dict(profile=p, rounds=5, randomizer="duchi")
    local_eps = sa.rounds_epsilon(method="local", delta=1e-5, **kw)
    assert math.isfinite(local_eps)
    assert sa.rounds_epsilon(method="clones", delta=1e-5, **kw) == local_eps
    assert sa.rounds_delta(method="clones", eps=local_eps, **kw) == \
        sa.rounds_delta(method="local", eps=local_eps, **kw) < 1.0


@pytest.mark.parametrize("argv, match", [
    (["bound", "--n", "1000", "--eps0", "1", "--delta", "1e-6", "--method", "gdp,gdp"],
     "--method names gdp more than once"),
    (["check", "--n", "1000", "--eps0", "1", "--eps", "1", "--delta", "1e-6", "--randomizer",
      "laplace", "--method", "gdp,gdp"], "more than once"),
    (["bound", "--n", "1000", "--eps0", "1", "--delta", "1e-6", "--clone", "standard",
      "--method", "gdp"], "--clone standard sets the masses of the clones bound"),
    (["bound", "--n", "1000", "--eps0", "1", "--delta", "1e-6", "--randomizer", "krr:1_0"],
     "digits 0-9"),
    (["bound", "--n", "1000", "--eps0", "1", "--delta", "1e-6", "--randomizer",
      "krr:1000000000000000000"], r"k \(categories\) must be in"),
])
def test_cli_refuses_what_it_used_to_take_silently(argv, match, capsys):
    import re

    from shuffledp.cli import main

    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and re.search(match, err), err


def test_cli_with_stdout_closed_says_so(tmp_path):
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "shuffledp.cli", "list"], stdout=None,
                       stderr=subprocess.PIPE, text=True, timeout=120,
                       preexec_fn=lambda: __import__("os").close(1))
    assert r.returncode == 1
    assert r.stderr.strip() == "shuffledp: error: standard output is closed; nothing can be " \
        "written"


def test_cli_prints_no_negative_zero(capsys):
    from shuffledp.cli import main

    assert main(["bound", "--n", "1000", "--eps0", "-0.0", "--delta0", "-0.0", "--delta",
                 "1e-6", "--method", "gdp"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert "eps_i in [0, 0], max delta_i = 0," in first, first


def test_cli_gaussian_l2_from_its_own_help_works(capsys):
    from shuffledp.cli import main

    assert main(["bound", "--n", "1000", "--eps0", "1", "--delta0", "1e-8", "--delta", "1e-6",
                 "--randomizer", "gaussian_l2"]) == 0
    assert "answer: gaussian_l2, 1000 users" in capsys.readouterr().out


def test_a_randomizer_spec_with_thousands_of_digits_names_the_limit():
    from shuffledp.families import get_family

    with pytest.raises(ValueError, match=r"k \(categories\) must be at most 1e\+12"):
        get_family("krr:" + "9" * 5000)
