"""Extractors turn the kept files of an image into facts. Each module declares WANTS and reads a FileView."""
