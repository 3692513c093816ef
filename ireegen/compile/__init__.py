"""Compiling with iree-compile: the execution-model and target tables, the IREE workarounds and refusals, and the one compile path."""
