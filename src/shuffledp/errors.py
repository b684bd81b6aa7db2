"""Exceptions shared by the whole package.

``ValueError`` is raised for values that are invalid anywhere (a negative epsilon, a delta
outside [0, 1)).  :class:`ParameterRegimeError` is raised for *valid* input that lies outside the
region where a particular bound is proven to hold, so a sweep can skip the point and record why.
"""

from __future__ import annotations

__all__ = ["ParameterRegimeError"]


class ParameterRegimeError(ValueError):
    """Valid parameters outside the validity region of a bound or mechanism.

    >>> try:
    ...     raise ParameterRegimeError("efmrtt19 requires eps0 <= 0.5, got 1.0")
    ... except ValueError as err:
    ...     print(err)
    efmrtt19 requires eps0 <= 0.5, got 1.0
    """
