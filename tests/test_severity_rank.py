"""One severity order (model.report): what --fail-on gates on, how every format and page sorts."""

from __future__ import annotations

import os
import re

import pytest

from imgcheck.model.report import SEVERITIES, SEVERITY_RANK, at_or_above, severity_rank

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src", "imgcheck")


@pytest.mark.parametrize(
    "severity, threshold, reached",
    [
        ("error", "error", True),
        ("warning", "error", False),
        ("info", "error", False),
        ("error", "warning", True),
        ("warning", "warning", True),
        ("info", "warning", False),
        ("error", "never", False),
        ("warning", "never", False),
        ("critical", "warning", False),  # a severity imgcheck does not know never fails a gate by itself
    ],
)
def test_at_or_above(severity, threshold, reached):
    assert at_or_above(severity, threshold) is reached


def test_worst_first_unknown_last():
    assert sorted(["info", None, "error", "bogus", "warning"], key=severity_rank)[:3] == ["error", "warning", "info"]
    assert list(SEVERITY_RANK) == list(SEVERITIES)


def test_no_other_module_defines_a_severity_order():
    """A second {"error": 0, ...} drifts from this one (five copies did before)."""
    pattern = re.compile(r"""["']error["']\s*:\s*\d""")
    copies = []
    for root, _, files in os.walk(SRC):
        for name in files:
            path = os.path.join(root, name)
            if name.endswith(".py") and not path.endswith(os.path.join("model", "report.py")):
                with open(path, encoding="utf-8") as fh:
                    copies += [f"{path}:{i}" for i, line in enumerate(fh, 1) if pattern.search(line)]
    assert copies == []
