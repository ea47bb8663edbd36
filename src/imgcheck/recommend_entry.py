"""Library entry points behind `imgcheck recommend`, `imgcheck catalog` and `imgcheck diff` (the CLI only parses).

They read images through `api` and then recommend, so they sit above both: `api` itself uses `recommend` to
attach recommendations to a failed check.
"""

from __future__ import annotations

from .api import inspect_image
from .engine import REQUIRED_ROWS
from .errors import UsageError
from .matrix import Matrix, load_matrix
from .model.image import ImageFacts
from .model.node import NodeFacts
from .recommend.catalog import CatalogEntry, add_local, all_entries
from .recommend.diff import DiffResult, diff_images
from .recommend.recommend import RecommendResult, recommend
from .sources.read_options import ReadOptions


def _matrix(path: str | None) -> Matrix:
    return load_matrix(path, required=REQUIRED_ROWS)


def recommend_for(
    nodes: list[NodeFacts],
    *,
    like: str | None = None,
    framework: str | None = None,
    matrix_path: str | None = None,
    catalog_dir: str | None = None,
    options: ReadOptions = ReadOptions(),
) -> RecommendResult:
    """Clean catalog images for `nodes`; with `like`, ranked by closeness to that image, plus its node-side path."""
    nodes = list(nodes)
    if not nodes:
        raise UsageError("no nodes to recommend for: give --node NAME, --node-facts FILE or --fleet SELECTOR")
    matrix = _matrix(matrix_path)
    current = inspect_image(like, options) if like else None
    return recommend(nodes, matrix, current=current, framework=framework, catalog_dir=catalog_dir)


def catalog_add(
    references: list[str], *, catalog_dir: str | None = None, options: ReadOptions = ReadOptions()
) -> list[tuple[ImageFacts, str]]:
    """Inspect each image and store its facts in the local catalog; [(facts, path written)]."""
    out = []
    for reference in references:
        facts = inspect_image(reference, options)
        out.append((facts, add_local(facts, catalog_dir)))
    return out


def catalog_import(path: str, *, matrix_path: str | None = None, catalog_dir: str | None = None) -> list[CatalogEntry]:
    """Check every row of a JSON/YAML file, then store them in the local catalog; the entries as recommend sees them."""
    from .recommend.catalog import catalog_dir as default_dir
    from .recommend.catalog import file_name, imported_entry
    from .recommend.importing import read_import, store_rows

    matrix = _matrix(matrix_path)
    rows = read_import(path, matrix_path)  # all rows checked before any is written
    store_rows(rows, catalog_dir or default_dir(), path, file_name)
    return [imported_entry(row, matrix, imported_from=path) for row in rows]


def catalog_list(
    *, matrix_path: str | None = None, catalog_dir: str | None = None, local_only: bool = False
) -> tuple[list[CatalogEntry], list[str]]:
    entries, problems = all_entries(_matrix(matrix_path), catalog_dir)
    if local_only:
        entries = [e for e in entries if e.origin != "shipped"]
    return entries, problems


def diff_for(
    old: str, new: str, nodes: list[NodeFacts], *, matrix_path: str | None = None, options: ReadOptions = ReadOptions()
) -> DiffResult:
    nodes = list(nodes)
    matrix = _matrix(matrix_path)  # a broken matrix fails before any image is read
    return diff_images(inspect_image(old, options), inspect_image(new, options), nodes, matrix)
