"""Helpers for the recommend/catalog/diff tests: real Debian facts turned into torch-style images, facts files."""

from __future__ import annotations

import dataclasses
import json
import os

from engine_facts import matrix, node, real_facts, with_nccl  # noqa: F401  (tests/ is on sys.path)

from imgcheck.model.serde import to_dict

__all__ = ["matrix", "node", "node_file", "real_facts", "renamed", "with_nccl", "write_facts", "write_node"]

NODES_DIR = os.path.join(os.path.dirname(os.path.dirname(__file__)), "fixtures", "engine_nodes")


def node_file(name: str) -> str:
    return os.path.join(NODES_DIR, name + ".json")


def write_facts(path, facts) -> str:
    """An `inspect -o json`-shaped file, so the image can be given as facts:PATH to api/CLI."""
    with open(path, "w") as fh:
        json.dump({"schema_version": facts.schema_version, "image": to_dict(facts)}, fh)
    return str(path)


def write_node(path, facts) -> str:
    with open(path, "w") as fh:
        json.dump(to_dict(facts), fh)
    return str(path)


def renamed(facts, reference: str):
    return dataclasses.replace(facts, reference=reference)
