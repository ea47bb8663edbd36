"""The triage library call: logs (+ optional image and node) -> TriageReport."""

from __future__ import annotations

import dataclasses
import inspect
from typing import IO

from .. import __version__
from ..errors import ImgcheckError, UnavailableError, UsageError
from ..model.image import ImageFacts
from ..model.node import NodeFacts
from ..model.report import Finding
from .decide import decide
from .join import join_notes
from .result import JoinResult, TriageReport
from .scan import scan_logs
from .signatures import load_signatures


def load_node(name: str | None = None, facts_path: str | None = None) -> NodeFacts | None:
    if name and facts_path:
        raise UsageError("give either --node NAME or --node-facts FILE, not both")
    if facts_path:
        from ..model.node_io import load_node_facts
        return load_node_facts(facts_path)
    if not name:
        return None
    try:  # the inventory is another module of imgcheck; imported late so triage works without it
        from ..node.inventory import Inventory
    except ImportError:
        raise UnavailableError("the node inventory is not available in this build; pass --node-facts FILE") from None
    facts = Inventory.default().get(name)
    if facts is None:
        raise UnavailableError(f"node {name!r} is not in the inventory (imgcheck node list)")
    return facts


def load_image(reference: str | None, platform=None) -> ImageFacts | None:
    if not reference:
        return None
    from ..api import inspect_image
    return inspect_image(reference, platform=platform)


def engine_findings(image: ImageFacts, node: NodeFacts | None) -> tuple[tuple[Finding, ...], str | None]:
    """Findings of the static check engine for this image and node, when the engine exists."""
    from .. import api as core
    check = getattr(core, "check_image", None)
    if check is None:
        return (), "the static check engine is not available in this build; the notes above come from the facts directly"
    try:
        params = inspect.signature(check).parameters
        kwargs = {}
        if node is not None:
            if "nodes" in params:
                kwargs["nodes"] = [node]
            elif "node_facts" in params:
                kwargs["node_facts"] = [node]
        result = check(image, **kwargs)
    except (ImgcheckError, TypeError, ValueError) as exc:  # a different engine API or an engine error: report, do not fail triage
        return (), f"the static check engine could not run: {exc}"
    findings = getattr(result, "findings", result)
    if isinstance(findings, (list, tuple)) and all(isinstance(f, Finding) for f in findings):
        return tuple(findings), None
    return (), "the static check engine returned a result this triage does not understand"


def triage(logs: list[str], *, image: str | None = None, node: str | None = None, node_facts: str | None = None,
           signatures: str | None = None, stdin: IO[bytes] | None = None, platform=None) -> TriageReport:
    """Read the logs (files, or "-" for stdin), find the first failure and its cause candidates.

    With an image and/or node, the log is joined with their facts. Raises BadInputError for
    unreadable logs or bad signature data, UnavailableError when the image/node cannot be obtained.
    """
    if node and node_facts:
        raise UsageError("give either --node NAME or --node-facts FILE, not both")
    sigset = load_signatures(signatures)
    scan = scan_logs(logs, sigset, stdin=stdin)  # logs first: a bad log fails fast, before a slow image pull
    node_f = load_node(node, node_facts)
    image_f = load_image(image, platform)
    report = decide(scan, sigset, image_f, node_f)
    join = None
    if image_f is not None or node_f is not None:
        found, why = engine_findings(image_f, node_f) if image_f is not None else ((), "no image given")
        join = JoinResult(image=image_f.reference if image_f else None, node=node_f.name if node_f else None,
                          notes=join_notes(report, image_f, node_f), engine_findings=found, engine_note=why)
    return dataclasses.replace(report, join=join, tool_version=__version__)
