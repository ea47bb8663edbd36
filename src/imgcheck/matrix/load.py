"""Loading the matrix into lookups the engine uses. A matrix that fails validation is refused."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Set
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from ..errors import BadInputError
from ..model.report import MatrixInfo
from .files import digest_of, packaged_root, read_tree
from .schema import RowKey, validate_files

DEFAULT_LOCATION = "imgcheck/data/compat_matrix (inside the installed package)"


@dataclass(frozen=True)
class Matrix:
    version: str
    digest: str
    location: str
    tables: dict[str, tuple[dict[str, Any], ...]] = field(default_factory=dict)
    # Lookups derived from the tables, built on first use: the engine asks the same tables thousands of times per
    # fleet or test run. Not a field anyone passes; dataclasses.replace() starts a new one.
    _memo: dict[Any, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    def info(self) -> MatrixInfo:
        return MatrixInfo(version=self.version, digest=self.digest)

    def rows(self, table: str) -> tuple[dict[str, Any], ...]:
        return self.tables.get(table, ())

    def derived(self, name: str, build: Callable[[Matrix], Any]) -> Any:
        """build(self), computed once per matrix (the tables do not change after loading)."""
        key = ("derived", name)
        if key not in self._memo:
            self._memo[key] = build(self)
        return self._memo[key]

    def _index(self, table: str, column: str) -> dict[Any, tuple[dict[str, Any], ...]] | None:
        """Rows by their value in one column, in table order; None when a value there cannot be a dict key."""
        key = ("index", table, column)
        if key not in self._memo:
            self._memo[key] = _index_rows(self.rows(table), column)
        found: dict[Any, tuple[dict[str, Any], ...]] | None = self._memo[key]
        return found

    def row(self, table: str, **match: Any) -> dict[str, Any] | None:
        candidates = self.rows(table)
        if match:
            column, value = next(iter(match.items()))
            index = self._index(table, column)
            if index is not None:
                try:
                    candidates = index.get(value, ())
                except TypeError:  # an unhashable value asked for: no indexed row equals it
                    candidates = ()
        for row in candidates:
            if all(row.get(k) == v for k, v in match.items()):
                return row
        return None

    def need(self, table: str, **match: Any) -> dict[str, Any]:
        row = self.row(table, **match)
        if row is None:  # validate() checks the engine's needs, so this means a matrix edited after loading
            raise BadInputError(f"compat matrix {self.location}: no {table} row {match}")
        return row

    def rule(self, rule_id: str) -> dict[str, Any]:
        return self.need("rules", id=rule_id)

    def threshold(self, key: str) -> Any:
        return self.need("thresholds", key=key)["value"]


def _index_rows(rows: tuple[dict[str, Any], ...], column: str) -> dict[Any, tuple[dict[str, Any], ...]] | None:
    index: dict[Any, list[dict[str, Any]]] = {}
    for row in rows:
        try:
            index.setdefault(row.get(column), []).append(row)
        except TypeError:  # a list or dict value: the caller scans instead
            return None
    return {value: tuple(found) for value, found in index.items()}


def _build(files: dict[str, bytes], location: str, required: Mapping[str, Set[RowKey]] | None) -> Matrix:
    problems = validate_files(files, required)
    if problems:
        more = f" (and {len(problems) - 1} more; run `imgcheck matrix validate`)" if len(problems) > 1 else ""
        raise BadInputError(f"compat matrix {location} is invalid: {problems[0]}{more}")
    schema = json.loads(files["schema.json"])
    manifest = json.loads(files["matrix.json"])
    tables = {name: tuple(json.loads(files[spec["file"]])["rows"]) for name, spec in schema["tables"].items()}
    return Matrix(version=manifest["version"], digest=digest_of(files), location=location, tables=tables)


def read_files(path: str | None = None) -> tuple[dict[str, bytes], str]:
    if path is None:
        return read_tree(packaged_root()), DEFAULT_LOCATION
    return read_tree(path), path


@lru_cache(maxsize=1)
def _packaged(required_key: tuple[tuple[str, tuple[RowKey, ...]], ...]) -> Matrix:
    files, location = read_files(None)
    return _build(files, location, {t: set(keys) for t, keys in required_key})


def load_matrix(path: str | None = None, required: Mapping[str, Set[RowKey]] | None = None) -> Matrix:
    """The shipped matrix (cached), or the one in directory `path`."""
    if path is None:
        key = tuple(sorted((t, tuple(sorted(keys, key=str))) for t, keys in (required or {}).items()))
        return _packaged(key)
    files, location = read_files(path)
    return _build(files, location, required)
