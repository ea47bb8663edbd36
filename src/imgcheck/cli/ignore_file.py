"""Accepted findings kept in the repository: `.imgcheckignore` (YAML) or `[tool.imgcheck]` in pyproject.toml.

Shaped like trivy's `.trivyignore.yaml` and grype's `ignore:` list: every entry names a rule, says why
(required), may narrow it to nodes, and may expire. An expired entry stops applying (the finding comes
back) and is named on stderr, so a temporary exception cannot become permanent by being forgotten.

    # .imgcheckignore
    ignore:
      - rule: GDR-PEERMEM-MISSING
        reason: eval pool stages through host memory on purpose (INFRA-1234)
        nodes: [gpu-b01, gpu-b02]   # optional: only these nodes (default: every node)
        expires: 2027-03-31         # optional: applies through this day (UTC)

    # pyproject.toml
    [[tool.imgcheck.ignore]]
    rule = "GDR-PEERMEM-MISSING"
    reason = "eval pool stages through host memory on purpose (INFRA-1234)"
    expires = 2027-03-31
"""

from __future__ import annotations

import datetime as _dt
import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..errors import BadInputError
from ..fsutil import reading_input
from ..model.report import Suppression

IGNORE_FILE = ".imgcheckignore"
_KEYS = {"rule", "reason", "node", "nodes", "expires"}


@dataclass(frozen=True)
class LoadedIgnores:
    suppressions: tuple[Suppression, ...]
    expired: tuple[str, ...]  # one line per entry that no longer applies, for stderr


def default_ignore_file(cwd: str = ".") -> str | None:
    """`.imgcheckignore`, else a pyproject.toml that has a [tool.imgcheck] ignore list, in `cwd`."""
    path = os.path.join(cwd, IGNORE_FILE)
    if os.path.isfile(path):
        return path
    pyproject = os.path.join(cwd, "pyproject.toml")
    if os.path.isfile(pyproject) and _pyproject_entries(pyproject) is not None:
        return pyproject
    return None


def _pyproject_entries(path: str) -> object:  # the [tool.imgcheck] ignore value, None without the table
    import tomllib

    try:
        with reading_input(path, "pyproject.toml") as fh:
            doc = tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise BadInputError(f"{path}: not valid TOML ({exc})") from None
    tool = doc.get("tool", {}).get("imgcheck")
    if tool is None:
        return None
    if not isinstance(tool, dict):
        raise BadInputError(f"{path}: [tool.imgcheck] must be a table")
    return tool.get("ignore", [])


def _yaml_entries(path: str) -> object:  # the ignore value
    import yaml  # type: ignore[import-untyped]  # ships no type hints

    try:
        with reading_input(path, "an ignore file (.imgcheckignore)") as fh:
            doc = yaml.safe_load(fh)
    except yaml.YAMLError as exc:
        # one line here; --debug shows YAML's own message with its line and caret
        raise BadInputError(f"{path}: not valid YAML ({' '.join(str(exc).split())})") from exc
    if doc is None:
        return []
    if not isinstance(doc, dict) or set(doc) - {"ignore"}:
        raise BadInputError(f"{path}: expected a mapping with one key, ignore: [ {{rule, reason, ...}} ]")
    return doc.get("ignore") or []


def _date(value: object, where: str) -> _dt.date:
    if isinstance(value, _dt.datetime):
        return value.date()
    if isinstance(value, _dt.date):  # YAML and TOML both parse an unquoted 2027-03-31 as a date
        return value
    try:
        return _dt.date.fromisoformat(str(value))
    except ValueError:
        raise BadInputError(f"{where}: expires {value!r} is not a date (YYYY-MM-DD)") from None


def _nodes(entry: dict[str, Any], where: str) -> tuple[str | None, ...]:
    if "node" in entry and "nodes" in entry:
        raise BadInputError(f"{where}: give node or nodes, not both")
    nodes = entry.get("nodes", [entry["node"]] if "node" in entry else [None])
    if (
        not isinstance(nodes, list)
        or not nodes
        or not all(n is None or (isinstance(n, str) and n.strip()) for n in nodes)
    ):
        raise BadInputError(f"{where}: nodes must be a non-empty list of node names")
    return tuple(n.strip() if n else None for n in nodes)


def load_ignore_file(path: str, today: _dt.date | None = None) -> LoadedIgnores:
    entries = _pyproject_entries(path) if os.path.basename(path) == "pyproject.toml" else _yaml_entries(path)
    if not isinstance(entries, list):
        raise BadInputError(f"{path}: ignore must be a list of entries")
    today = today or _dt.datetime.now(_dt.UTC).date()
    suppressions: list[Suppression] = []
    expired: list[str] = []
    for i, entry in enumerate(entries, 1):
        where = f"{path}: ignore entry {i}"
        if not isinstance(entry, dict):
            raise BadInputError(f"{where}: expected a mapping with rule and reason")
        unknown = set(entry) - _KEYS
        if unknown:
            raise BadInputError(
                f"{where}: unknown key(s) {', '.join(sorted(map(str, unknown)))} (allowed: {', '.join(sorted(_KEYS))})"
            )
        rule, reason = entry.get("rule"), entry.get("reason")
        if not isinstance(rule, str) or not rule.strip():
            raise BadInputError(f"{where}: rule is missing")
        if not isinstance(reason, str) or not reason.strip():
            raise BadInputError(f"{where}: {rule}: reason is missing (say why the finding is acceptable)")
        expires = _date(entry["expires"], where) if "expires" in entry else None
        if expires is not None and expires < today:
            expired.append(
                f"{path}: the ignore of {rule.strip()} expired on {expires.isoformat()}; it no longer applies"
            )
            continue
        for node in _nodes(entry, where):
            suppressions.append(
                Suppression(
                    rule=rule.strip(),
                    node=node,
                    reason=" ".join(reason.split()),
                    expires=expires.isoformat() if expires else None,
                    origin=path,
                )
            )
    return LoadedIgnores(tuple(suppressions), tuple(expired))


def check_rule_ids(suppressions: Iterable[Suppression], known: tuple[str, ...], where: str = "--ignore") -> None:
    """An ignore naming no rule would silently ignore nothing (a typo, or a rule renamed): refuse it."""
    from ..user_text import clip, did_you_mean

    unknown = sorted({s.rule for s in suppressions if s.rule not in known})
    if unknown:
        named = ", ".join(f"{clip(rule)}{did_you_mean(rule, known)}" for rule in unknown[:5])
        raise BadInputError(
            f"{where}: unknown rule id {named}{' and more' if len(unknown) > 5 else ''} "
            "(docs/rules.md lists every rule; `imgcheck matrix docs` writes it)"
        )
