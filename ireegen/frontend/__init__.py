"""Reading a model: MLIR or ONNX in, parsed MLIR and its typed signature out."""
