"""The library API: everything the CLI and the service do is one call here."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .errors import BadInputError
from .fsutil import reading_input
from .model.image import ImageFacts
from .model.image_io import parse_image_facts
from .sources.platform import DEFAULT_PLATFORM, Platform, PlatformMismatchError, require_platform
from .sources.resolve import open_source, pinned_digest, registry_reference, split_scheme

if TYPE_CHECKING:  # the layer walk and the extractors are imported on a facts-cache miss only
    from .view.cache import LayerCache
    from .view.reader import ReadStats


def load_image_facts(path: str) -> ImageFacts:
    """Facts saved by `imgcheck inspect -o json` (the whole report or just its `image`)."""
    from . import safejson

    with reading_input(path, "an image facts JSON file (imgcheck inspect -o json)") as fh:
        doc = safejson.load(fh, path)
    if isinstance(doc, dict) and isinstance(doc.get("image"), dict):
        doc = doc["image"]
    return parse_image_facts(doc, path)  # a left-out fact is unknown, never absent


def _cache_dir_and_namespace(kind: str) -> tuple[str, str]:
    """Where a cache lives under $IMGCHECK_HOME, and what identifies its entries' content."""
    import os

    from .extractors.identity import CACHE_NAMESPACE
    from .home import imgcheck_home

    return os.path.join(imgcheck_home(), "cache", kind), CACHE_NAMESPACE


def layer_cache() -> LayerCache:
    """The per-layer cache for the current extractors."""
    import os

    from .view.cache import LayerCache

    if os.environ.get("IMGCHECK_CACHE_URL"):  # layers other replicas / CI runners already read
        from .shared_cache import SharedLayerCache, shared_store

        return SharedLayerCache(*_cache_dir_and_namespace("layers"), shared_store())
    return LayerCache(*_cache_dir_and_namespace("layers"))


def facts_cache():
    """The whole-image facts cache for the current extractors."""
    import os

    from .facts_cache import FactsCache

    if os.environ.get("IMGCHECK_CACHE_URL"):  # imported only then: a warm re-check stays light
        from .shared_cache import SharedFactsCache, shared_store

        return SharedFactsCache(*_cache_dir_and_namespace("facts"), shared_store())
    return FactsCache(*_cache_dir_and_namespace("facts"))


def inspect_image(reference: str, platform: Platform | None = None, *, use_cache: bool = True,
                  progress=None, stats: ReadStats | None = None, workers: int | None = None,
                  **source_options) -> ImageFacts:
    """Read an image without running it and return its RDMA/GPU userspace facts.

    `stats` (if given) records which layers were streamed and which came from the cache.
    """
    scheme, rest = split_scheme(reference)
    if scheme == "facts":
        saved = load_image_facts(rest)
        require_platform(saved.platform, platform, reference)
        return saved
    whole = facts_cache() if use_cache else None
    asked = str(platform) if platform else f"default {DEFAULT_PLATFORM}"
    pinned = pinned_digest(reference) if whole is not None else None
    facts = whole.get_resolved(pinned, asked, reference) if pinned else None  # checked before: no request
    if facts is None and whole is not None:
        top = _tag_digest_without_requests(reference, source_options)
        facts = whole.get_resolved(top, asked, reference) if top else None
        if top and facts is None:
            source_options = {**source_options, "tag_digest": top}  # the registry client need not ask again
    from_cache = facts is not None
    if facts is None:
        source = open_source(reference, platform=platform, **source_options)
        try:
            facts, from_cache = _via_source(
                source, whole, asked, reference, platform,
                lambda image: _read_facts(image, reference, use_cache, workers, progress, stats))
        finally:
            source.close()
    if stats is not None and from_cache:
        stats.facts_cached = True
    return facts


def _tag_digest_without_requests(reference: str, source_options: dict) -> str | None:
    """A registry tag's digest from one anonymous HEAD over http.client (sources/tag_head.py)."""
    ref = registry_reference(reference)
    if ref is None or ref.digest or "session" in source_options:  # a caller's session sends every request
        return None
    import os

    from .home import imgcheck_home
    from .sources.tag_head import anonymous_tag_digest

    return anonymous_tag_digest(ref, source_options.get("insecure_registries", ()),
                                os.path.join(imgcheck_home(), "cache", "hosts"))


def _via_source(source, whole, asked: str, reference: str, platform: Platform | None,
                read) -> tuple[ImageFacts, bool]:
    """Facts from the cache where the source's digests find them, else read(image): (facts, from cache)."""
    resolve = getattr(source, "resolved_digest", None) if whole is not None else None
    top = resolve() if resolve is not None else None  # a registry tag's digest: one HEAD
    facts = whole.get_resolved(top, asked, reference) if top else None
    if facts is not None:
        return facts, True  # no manifest or config fetched
    image = source.open()  # manifest and config, verified against their digests
    require_platform(image.platform, platform, image.reference)  # every source: no silent other platform
    facts = whole.get(image.digest, image.platform, reference) if whole is not None else None
    from_cache = facts is not None
    if facts is None:
        facts = read(image)
        if whole is not None:
            whole.put(facts)
    if top:
        whole.put_resolved(top, asked, facts)
    return facts, from_cache


def _read_facts(image, reference: str, use_cache: bool, workers, progress, stats) -> ImageFacts:
    """Stream the layers (those not in the layer cache) and run the extractors."""
    from .extractors.assemble import build_facts, want_set
    from .view.layer_index import Limits
    from .view.reader import read_view

    view, _ = read_view(image, want_set(), limits=Limits.from_env(), cache=layer_cache() if use_cache else None,
                        workers=workers, progress=progress, stats=stats)
    return build_facts(view, image, reference)


def load_check_matrix(matrix_path: str | None = None):
    """The compatibility matrix, validated, with every row the engine looks up."""
    from .engine import REQUIRED_ROWS
    from .matrix import load_matrix

    return load_matrix(matrix_path, required=REQUIRED_ROWS)


def _require_nodes(nodes) -> list:
    from .errors import UsageError

    nodes = list(nodes)
    if not nodes:
        raise UsageError("no nodes to check against: give --node-facts FILE, --node NAME or --fleet SELECTOR")
    return nodes


def check_facts(facts: ImageFacts, nodes, *, matrix=None, suppressions=(), recommend: bool = True, jobs=()):
    """The engine over facts already read: a Report, with what to run instead when it fails.
    jobs: launch-spec containers (imgcheck.job) that run this image, checked with it."""
    import dataclasses

    from .engine import build_report

    nodes = _require_nodes(nodes)
    matrix = matrix if matrix is not None else load_check_matrix()
    report = build_report(facts, nodes, matrix, suppressions=tuple(suppressions), jobs=tuple(jobs))
    # engine-verified catalog images and the node-side path; not when only the launch (JOB-*) fails: no other
    # image fixes a launch spec's /dev/shm or devices
    image_errors = any(f.severity == "error" and not f.id.startswith("JOB-") for f in report.findings)
    if recommend and report.verdict == "fail" and image_errors:
        from .recommend import recommendations_for_report

        report = dataclasses.replace(report, recommendations=recommendations_for_report(report, matrix))
    return report


def check_image(reference: str, nodes, *, platform: Platform | None = None, matrix_path: str | None = None,
                suppressions=(), prefer_platform: Platform | None = None, jobs=(), **inspect_options):
    """Predict whether the image's RDMA/NCCL/CUDA userspace works on `nodes` (NodeFacts); returns a Report.

    The matrix is loaded (and validated) before the image is read, so a broken matrix fails fast.
    `platform` must exist in the image (else PlatformMismatchError, exit 2). `prefer_platform` (the nodes'
    architecture) is picked when the image has it; otherwise the image's default platform is read and the
    engine reports the mismatch (PLATFORM-ARCH-MISMATCH) instead of refusing to check.
    `inspect_options` go to inspect_image (progress, use_cache, insecure_registries, ...).
    """
    nodes = _require_nodes(nodes)  # before any bytes are read
    matrix = load_check_matrix(matrix_path)
    if platform is None and prefer_platform is not None:
        try:
            facts = inspect_image(reference, platform=prefer_platform, **inspect_options)
        except PlatformMismatchError:
            facts = inspect_image(reference, platform=None, **inspect_options)
    else:
        facts = inspect_image(reference, platform=platform, **inspect_options)
    return check_facts(facts, nodes, matrix=matrix, suppressions=suppressions, jobs=jobs)


def check_nodes(nodes, *, matrix_path: str | None = None, suppressions=()):
    """`imgcheck node check`: the rules that need only node facts, plus the fleet comparison; a Report
    whose image is the node_only placeholder."""
    from .engine.evaluate import evaluate_node
    from .engine.node_only import NODE_ONLY_IMAGE
    from .engine.report import build_report

    nodes = _require_nodes(nodes)
    matrix = load_check_matrix(matrix_path)
    return build_report(NODE_ONLY_IMAGE, nodes, matrix, suppressions=tuple(suppressions), evaluator=evaluate_node,
                        compare_nodes=True)
