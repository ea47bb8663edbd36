"""The compatibility matrix: catalogs and rule texts shipped as data, with a schema, version and digest."""

from .load import DEFAULT_LOCATION, Matrix, load_matrix, read_files
from .schema import validate_files

__all__ = ["DEFAULT_LOCATION", "Matrix", "load_matrix", "read_files", "validate_files"]
