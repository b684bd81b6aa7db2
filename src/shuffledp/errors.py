"""Exceptions shared by the whole package.

``ValueError`` is raised for values that are invalid anywhere (a negative epsilon, a delta
outside [0, 1)).  :class:`ParameterRegimeError` is raised for *valid* input that lies outside the
region where a particular bound is proven to hold, so a sweep can skip the point and record why.
"""

from __future__ import annotations

__all__ = ["ParameterRegimeError", "short_repr", "short_path"]


class ParameterRegimeError(ValueError):
    """Valid parameters outside the validity region of a bound or mechanism.

    >>> try:
    ...     raise ParameterRegimeError("efmrtt19 requires eps0 <= 0.5, got 1.0")
    ... except ValueError as err:
    ...     print(err)
    efmrtt19 requires eps0 <= 0.5, got 1.0
    """


def short_repr(value: object, limit: int = 60) -> str:
    """``repr(value)`` cut to at most ``limit`` characters, for error messages.

    A user's input is echoed back in the message that rejects it, but never whole when it is
    long (a 100,000-character argument gives a one-line message, not a screenful).

    >>> short_repr("x" * 10)
    "'xxxxxxxxxx'"
    >>> short_repr("x" * 1000)
    "'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx... (1002 characters)"
    """
    text = repr(value)
    if len(text) <= limit:
        return text
    return f"{text[: limit - 10]}... ({len(text)} characters)"


def short_path(path: object, limit: int = 60) -> str:
    """A path quoted for an error message, cut at its *start* when longer than ``limit``
    characters: the end of a path (the folder or file the user named) is the part that says
    what is missing.

    >>> short_path("/tmp/a")
    "'/tmp/a'"
    >>> short_path("/" + "d" * 100 + "/nowhere")
    "'...dddddddddddddddddddddddddddddddddddddddddd/nowhere' (109 characters)"
    """
    text = str(path)
    if len(text) + 2 <= limit:
        return repr(text)
    keep = limit - 10
    return f"'...{text[-keep:]}' ({len(text)} characters)"
