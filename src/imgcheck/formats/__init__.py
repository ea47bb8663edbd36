"""Renderers: pure functions from facts or a report to text."""
