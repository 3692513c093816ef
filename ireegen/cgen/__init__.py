"""Generating C: C names, the typed C API, the templates and the byte blocks, and the clash check over what was rendered."""
