"""The HTML pages: recent checks (verdict per fleet, top findings) and a readable report per image.

Every value from the database (repository names, tags, error messages: all of it came from a
webhook sender) goes through html.escape; the page has no script and is served with a CSP that
forbids any.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from html import escape
from typing import Any
from urllib.parse import quote

from ..model.report import severity_rank

CSP = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

_STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; }
table { border-collapse: collapse; } th, td { padding: .3em .7em; border-bottom: 1px solid #ddd; text-align: left; }
code { font-size: 12px; } .verdict-ok { color: #17702a; } .verdict-warn { color: #9a6a00; }
.verdict-fail { color: #b00020; font-weight: bold; } .verdict-incomplete { color: #7a3e9d; } .state-failed { color: #b00020; } .muted { color: #777; }
ul.findings { margin: 0; padding-left: 1.1em; } .sev-error { color: #b00020; } .sev-warning { color: #9a6a00; }
.sev-info { color: #555; } section.fleet { margin: 1.2em 0; } dt { font-weight: bold; margin-top: .4em; }
"""


Report = dict[str, Any]  # a stored CLI JSON report, as parsed (read defensively: older schemas too)
Job = dict[str, Any]  # a job summary (store.SqlJobStore's reads)
TopFinding = tuple[str, str, str, list[str]]  # (severity, id, title, fleets)


def top_findings(reports: dict[str, Report], limit: int = 3) -> list[TopFinding]:
    """(severity, id, title, fleets) of the worst findings across a job's fleet reports; info left out."""
    seen: dict[str, TopFinding] = {}
    for fleet, report in reports.items():
        for f in report.get("findings", []) if isinstance(report, dict) else []:
            if not isinstance(f, dict) or f.get("severity") not in ("error", "warning") or f.get("assumes"):
                continue  # info, and conditional findings (a hypothesis about the image), are not the worst
            key = str(f.get("id"))
            severity, fid, title, fleets = seen.get(key, (f["severity"], key, str(f.get("title") or ""), []))
            if severity_rank(f["severity"]) < severity_rank(severity):
                severity = f["severity"]
            if fleet not in fleets:
                fleets.append(fleet)
            seen[key] = (severity, fid, title, fleets)
    ranked = sorted(seen.values(), key=lambda e: (severity_rank(e[0]), e[1]))
    return ranked[:limit]


def _state(job: Job) -> str:
    error = job.get("last_error") or ""
    state = str(job["state"])
    return "skipped" if state == "done" and error.startswith("skipped:") else state


def _when(ts: float | None) -> str:
    if not ts:
        return ""
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(ts))


def render_index(
    jobs: list[Job], fleets: list[str], counts: dict[str, int], findings: dict[int, list[TopFinding]] | None = None
) -> str:
    """`findings`: job id -> top_findings(...) for that job's reports."""
    findings = findings or {}
    head = "".join(f"<th>{escape(f)}</th>" for f in fleets)
    rows = []
    for job in jobs:
        tags = ", ".join(job["tags"]) or "—"
        cells = []
        for fleet in fleets:
            verdict = job["verdicts"].get(fleet)
            if verdict:
                cells.append(
                    f'<td class="verdict verdict-{escape(verdict)}" data-fleet="{escape(fleet)}">{escape(verdict)}</td>'
                )
            else:
                cells.append(f'<td class="verdict muted" data-fleet="{escape(fleet)}">—</td>')
        error = f'<div class="muted">{escape(job["last_error"])}</div>' if job.get("last_error") else ""
        top = findings.get(job["id"], [])
        items = "".join(
            f'<li class="sev-{escape(sev)}"><b>{escape(fid)}</b> {escape(title)} '
            f'<span class="muted">({escape(", ".join(fl))})</span></li>'
            for sev, fid, title, fl in top
        )
        report_link = (
            (
                f'<a class="report" href="/report/{escape(quote(job["digest"]))}?repository='
                f'{escape(quote(job["repository"], safe=""))}">report</a>'
            )
            if job["verdicts"]
            else ""
        )
        found = f'<ul class="findings">{items}</ul>' if items else ""
        rows.append(
            f'<tr data-digest="{escape(job["digest"])}">'
            f"<td>{escape(_when(job['finished_at'] or job['created_at']))}</td>"
            f'<td><a href="/images/{escape(quote(job["repository"]))}">{escape(job["repository"])}</a>'
            f' <span class="muted">{escape(job["registry"])}</span></td>'
            f"<td>{escape(tags)}</td>"
            f'<td><a href="/results/{escape(quote(job["digest"]))}"><code>{escape(job["digest"][:19])}</code></a></td>'
            f'<td class="state-{escape(_state(job))}">{escape(_state(job))}{error}</td>'
            + "".join(cells)
            + f'<td class="top-findings">{found}{report_link}</td></tr>'
        )
    summary = ", ".join(f"{escape(k)}: {int(v)}" for k, v in counts.items())
    body = "\n".join(rows) or f'<tr><td colspan="{6 + len(fleets)}" class="muted">no images checked yet</td></tr>'
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>imgcheck: recent checks</title>
<style>{_STYLE}</style></head>
<body><h1>imgcheck: recent checks</h1>
<p class="muted">Queue: {summary}. Verdicts per fleet: ok, warn or fail.</p>
<table id="checks"><thead><tr><th>When</th><th>Repository</th><th>Tags</th><th>Digest</th><th>State</th>{head}<th>Top findings</th></tr></thead>
<tbody>
{body}
</tbody></table></body></html>
"""


def _list(values: Iterable[object], cls: str = "") -> str:
    items = "".join(f"<li>{escape(str(v))}</li>" for v in values if v not in (None, ""))
    return f'<ul class="{cls}">{items}</ul>' if items else ""


def _finding(f: dict[str, Any]) -> str:
    evidence = [
        f"{e.get('fact')} = {e.get('value')!r}" + (f" ({e.get('path')})" if e.get("path") else "")
        for e in f.get("evidence", [])
        if isinstance(e, dict)
    ]
    parts = [
        f'<h4 class="sev-{escape(str(f.get("severity")))}">{escape(str(f.get("severity")))}: '
        f"{escape(str(f.get('id')))} — {escape(str(f.get('title') or ''))}</h4><dl>"
    ]
    if f.get("predicted_error"):
        parts.append(f"<dt>Predicted error</dt><dd><code>{escape(str(f['predicted_error']))}</code></dd>")
    if f.get("mechanism"):
        parts.append(f"<dt>Why</dt><dd>{escape(str(f['mechanism']))}</dd>")
    if f.get("fixes"):
        parts.append(f"<dt>Fix</dt><dd>{_list(f['fixes'], 'fixes')}</dd>")
    if evidence:
        parts.append(f"<dt>Evidence</dt><dd>{_list(evidence)}</dd>")
    if f.get("nodes"):
        parts.append(f"<dt>Nodes</dt><dd>{escape(', '.join(map(str, f['nodes'])))}</dd>")
    parts.append(f"<dt>Confidence</dt><dd>{escape(str(f.get('confidence') or 'unknown'))}</dd>")
    if f.get("sources"):
        parts.append(f"<dt>Sources</dt><dd>{_list(f['sources'])}</dd>")
    return "".join(parts) + "</dl>"


def render_report(jobs: list[Job], reports: dict[int, dict[str, Report]]) -> str:
    """A readable report of one digest: per repository and fleet, the verdict and every finding."""
    sections = []
    for job in jobs:
        head = (
            f'<h2>{escape(job["repository"])} <span class="muted">{escape(job["registry"])}</span></h2>'
            f"<p><code>{escape(job['digest'])}</code> · tags: {escape(', '.join(job['tags']) or '—')} · "
            f'state: <span class="state-{escape(_state(job))}">{escape(_state(job))}</span></p>'
        )
        if job.get("last_error"):
            head += f'<p class="muted">{escape(job["last_error"])}</p>'
        fleets = []
        for fleet, report in sorted(reports.get(job["id"], {}).items()):
            # schema 4's outcome (incomplete when an error rule was not decided), else the stored verdict
            verdict = str(report.get("outcome") or report.get("verdict", "unknown"))
            shown = [f for f in report.get("findings", []) if isinstance(f, dict)]
            shown.sort(key=lambda f: severity_rank(str(f.get("severity"))))  # absent sorts last, as unknown
            body = "".join(_finding(f) for f in shown) or '<p class="muted">no findings</p>'
            unknowns = [
                f"{u.get('rule')}: {u.get('reason')}" for u in report.get("unknowns", []) if isinstance(u, dict)
            ]
            if unknowns:
                body += f"<h4>Could not decide</h4>{_list(unknowns)}"
            recs = [
                f"{r.get('image')}: {r.get('why')}" for r in report.get("recommendations", []) if isinstance(r, dict)
            ]
            if recs:
                body += f"<h4>Recommended</h4>{_list(recs)}"
            fleets.append(
                f'<section class="fleet" data-fleet="{escape(fleet)}"><h3>Fleet {escape(fleet)}: '
                f'<span class="verdict verdict-{escape(verdict)}">{escape(verdict)}</span></h3>{body}</section>'
            )
        sections.append(head + "".join(fleets))
    digest = jobs[0]["digest"] if jobs else ""
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>imgcheck report {escape(digest[:19])}</title>
<style>{_STYLE}</style></head>
<body><p><a href="/">← recent checks</a> · <a href="/results/{escape(quote(digest))}">JSON</a></p>
<h1>imgcheck report</h1>
{"".join(sections)}
</body></html>
"""
