"""The HTML status page: recent checks with their verdict per fleet.

Every value from the database (repository names, tags, error messages: all of it came from a
webhook sender) goes through html.escape; the page has no script and is served with a CSP that
forbids any.
"""

from __future__ import annotations

import time
from html import escape
from urllib.parse import quote

CSP = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

_STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; }
table { border-collapse: collapse; } th, td { padding: .3em .7em; border-bottom: 1px solid #ddd; text-align: left; }
code { font-size: 12px; } .verdict-ok { color: #17702a; } .verdict-warn { color: #9a6a00; }
.verdict-fail { color: #b00020; font-weight: bold; } .state-failed { color: #b00020; } .muted { color: #777; }
"""


def _when(ts: float | None) -> str:
    if not ts:
        return ""
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(ts))


def render_index(jobs: list[dict], fleets: list[str], counts: dict[str, int]) -> str:
    head = "".join(f"<th>{escape(f)}</th>" for f in fleets)
    rows = []
    for job in jobs:
        tags = ", ".join(job["tags"]) or "—"
        cells = []
        for fleet in fleets:
            verdict = job["verdicts"].get(fleet)
            if verdict:
                cells.append(f'<td class="verdict verdict-{escape(verdict)}" data-fleet="{escape(fleet)}">'
                             f"{escape(verdict)}</td>")
            else:
                cells.append(f'<td class="verdict muted" data-fleet="{escape(fleet)}">—</td>')
        error = f'<div class="muted">{escape(job["last_error"])}</div>' if job.get("last_error") else ""
        rows.append(
            f'<tr data-digest="{escape(job["digest"])}">'
            f'<td>{escape(_when(job["finished_at"] or job["created_at"]))}</td>'
            f'<td><a href="/images/{escape(quote(job["repository"]))}">{escape(job["repository"])}</a>'
            f' <span class="muted">{escape(job["registry"])}</span></td>'
            f"<td>{escape(tags)}</td>"
            f'<td><a href="/results/{escape(quote(job["digest"]))}"><code>{escape(job["digest"][:19])}</code></a></td>'
            f'<td class="state-{escape(job["state"])}">{escape(job["state"])}{error}</td>'
            + "".join(cells) + "</tr>")
    summary = ", ".join(f"{escape(k)}: {int(v)}" for k, v in counts.items())
    body = "\n".join(rows) or f'<tr><td colspan="{5 + len(fleets)}" class="muted">no images checked yet</td></tr>'
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>imgcheck: recent checks</title>
<style>{_STYLE}</style></head>
<body><h1>imgcheck: recent checks</h1>
<p class="muted">Queue: {summary}. Verdicts per fleet: ok, warn or fail.</p>
<table id="checks"><thead><tr><th>When</th><th>Repository</th><th>Tags</th><th>Digest</th><th>State</th>{head}</tr></thead>
<tbody>
{body}
</tbody></table></body></html>
"""
