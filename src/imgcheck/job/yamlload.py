"""YAML documents whose mappings remember their line, so findings can point at the container they come from."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import yaml  # type: ignore[import-untyped]  # ships no type hints

from ..errors import BadInputError


class LineDict(dict[Any, Any]):
    line: int | None = None


class _Loader(yaml.SafeLoader):  # type: ignore[misc]  # SafeLoader is Any: yaml ships no type hints
    pass


def _construct_map(loader: Any, node: Any) -> Iterator[LineDict]:  # a yaml Loader and MappingNode
    data = LineDict()
    data.line = node.start_mark.line + 1
    yield data
    data.update(loader.construct_mapping(node))


_Loader.add_constructor("tag:yaml.org,2002:map", _construct_map)


def load_documents(text: str, path: str) -> list[Any]:
    try:
        return [d for d in yaml.load_all(text, Loader=_Loader) if d is not None]
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise BadInputError(f"{path}:{where} not valid YAML: {problem}") from None


def line_of(obj: object) -> int | None:
    return getattr(obj, "line", None)
