"""The accepted range of the whole project, stated once.

Every public entry point (the bounds' ``eps``/``delta``/``evaluate``,
:class:`~shuffledp.budgets.BudgetProfile`, the CLI, the workflow's config schema, which a test
checks against these constants) accepts exactly this range:

* local budgets ``eps_i`` in ``[0, EPS_LOCAL_MAX]`` = [0, 50] and ``delta_i`` in [0, 1);
* ``n`` from 2 to ``N_MAX`` = 10^9 users held as a budget histogram (identical users are a
  histogram of one tier; tested with 10^9 users in five tiers), and up to ``N_MAX_ARRAYS`` =
  10^8 users given as per-user arrays (distinct budgets are tested up to 10^7);
* a central target ``delta`` in ``[DELTA_MIN, DELTA_MAX]`` = [1e-30, 0.99];
* a central target ``eps``: any finite float >= 0.

Every rigorous bound is sound, and checked against exact computations, over this whole range
(docs/theory.md, "Numerics over the accepted range").  This module imports nothing.
"""

__all__ = [
    "EPS_LOCAL_MAX",
    "N_MAX",
    "N_MAX_ARRAYS",
    "DELTA_MIN",
    "DELTA_MAX",
    "BUDGET_COLUMNS",
    "LOCAL_EPS_RULE",
]

EPS_LOCAL_MAX = 50.0
#: Largest accepted number of users (a budget histogram; identical users are one).
N_MAX = 10**9
#: Largest number of users given (or expanded) as per-user arrays.
N_MAX_ARRAYS = 10**8
#: Smallest accepted central target delta.
DELTA_MIN = 1e-30
#: Largest accepted central target delta.
DELTA_MAX = 0.99
#: The columns of a budgets file (CSV header names, .npy field names): ``eps`` is required;
#: ``count`` makes the file a budget histogram (users per row).
BUDGET_COLUMNS = ("eps", "delta", "count")

#: Local budgets rule, as written in messages.
LOCAL_EPS_RULE = f"finite and in [0, {EPS_LOCAL_MAX:g}] (the accepted local budgets)"
