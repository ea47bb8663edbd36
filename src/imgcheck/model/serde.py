"""Dataclass <-> JSON-compatible dict conversion driven by type hints.

One converter serves image facts, node facts and reports, so the JSON contract and the
dataclasses cannot drift apart.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Any, TypeVar, cast, get_args, get_origin, get_type_hints

from ..errors import BadInputError

T = TypeVar("T")


def to_dict(obj: Any) -> Any:
    """Convert a dataclass tree to plain JSON types (tuples become lists).

    A dataclass with a `to_json()` method chooses its own shape (Evidence keeps its schema 2 keys).
    """
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        if hasattr(obj, "to_json"):
            return obj.to_json()
        return {f.name: to_dict(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, (list, tuple)):
        return [to_dict(v) for v in obj]
    if isinstance(obj, dict):
        return {str(k): to_dict(v) for k, v in obj.items()}
    return obj


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    if cls not in _HINTS:
        _HINTS[cls] = get_type_hints(cls)
    return _HINTS[cls]


def from_dict(cls: type[T], data: Any, where: str = "") -> T:
    """Build ``cls`` from JSON data; unknown keys are ignored, missing optional keys are None.

    Raises BadInputError naming the offending field when a value has the wrong shape.
    """
    return cast(T, _convert(cls, data, where or cls.__name__))


def _convert(tp: Any, value: Any, where: str) -> Any:
    origin = get_origin(tp)
    if tp is Any:
        return value
    if origin in (typing.Union, types.UnionType):
        args = [a for a in get_args(tp) if a is not type(None)]
        if value is None:
            return None
        errors = []
        for arg in args:
            try:
                return _convert(arg, value, where)
            except BadInputError as exc:
                errors.append(str(exc))
        raise BadInputError(errors[0] if errors else f"{where}: unexpected value")
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):  # a hint is a class, never an instance
        if not isinstance(value, dict):
            raise BadInputError(f"{where}: expected an object, got {type(value).__name__}")
        kwargs = {}
        hints = _hints(tp)
        for f in dataclasses.fields(tp):
            if f.name in value:
                kwargs[f.name] = _convert(hints[f.name], value[f.name], f"{where}.{f.name}")
            elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                kwargs[f.name] = None
        return tp(**kwargs)
    if origin is tuple:
        if not isinstance(value, (list, tuple)):
            raise BadInputError(f"{where}: expected a list, got {type(value).__name__}")
        (item_tp, *_rest) = get_args(tp)
        return tuple(_convert(item_tp, v, f"{where}[{i}]") for i, v in enumerate(value))
    if origin is dict or tp is dict:
        if not isinstance(value, dict):
            raise BadInputError(f"{where}: expected an object, got {type(value).__name__}")
        kv = get_args(tp)
        vt = kv[1] if len(kv) == 2 else Any
        return {str(k): _convert(vt, v, f"{where}.{k}") for k, v in value.items()}
    if tp is bool:
        if not isinstance(value, bool):
            raise BadInputError(f"{where}: expected true or false, got {value!r}")
        return value
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise BadInputError(f"{where}: expected an integer, got {value!r}")
        return value
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise BadInputError(f"{where}: expected a number, got {value!r}")
        return float(value)
    if tp is str:
        if not isinstance(value, str):
            raise BadInputError(f"{where}: expected a string, got {value!r}")
        return value
    raise BadInputError(f"{where}: unsupported type {tp!r}")
