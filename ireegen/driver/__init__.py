"""The emit driver's stages: the checked request, loading, the backends of
the execution-model families, verification, the cache and tuning.  The
driver itself, which runs them in order, is `ireegen/emit.py`."""
