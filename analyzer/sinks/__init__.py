"""Sinks: one module per output format."""
