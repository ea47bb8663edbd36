"""The library API: everything the CLI and the service do is one call here."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from .fsutil import reading_input
from .model.image import ImageFacts
from .model.image_io import parse_image_facts
from .sources.digest_resolution import ResolvedDigest, without_client
from .sources.platform import DEFAULT_PLATFORM, Platform, PlatformMismatchError, require_platform
from .sources.read_options import ReadOptions
from .sources.resolve import open_source, parse_image_ref

if TYPE_CHECKING:  # the layer walk and the extractors are imported on a facts-cache miss only
    from .facts_cache import FactsCache
    from .job.model import JobFacts
    from .matrix import Matrix
    from .model.node import NodeFacts
    from .model.report import Report, Suppression
    from .sources.base import OpenedImage, Source
    from .view.cache import LayerCache


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

    from .extractors.identity import CACHE_NAMESPACE, LAYER_CACHE_NAMESPACE
    from .home import imgcheck_home

    return os.path.join(imgcheck_home(), "cache", kind), LAYER_CACHE_NAMESPACE if kind == "layers" else CACHE_NAMESPACE


def layer_cache(extra_wants: str = "") -> LayerCache:
    """The per-layer cache for the current extractors (`extra_wants`: what a source adds to their
    wants, e.g. its env file; entries indexed with other wants are another namespace)."""
    import os

    from .extractors.identity import LAYER_READ_VERSION
    from .view.cache import LayerCache
    from .view.file_index import FileIndexStore

    root, namespace = _cache_dir_and_namespace("layers")
    namespace += f"\n{extra_wants}" if extra_wants else ""
    cache: LayerCache | None = None
    if os.environ.get("IMGCHECK_CACHE_URL"):  # layers other replicas / CI runners already read
        from .shared_cache import SharedLayerCache, shared_store

        store = shared_store()
        if store is not None:
            cache = SharedLayerCache(root, namespace, store)
    cache = cache or LayerCache(root, namespace)
    # keyed by the blob and the tar walk only, not the wants: what lets a wants change re-read only wanted files
    cache.files = FileIndexStore(os.path.join(os.path.dirname(root), "files"), f"layer-read {LAYER_READ_VERSION}")
    return cache


def facts_cache() -> FactsCache:
    """The whole-image facts cache for the current extractors."""
    import os

    from .facts_cache import FactsCache

    if os.environ.get("IMGCHECK_CACHE_URL"):  # imported only then: a warm re-check stays light
        from .shared_cache import SharedFactsCache, shared_store

        store = shared_store()
        if store is not None:
            return SharedFactsCache(*_cache_dir_and_namespace("facts"), store)
    return FactsCache(*_cache_dir_and_namespace("facts"))


def inspect_image(reference: str, options: ReadOptions = ReadOptions()) -> ImageFacts:
    """Read an image without running it and return its RDMA/GPU userspace facts.

    A straight line: parse the reference once; resolve it to a digest where that needs no manifest
    (sources/digest_resolution.py); look the facts up once per digest; else open, read, store.
    `options.stats` (if given) records which layers were streamed and which came from the cache.
    """
    ref = parse_image_ref(reference)
    if ref.is_facts:
        saved = load_image_facts(ref.rest)
        require_platform(saved.platform, options.platform, reference)
        return saved
    cache = _FactsLookup(facts_cache(), options.platform, reference) if options.use_cache else None
    resolved = without_client(ref.registry, options) if cache is not None and ref.registry else None
    facts = cache.by_resolved(resolved) if cache is not None else None
    if facts is None:
        source = open_source(ref, options, resolved)
        try:
            if cache is not None and resolved is None:
                resolved = source.resolve_digest()  # a registry client's HEAD (None for files, the daemon)
                facts = cache.by_resolved(resolved)
            if facts is None:
                return _open_and_read(source, cache, resolved, options, reference)
        finally:
            source.close()
    if options.stats is not None:
        options.stats.facts_cached = True
    return facts


class _FactsLookup:
    """The whole-image facts cache for one read: each digest is looked up at most once."""

    def __init__(self, cache: FactsCache, platform: Platform | None, reference: str) -> None:
        self.cache, self.reference = cache, reference
        self.asked = str(platform) if platform else f"default {DEFAULT_PLATFORM}"

    def by_resolved(self, resolved: ResolvedDigest | None) -> ImageFacts | None:
        """What the reference's digest (a manifest's or an index's) gave for the platform asked."""
        return self.cache.get_resolved(resolved.digest, self.asked, self.reference) if resolved else None

    def by_image(self, image: OpenedImage) -> ImageFacts | None:
        """The facts of the opened image's own digest (read before under another reference)."""
        return self.cache.get(image.digest, image.platform, self.reference)

    def store(self, facts: ImageFacts) -> None:
        self.cache.put(facts)

    def link(self, resolved: ResolvedDigest, facts: ImageFacts) -> None:
        self.cache.put_resolved(resolved.digest, self.asked, facts)


def _open_and_read(
    source: Source, cache: _FactsLookup | None, resolved: ResolvedDigest | None, options: ReadOptions, reference: str
) -> ImageFacts:
    """Open the source (manifest and config, verified), then its facts from the cache or the layers."""
    image = source.open()
    require_platform(image.platform, options.platform, image.reference)  # every source: no silent other platform
    facts = cache.by_image(image) if cache is not None else None
    if facts is not None:
        if options.stats is not None:
            options.stats.facts_cached = True
    else:
        facts = _read_facts(image, options, reference)
        if cache is not None:
            cache.store(facts)
    if cache is not None and resolved:
        cache.link(resolved, facts)  # the next read of this reference needs no manifest
    return facts


def _read_facts(image: OpenedImage, options: ReadOptions, reference: str) -> ImageFacts:
    """Stream the layers (those not in the layer cache) and run the extractors."""
    from .extractors.assemble import build_facts, want_set
    from .sources.read_options import Limits
    from .view.image_env import env_want, with_env_from_view
    from .view.reader import read_view

    if not options.range_reads:
        image.read_range = None  # every layer whole: its diff_id checked too
    wants = env_want(want_set(), image.env_file)
    extra = image.env_file.path if image.env_file else ""
    view, _ = read_view(
        image,
        wants,
        limits=options.limits or Limits.from_env(),
        cache=layer_cache(extra) if options.use_cache else None,
        workers=options.workers,
        progress=options.progress,
        stats=options.stats,
    )
    return build_facts(view, with_env_from_view(image, view), reference)


def load_check_matrix(matrix_path: str | None = None) -> Matrix:
    """The compatibility matrix, validated, with every row the engine looks up."""
    from .engine import REQUIRED_ROWS
    from .matrix import load_matrix

    return load_matrix(matrix_path, required=REQUIRED_ROWS)


def _require_nodes(nodes: Iterable[NodeFacts]) -> list[NodeFacts]:
    from .errors import UsageError

    listed = list(nodes)
    if not listed:
        raise UsageError("no nodes to check against: give --node-facts FILE, --node NAME or --fleet SELECTOR")
    return listed


def check_facts(
    facts: ImageFacts,
    nodes: Iterable[NodeFacts],
    *,
    matrix: Matrix | None = None,
    suppressions: Iterable[Suppression] = (),
    recommend: bool = True,
    jobs: Iterable[JobFacts] = (),
) -> Report:
    """The engine over facts already read: a Report, with what to run instead when it fails.
    jobs: launch-spec containers (imgcheck.job) that run this image, checked with it."""
    import dataclasses

    from .engine import build_report

    checked = _require_nodes(nodes)
    matrix = matrix if matrix is not None else load_check_matrix()
    report = build_report(facts, checked, matrix, suppressions=tuple(suppressions), jobs=tuple(jobs))
    # engine-verified catalog images and the node-side path; not when only the launch (JOB-*) fails: no other
    # image fixes a launch spec's /dev/shm or devices
    image_errors = any(f.severity == "error" and not f.id.startswith("JOB-") and not f.assumes for f in report.findings)
    if recommend and report.verdict == "fail" and image_errors:
        from .recommend import recommendations_for_report

        report = dataclasses.replace(report, recommendations=recommendations_for_report(report, matrix, tuple(jobs)))
    return report


def check_image(
    reference: str,
    nodes: Iterable[NodeFacts],
    options: ReadOptions = ReadOptions(),
    *,
    matrix_path: str | None = None,
    suppressions: Iterable[Suppression] = (),
    prefer_platform: Platform | None = None,
    jobs: Iterable[JobFacts] = (),
) -> Report:
    """Predict whether the image's RDMA/NCCL/CUDA userspace works on `nodes` (NodeFacts); returns a Report.

    The matrix is loaded (and validated) before the image is read, so a broken matrix fails fast.
    `options.platform` must exist in the image (else PlatformMismatchError, exit 2). `prefer_platform` (the
    nodes' architecture) is picked when the image has it; otherwise the image's default platform is read and
    the engine reports the mismatch (PLATFORM-ARCH-MISMATCH) instead of refusing to check.
    """
    import dataclasses

    checked = _require_nodes(nodes)  # before any bytes are read
    matrix = load_check_matrix(matrix_path)
    if options.platform is None and prefer_platform is not None:
        try:
            facts = inspect_image(reference, dataclasses.replace(options, platform=prefer_platform))
        except PlatformMismatchError:
            facts = inspect_image(reference, options)
    else:
        facts = inspect_image(reference, options)
    return check_facts(facts, checked, matrix=matrix, suppressions=suppressions, jobs=jobs)


def check_nodes(
    nodes: Iterable[NodeFacts], *, matrix_path: str | None = None, suppressions: Iterable[Suppression] = ()
) -> Report:
    """`imgcheck node check`: the rules that need only node facts, plus the fleet comparison; a Report
    whose image is the node_only placeholder."""
    from .engine.evaluate import evaluate_node
    from .engine.node_only import NODE_ONLY_IMAGE
    from .engine.report import build_report

    checked = _require_nodes(nodes)
    matrix = load_check_matrix(matrix_path)
    return build_report(
        NODE_ONLY_IMAGE, checked, matrix, suppressions=tuple(suppressions), evaluator=evaluate_node, compare_nodes=True
    )
