"""Where imgcheck keeps its state: $IMGCHECK_HOME, else ~/.imgcheck."""

from __future__ import annotations

import os


def imgcheck_home() -> str:
    return os.environ.get("IMGCHECK_HOME") or os.path.join(os.path.expanduser("~"), ".imgcheck")
