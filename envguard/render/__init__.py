"""Renderers: one module per command, turning its result into JSON, rich tables or Markdown."""
