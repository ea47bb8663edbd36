"""Golden files: every format rendered from the SAME report, compared byte for byte.

The report carries a real tool version and the current time; normalised() pins both, so the golden
files change only when a renderer changes. Regenerate after an intended change with

    IMGCHECK_UPDATE_GOLDEN=1 python -m pytest tests/test_formats_golden.py

and review the diff of tests/golden/ like code.
"""

from __future__ import annotations

import os

import pytest
from formats_sample import normalised, sample_report

from imgcheck.formats.report_formats import REPORT_FORMATS, render
from imgcheck.formats.report_table import render_table

GOLDEN_DIR = os.path.join(os.path.dirname(__file__), "golden")
SUFFIX = {"table": "table.txt", "json": "json", "sarif": "sarif.json", "junit": "junit.xml", "markdown": "md"}
UPDATE = os.environ.get("IMGCHECK_UPDATE_GOLDEN") == "1"


def _check(name: str, text: str) -> None:
    path = os.path.join(GOLDEN_DIR, name)
    if UPDATE:
        os.makedirs(GOLDEN_DIR, exist_ok=True)
        with open(path, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        return
    if not os.path.exists(path):
        pytest.fail(f"{path} is missing; create it with IMGCHECK_UPDATE_GOLDEN=1")
    with open(path, encoding="utf-8", newline="") as fh:
        expected = fh.read()
    assert text == expected, f"{name} differs from the golden file (IMGCHECK_UPDATE_GOLDEN=1 regenerates it)"


@pytest.mark.parametrize("fmt", REPORT_FORMATS)
def test_golden(fmt):
    _check(f"report.{SUFFIX[fmt]}", render(normalised(sample_report()), fmt))


def test_golden_color_table():
    # render_table directly: render() wraps to the terminal's width, which differs between machines
    _check("report.table.ansi.txt", render_table(normalised(sample_report()), color=True, width=110))


def test_golden_verbose_table():
    _check("report.table.verbose.txt", render(normalised(sample_report()), "table", verbose=True))


def test_golden_junit_fail_on_warning():
    _check("report.fail-on-warning.junit.xml", render(normalised(sample_report()), "junit", fail_on="warning"))


def test_every_format_is_covered():
    assert set(SUFFIX) == set(REPORT_FORMATS)


def test_normalisation_is_what_makes_outputs_stable():
    """Without normalised() the run-specific values would reach the outputs that carry them."""
    report = sample_report()
    assert report.generated_at in render(report, "json")
    assert report.generated_at in render(report, "sarif")
    for fmt in REPORT_FORMATS:
        text = render(normalised(report), fmt)
        assert report.generated_at not in text
