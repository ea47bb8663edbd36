"""The triage library call: logs (+ optional image and node) -> TriageReport."""

from __future__ import annotations

import dataclasses
from typing import IO, TYPE_CHECKING

from .. import __version__
from ..errors import ImgcheckError, UnavailableError, UsageError
from ..knowledge.nccl import nccl_in_use
from ..model.image import ImageFacts
from ..model.node import NodeFacts
from ..model.report import Finding
from . import fabric_catalog, host_catalog, nccl_catalog
from .decide import decide
from .joins import join_notes
from .result import JoinResult, TriageReport
from .scan import scan_logs
from .signatures import load_signatures

if TYPE_CHECKING:
    from ..deadline import Deadline
    from ..job.model import JobFacts
    from ..sources.platform import Platform


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
    return Inventory.default().get(name)  # raises UnavailableError for an unknown node


def load_image(
    reference: str | None, platform: Platform | None = None, deadline: Deadline | None = None
) -> ImageFacts | None:
    """`deadline`: an imgcheck.deadline.Deadline bounding the whole read (--timeout), or None."""
    if not reference:
        return None
    from ..api import inspect_image
    from ..sources.read_options import ReadOptions

    return inspect_image(reference, ReadOptions(platform=platform, deadline=deadline))


def engine_findings(image: ImageFacts, node: NodeFacts | None) -> tuple[tuple[Finding, ...], str | None]:
    """Findings of the static check (the engine behind `imgcheck check`) for these facts.

    Calls the engine on the facts already read instead of api.check_image, which would read
    the image a second time. Guarded: triage works in a build without the engine.
    """
    if node is None:
        return (), "the static check needs node facts (--node or --node-facts)"
    from ..api import check_facts

    try:
        report = check_facts(image, [node], recommend=False)
    except ImgcheckError as exc:  # a broken matrix should not hide the triage result
        return (), f"the static check could not run: {exc}"
    return tuple(report.findings), None


def load_job(spec: str | None, image: str | None) -> JobFacts | None:
    """The launch spec's container for this job: the one running `image` when the spec has several."""
    if not spec:
        return None
    from ..job.parse import for_image, load_job_spec

    jobs = load_job_spec(spec)  # BadInputError / UnavailableError with one line, as `imgcheck check --job`
    chosen = for_image(jobs, image) if image else jobs
    found = chosen or jobs
    return found[0] if found else None


def fabric_versions(image: ImageFacts | None) -> dict[str, str | None]:
    """The image's copies of the fabric components, for the catalog's "another copy" note."""
    if image is None:
        return {}
    plugin = next((p for p in image.nccl_net_plugins if p.loaded), None)
    return {
        "libfabric": image.libfabric.version if image.libfabric else None,
        "ucx": image.ucx.version if image.ucx else None,
        "aws-ofi-nccl": plugin.version if plugin and (plugin.project or "").startswith("aws-ofi") else None,
    }


def triage(
    logs: list[str],
    *,
    image: str | None = None,
    job: str | None = None,
    node: str | None = None,
    node_facts: str | None = None,
    signatures: str | None = None,
    stdin: IO[bytes] | None = None,
    platform: Platform | None = None,
    deadline: Deadline | None = None,
) -> TriageReport:
    """Read the logs (files, or "-" for stdin), find the first failure and its cause candidates.

    With an image and/or node, the log is joined with their facts. Raises BadInputError for
    unreadable logs or bad signature data, UnavailableError when the image/node cannot be obtained.
    """
    if node and node_facts:
        raise UsageError("give either --node NAME or --node-facts FILE, not both")
    sigset = host_catalog.extend(load_signatures(signatures))  # + the host, CUDA and NCCL-cause catalogs
    scan = scan_logs(logs, sigset, stdin=stdin)  # logs first: a bad log fails fast, before a slow image pull
    job_f = load_job(job, image)
    node_f = load_node(node, node_facts)
    image_f = load_image(image, platform, deadline)
    report = decide(scan, sigset, image_f, node_f, job_f)
    nccl_v = nccl_in_use(image_f)
    report = dataclasses.replace(
        report,
        notes=report.notes
        + nccl_catalog.notes(scan.nccl_messages, nccl_v.version if nccl_v else None)
        + fabric_catalog.notes(scan.fabric_messages, fabric_versions(image_f))
        + host_catalog.notes(report),
    )
    join = None
    if image_f is not None or node_f is not None:
        found, why = engine_findings(image_f, node_f) if image_f is not None else ((), "no image given")
        join = JoinResult(
            image=image_f.reference if image_f else None,
            node=node_f.name if node_f else None,
            notes=join_notes(report, image_f, node_f, templates=dict(sigset.note_templates), job=job_f),
            engine_findings=found,
            engine_note=why,
        )
    return dataclasses.replace(report, join=join, tool_version=__version__)
