"""Renderers: they only format what the engine, the outcome and the sweep return."""
