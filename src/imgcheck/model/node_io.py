"""Reading and writing node facts files (`imgcheck node probe` output, or written by hand)."""

from __future__ import annotations

import dataclasses
import json

from .. import safejson
from ..errors import BadInputError
from ..fsutil import reading_input
from .bounded_numbers import first_bad_version
from .location import KINDS, Location
from .node import GPU_CLASSES, NODE_SCHEMA_VERSION, NodeFacts, kept_cmdline
from .serde import from_dict, to_dict


def parse_node_facts(doc: object, where: str, origin: Location | None = None) -> NodeFacts:
    """Node facts from parsed JSON. A missing schema_version means the current one.

    origin: where the caller read them (default: "node facts WHERE"); it locates every fact the
    document's own `sources` (a probe's record of the files it read) does not.
    """
    if not isinstance(doc, dict):
        raise BadInputError(f"{where}: node facts must be a JSON object")
    version = doc.get("schema_version", NODE_SCHEMA_VERSION)
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise BadInputError(f"{where}: schema_version must be a positive integer, got {version!r}")
    if version > NODE_SCHEMA_VERSION:
        raise BadInputError(
            f"{where}: node facts schema_version {version} is newer than this imgcheck "
            f"understands ({NODE_SCHEMA_VERSION}); upgrade imgcheck"
        )
    if not isinstance(doc.get("name"), str) or not doc["name"].strip():
        raise BadInputError(f"{where}: node facts need a non-empty 'name'")
    facts = from_dict(
        NodeFacts, {**doc, "schema_version": version, "origin": None}, where=where
    )  # the reader's origin, never the file's
    for fact, location in facts.sources.items():
        if location.kind not in KINDS:
            raise BadInputError(
                f"{where}: sources.{fact}.kind must be one of {', '.join(KINDS)}, got {location.kind!r}"
            )
    facts = dataclasses.replace(facts, origin=origin or Location.described(f"node facts {where}"))
    bad = first_bad_version(facts, where)
    if bad is not None:
        raise BadInputError(bad)
    for i, gpu in enumerate(facts.gpu.gpus):
        if gpu.gpu_class is not None and gpu.gpu_class not in GPU_CLASSES:
            raise BadInputError(
                f"{where}: gpu.gpus[{i}].gpu_class must be one of {', '.join(GPU_CLASSES)}, got {gpu.gpu_class!r}"
            )
    for key, value in (facts.kernel.config or {}).items():
        if value == "":
            raise BadInputError(f"{where}: kernel.config.{key} is empty (use y, m, n or the option's value)")
    if facts.kernel.cmdline:  # a file from before the probe kept only these: the rest never reaches a report
        kept, dropped = kept_cmdline(facts.kernel.cmdline)
        if dropped:
            facts = dataclasses.replace(facts, kernel=dataclasses.replace(facts.kernel, cmdline=kept))
    return facts


def load_node_facts(path: str) -> NodeFacts:
    try:
        with reading_input(path, "a node facts JSON file") as fh:
            doc = safejson.load(fh, path)  # depth-bounded (hostile input)
    except (ValueError, UnicodeDecodeError) as exc:
        raise BadInputError(f"{path}: not valid JSON ({exc})") from None
    return parse_node_facts(doc, path, Location.described(f"node facts file {path}"))


def dump_node_facts(facts: NodeFacts) -> str:
    return json.dumps(to_dict(facts), indent=2, sort_keys=False) + "\n"
