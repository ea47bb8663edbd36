"""Timeouts from the environment, checked (kept free of `requests`: the stdlib tag HEAD uses it too)."""

from __future__ import annotations

import math

from ..errors import BadInputError

MAX_TIMEOUT = 24 * 3600.0


def parse_timeout(text: str, var: str) -> float:
    """A timeout from the environment: a finite number of seconds above 0 (0, nan and inf would
    mean "never" or crash the socket layer)."""
    try:
        value = float(text)
    except ValueError:
        raise BadInputError(f"{var}={text!r} is not a number of seconds") from None
    if not math.isfinite(value) or value <= 0 or value > MAX_TIMEOUT:
        raise BadInputError(f"{var}={text!r} must be more than 0 and at most {MAX_TIMEOUT:.0f} seconds")
    return value
