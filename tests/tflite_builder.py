"""Small .tflite files for the tests, written with the flatbuffers package
and the generated builders of the `tflite` package (no TensorFlow).

    b = TFLiteBuilder()
    x = b.tensor("x", [1, 4], "int8", scale=0.1, zero_point=-3)
    w = b.tensor("w", [2, 4], "int8", data=..., scale=[0.01, 0.02], axis=0)
    y = b.tensor("y", [1, 2], "int8", scale=0.2, zero_point=1)
    b.op("FULLY_CONNECTED", [x, w, -1], [y], "FullyConnectedOptions", FusedActivationFunction=1)
    data = b.build([x], [y])
"""

from __future__ import annotations

import flatbuffers
import numpy as np
import tflite
from tflite.utils import BUILTIN_OPCODE2NAME

TYPES = {"float32": 0, "int32": 2, "uint8": 3, "int64": 4, "int8": 9, "int16": 7}
OPCODES = {name: code for code, name in BUILTIN_OPCODE2NAME.items()}


class TFLiteBuilder:
    def __init__(self):
        self.tensors = []  # (name, shape, dtype, buffer index, quantization)
        self.buffers = [b""]  # buffer 0 is the empty one, as converters write it
        self.ops = []  # (opcode index, inputs, outputs, options)
        self.opcodes = []
        self.more = {}  # subgraph number (1, 2, ..) -> (tensors, ops), as for subgraph 0

    def tensor(self, name, shape, dtype, data=None, scale=None, zero_point=None, axis=0, subgraph=0) -> int:
        buffer = 0
        if data is not None:
            self.buffers.append(np.ascontiguousarray(np.asarray(data, dtype=dtype).reshape(shape)).tobytes())
            buffer = len(self.buffers) - 1
        q = None
        if scale is not None:
            scales = np.atleast_1d(np.asarray(scale, np.float32))
            zeros = np.atleast_1d(np.asarray(0 if zero_point is None else zero_point, np.int64))
            q = (scales, np.broadcast_to(zeros, scales.shape).copy(), axis)
        tensors = self._lists(subgraph)[0]
        tensors.append((name, list(shape), dtype, buffer, q))
        return len(tensors) - 1

    def op(self, name, inputs, outputs, options=None, subgraph=0, **fields) -> None:
        code = OPCODES[name]
        if code not in self.opcodes:
            self.opcodes.append(code)
        self._lists(subgraph)[1].append((self.opcodes.index(code), list(inputs), list(outputs), (options, fields)))

    def _lists(self, subgraph: int) -> tuple:
        return (self.tensors, self.ops) if subgraph == 0 else self.more.setdefault(subgraph, ([], []))

    def build(self, inputs, outputs, more_io=None) -> bytes:
        """The model; `more_io` maps a further subgraph's number to its (inputs, outputs)."""
        b = flatbuffers.Builder(1024)
        buffers = []
        for data in self.buffers:
            vec = b.CreateNumpyVector(np.frombuffer(data, np.uint8)) if data else None
            tflite.BufferStart(b)
            if vec is not None:
                tflite.BufferAddData(b, vec)
            buffers.append(tflite.BufferEnd(b))
        subgraphs = []
        for k, (tensor_list, op_list) in [(0, (self.tensors, self.ops)), *sorted(self.more.items())]:
            tensors = [self._tensor(b, t) for t in tensor_list]
            ops = [self._op(b, *o) for o in op_list]
            io = (inputs, outputs) if k == 0 else (more_io or {}).get(k, ([], []))
            subgraphs.append(self._subgraph(b, tensors, ops, *io))
        codes = []
        for code in self.opcodes:
            tflite.OperatorCodeStart(b)
            tflite.OperatorCodeAddDeprecatedBuiltinCode(b, min(code, 127))
            tflite.OperatorCodeAddBuiltinCode(b, code)
            tflite.OperatorCodeAddVersion(b, 1)
            codes.append(tflite.OperatorCodeEnd(b))
        vectors = {
            "OperatorCodes": codes,
            "Subgraphs": subgraphs,
            "Buffers": buffers,
        }
        made = {k: _vector(b, getattr(tflite, f"ModelStart{k}Vector"), v) for k, v in vectors.items()}
        tflite.ModelStart(b)
        tflite.ModelAddVersion(b, 3)
        for k, v in made.items():
            getattr(tflite, f"ModelAdd{k}")(b, v)
        b.Finish(tflite.ModelEnd(b), file_identifier=b"TFL3")
        return bytes(b.Output())

    def _tensor(self, b, t):
        name, shape, dtype, buffer, q = t
        name_off = b.CreateString(name)
        shape_off = b.CreateNumpyVector(np.asarray(shape, np.int32))
        q_off = None
        if q is not None:
            scales, zeros, axis = q
            s = b.CreateNumpyVector(scales)
            z = b.CreateNumpyVector(zeros)
            tflite.QuantizationParametersStart(b)
            tflite.QuantizationParametersAddScale(b, s)
            tflite.QuantizationParametersAddZeroPoint(b, z)
            tflite.QuantizationParametersAddQuantizedDimension(b, axis)
            q_off = tflite.QuantizationParametersEnd(b)
        tflite.TensorStart(b)
        tflite.TensorAddShape(b, shape_off)
        tflite.TensorAddType(b, TYPES[dtype])
        tflite.TensorAddBuffer(b, buffer)
        tflite.TensorAddName(b, name_off)
        if q_off is not None:
            tflite.TensorAddQuantization(b, q_off)
        return tflite.TensorEnd(b)

    def _op(self, b, opcode, inputs, outputs, options):
        kind, fields = options
        opts = None
        if kind is not None:
            getattr(tflite, f"{kind}Start")(b)
            for field, value in fields.items():
                getattr(tflite, f"{kind}Add{field}")(b, value)
            opts = getattr(tflite, f"{kind}End")(b)
        ins = b.CreateNumpyVector(np.asarray(inputs, np.int32))
        outs = b.CreateNumpyVector(np.asarray(outputs, np.int32))
        tflite.OperatorStart(b)
        tflite.OperatorAddOpcodeIndex(b, opcode)
        tflite.OperatorAddInputs(b, ins)
        tflite.OperatorAddOutputs(b, outs)
        if opts is not None:
            tflite.OperatorAddBuiltinOptionsType(b, getattr(tflite.BuiltinOptions, kind))
            tflite.OperatorAddBuiltinOptions(b, opts)
        return tflite.OperatorEnd(b)

    def _subgraph(self, b, tensors, ops, inputs, outputs):
        t = _vector(b, tflite.SubGraphStartTensorsVector, tensors)
        o = _vector(b, tflite.SubGraphStartOperatorsVector, ops)
        i = b.CreateNumpyVector(np.asarray(inputs, np.int32))
        out = b.CreateNumpyVector(np.asarray(outputs, np.int32))
        name = b.CreateString("main")
        tflite.SubGraphStart(b)
        tflite.SubGraphAddTensors(b, t)
        tflite.SubGraphAddOperators(b, o)
        tflite.SubGraphAddInputs(b, i)
        tflite.SubGraphAddOutputs(b, out)
        tflite.SubGraphAddName(b, name)
        return tflite.SubGraphEnd(b)


def _vector(b, start, offsets):
    start(b, len(offsets))
    for off in reversed(offsets):
        b.PrependUOffsetTRelative(off)
    return b.EndVector()
