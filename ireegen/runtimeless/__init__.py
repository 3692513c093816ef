"""The runtimeless execution model: the compiled program's schedule, interpreted at emit time into plain C with a static arena."""
