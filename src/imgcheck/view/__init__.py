"""The image's merged filesystem, reduced to the paths extractors asked for."""
