"""Checking what was emitted: inputs that exercise a model, running VM modules, comparing outputs (the pieces parity shares), and emit's verification."""
