"""Base-image catalog: the shipped rows (compat matrix) and the local catalog of images a team inspected.

The local catalog lives under $IMGCHECK_HOME/catalog/, one JSON file per (reference, digest), written
atomically; it stores the full ImageFacts, so candidates from it are judged on what was actually read.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ..errors import BadInputError
from ..fsutil import atomic_write
from ..home import imgcheck_home
from ..matrix import Matrix
from ..model.image import IMAGE_SCHEMA_VERSION, ImageFacts
from ..model.image_io import parse_image_facts
from ..model.serde import to_dict
from .convert import CATALOG_TABLES, NotCheckable, facts_of_row, rdma_release, reference_of
from .summary import Summary, summary_of_facts, summary_of_row

LOCAL_SCHEMA_VERSION = 1


@dataclass(frozen=True)
class CatalogEntry:
    reference: str
    summary: Summary
    origin: str  # "shipped" (compat matrix row) | "local" (inspected by `catalog add`) | "imported" (`catalog import`)
    confidence: str  # of the facts: the row's confidence, or "verified" for inspected images
    source: str | None = None
    digest: str | None = None
    release: str | None = None  # NGC month release (e.g. "24.05") or tag; orders "newest"
    readings: tuple[ImageFacts, ...] = ()  # facts the engine checks (several when a shipped row leaves one open)
    not_checkable: str | None = None  # why the engine cannot judge it (then it is never recommended)
    added_at: str | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)


def shipped_entries(matrix: Matrix) -> list[CatalogEntry]:
    entries = []
    rows = [(table, row) for table in CATALOG_TABLES for row in matrix.rows(table)]  # a --matrix without one: none
    for table, row in rows:
        rel = rdma_release(matrix, row["rdma_core"]) if row.get("rdma_core") else None
        try:
            readings, why = tuple(facts_of_row(row, matrix, f"compat_matrix/catalogs/{table}.json")), None
        except NotCheckable as exc:
            readings, why = (), str(exc)
        entries.append(
            CatalogEntry(
                reference=reference_of(row),
                summary=summary_of_row(row, rel["pabi"] if rel else None),
                origin="shipped",
                confidence=row["confidence"],
                source=row["source"] if isinstance(row["source"], str) else "; ".join(row["source"]),
                release=row["release"],
                readings=readings,
                not_checkable=why,
                notes=(row["note"],) if row.get("note") else (),
            )
        )
    return entries


def catalog_dir() -> str:
    return os.path.join(imgcheck_home(), "catalog")


def file_name(reference: str, digest: str | None) -> str:
    key = f"{reference}\n{digest or ''}".encode()
    return hashlib.sha256(key).hexdigest()[:32] + ".json"


def tag_of(reference: str) -> str | None:
    ref = reference.split("@", 1)[0]
    last = ref.rsplit("/", 1)[-1]
    return last.split(":", 1)[1] if ":" in last else None


def local_entry(facts: ImageFacts, added_at: str | None = None) -> CatalogEntry:
    return CatalogEntry(
        reference=facts.reference,
        summary=summary_of_facts(facts),
        origin="local",
        confidence="verified",
        source=f"inspected by imgcheck ({facts.reference})",
        digest=facts.digest,
        release=tag_of(facts.reference),
        readings=(facts,),
        added_at=added_at,
        notes=facts.notes,
    )


def add_local(facts: ImageFacts, directory: str | None = None) -> str:
    """Store inspected facts, keyed by reference + digest (re-adding the same image replaces its entry)."""
    directory = directory or catalog_dir()
    os.makedirs(directory, exist_ok=True)
    doc = {
        "schema_version": LOCAL_SCHEMA_VERSION,
        "reference": facts.reference,
        "digest": facts.digest,
        "added_at": datetime.now(UTC).replace(microsecond=0).isoformat(),
        "facts": to_dict(facts),
    }
    path = os.path.join(directory, file_name(facts.reference, facts.digest))
    atomic_write(path, json.dumps(doc, indent=1, sort_keys=True) + "\n")
    return path


def imported_entry(
    row: dict[str, Any], matrix: Matrix, added_at: str | None = None, imported_from: str | None = None
) -> CatalogEntry:
    """A row a team imported (`imgcheck catalog import`): judged like a shipped row, from the facts it states."""
    rel = rdma_release(matrix, row["rdma_core"]) if row.get("rdma_core") else None
    try:
        readings, why = tuple(facts_of_row(row, matrix, "a `catalog import` row")), None
    except NotCheckable as exc:
        readings, why = (), str(exc)
    notes = tuple(n for n in (row.get("note"), f"imported from {imported_from}" if imported_from else None) if n)
    return CatalogEntry(
        reference=reference_of(row),
        summary=summary_of_row(row, rel["pabi"] if rel else None),
        origin="imported",
        confidence=row["confidence"],
        source=row["source"],
        release=row["release"],
        readings=readings,
        not_checkable=why,
        added_at=added_at,
        notes=notes,
    )


def _read_local(path: str, matrix: Matrix | None = None) -> CatalogEntry:
    try:
        with open(path, "rb") as fh:
            doc = json.load(fh)
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        raise BadInputError(f"{path}: not a readable catalog entry ({exc})") from None
    if isinstance(doc, dict) and isinstance(doc.get("row"), dict) and doc.get("schema_version") == LOCAL_SCHEMA_VERSION:
        if matrix is None:
            from ..engine import REQUIRED_ROWS
            from ..matrix import load_matrix

            matrix = load_matrix(required=REQUIRED_ROWS)
        row = doc["row"]
        if not isinstance(row.get("image"), str) or not row.get("release") or not row.get("confidence"):
            raise BadInputError(f"{path}: imported catalog row lacks image/release/confidence")
        return imported_entry(row, matrix, added_at=doc.get("added_at"), imported_from=doc.get("imported_from"))
    if not isinstance(doc, dict) or not isinstance(doc.get("facts"), dict):
        raise BadInputError(f"{path}: not a catalog entry (no 'facts' object)")
    version = doc.get("schema_version")
    facts_version = doc["facts"].get("schema_version", IMAGE_SCHEMA_VERSION)
    if version != LOCAL_SCHEMA_VERSION or not isinstance(facts_version, int) or facts_version > IMAGE_SCHEMA_VERSION:
        raise BadInputError(
            f"{path}: catalog entry schema {version!r}/{facts_version!r} is not one this imgcheck reads"
        )
    # a left-out fact (an entry edited by hand) is unknown, never absent
    return local_entry(parse_image_facts(doc["facts"], path), added_at=doc.get("added_at"))


def local_entries(directory: str | None = None, matrix: Matrix | None = None) -> tuple[list[CatalogEntry], list[str]]:
    """(entries, problems): an unreadable file is reported and skipped, so one bad file never hides the rest."""
    directory = directory or catalog_dir()
    if not os.path.isdir(directory):
        return [], []
    entries, problems = [], []
    try:
        names = sorted(os.listdir(directory))
    except OSError as exc:
        return [], [f"{directory}: {exc.strerror}"]
    for name in names:
        if name.startswith(".") or not name.endswith(".json"):
            continue  # atomic_write's temporary files start with a dot
        try:
            entries.append(_read_local(os.path.join(directory, name), matrix))
        except BadInputError as exc:
            problems.append(str(exc))
    entries.sort(key=lambda e: (e.reference, e.digest or ""))
    return entries, problems


def all_entries(matrix: Matrix, directory: str | None = None) -> tuple[list[CatalogEntry], list[str]]:
    """Local entries first (inspected facts beat published ones), then the shipped rows."""
    local, problems = local_entries(directory, matrix)
    return local + shipped_entries(matrix), problems
