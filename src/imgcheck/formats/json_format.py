"""JSON output: the versioned contract of DESIGN.md."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from ..model.image import ImageFacts
from ..model.serde import to_dict

if TYPE_CHECKING:  # `inspect` renders facts only: the report model loads node facts code it never needs
    from ..model.report import Report


def render_facts(facts: ImageFacts) -> str:
    return json.dumps({"schema_version": facts.schema_version, "image": to_dict(facts)}, indent=2) + "\n"


def render_report(report: Report) -> str:
    return json.dumps(to_dict(report), indent=2) + "\n"
