"""One entry point from a Report to any output format (`-o FORMAT[=PATH]`).

Every renderer is a pure function of the report, so several formats from one run always agree.
"""

from __future__ import annotations

from ..errors import UsageError
from ..model.report import Report

REPORT_FORMATS = ("table", "json", "sarif", "junit", "markdown")


def render(
    report: Report,
    fmt: str,
    color: bool = False,
    *,
    fail_on: str = "error",
    verbose: bool = False,
    fleet: str | None = None,
) -> str:
    """Render ``report`` as ``fmt``.

    ``color`` only affects `table` (ANSI colours on a terminal). ``fail_on`` (the `--fail-on` value)
    only affects `junit`: warnings become failing test cases when it is "warning", nothing fails
    when it is "never". ``verbose`` only affects `table`: details (why, evidence, sources) per finding.
    ``fleet`` (the `--fleet` name) only affects `sarif`: it is part of each alert's fingerprint.
    """
    if fmt == "table":
        from .report_table import render_table

        if not color:  # plain text is not wrapped at all, so width does not matter
            return render_table(report, color=False, verbose=verbose)
        import shutil

        # on a terminal, wrap to its width (bounded, so very wide or tiny terminals stay readable)
        width = min(max(shutil.get_terminal_size(fallback=(110, 24)).columns, 60), 160)
        return render_table(report, color=True, width=width, verbose=verbose)
    if fmt == "json":
        from .json_format import render_report

        return render_report(report)
    if fmt == "sarif":
        from .sarif import render_sarif

        return render_sarif(report, fleet)
    if fmt == "junit":
        from .junit import render_junit

        return render_junit(report, fail_on=fail_on)
    if fmt == "markdown":
        from .markdown import render_markdown

        return render_markdown(report)
    raise UsageError(f"unknown output format {fmt!r} (choose from {', '.join(REPORT_FORMATS)})")
