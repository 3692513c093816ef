"""The bytes of a util.buffer.constant: its dense attributes, as the
bindings read them (bf16 by hand, as they cannot)."""

from __future__ import annotations

import re

import numpy as np

_SPLIT_TOKENS = re.compile(r'"[^"]*"|[<\[({]|[>\])}]|,')


def _split_top_level(text: str) -> list:
    """Splits `a, b<c, d>, "e,f"` at the commas outside brackets and quotes.
    A quoted string (megabytes of hex weights) is skipped in one regex step."""
    parts, depth, start = [], 0, 0
    for m in _SPLIT_TOKENS.finditer(text):
        ch = m.group()
        if ch in "<[({":
            depth += 1
        elif ch in ">])}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start : m.start()])
            start = m.end()
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def constant_bytes(interp, op):
    """The bytes of a util.buffer.constant: a dense attribute or a
    #util.composite of them."""
    from iree.compiler import ir

    attrs = op.attributes
    alignment = int(str(attrs["alignment"]).split(":")[0]) if "alignment" in attrs else 64
    text = str(attrs["value"])
    if text.startswith("#util.composite<"):
        inner = text[len("#util.composite<") : -1]
        total_text, items_text = inner.split(",", 1)
        total = int(total_text.strip().split("x")[0])
        items = _split_top_level(items_text.strip()[1:-1])
    else:
        total, items = None, [text]
    chunks = []
    for item in items:
        if not item.startswith("dense<"):
            interp.fail(op, f"a constant stored as `{item[:40]}` (external or resource data is not supported)")
        bf16 = _bf16_constant(item)
        if bf16 is not None:
            chunks.append(bf16)
            continue
        array = np.array(ir.DenseElementsAttr(ir.Attribute.parse(item, op.context)))
        if array.dtype == object:
            interp.fail(op, f"a constant of element type the bindings cannot read ({item.rsplit(':', 1)[-1].strip()})")
        chunks.append(array.astype(np.uint8) if array.dtype == np.bool_ else array)
    data = b"".join(c.tobytes() for c in chunks)
    if total is not None and len(data) != total:
        interp.fail(op, f"a constant of {len(data)} bytes where {total} were declared")
    return data, alignment


_BF16_DENSE = re.compile(r"dense<(.*)>\s*:\s*(?:tensor|vector)<((?:\d+x)*)bf16>", re.S)
_BF16_TOKEN = re.compile(r"0x[0-9A-Fa-f]+|[-+]?(?:inf|nan|\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)")


def _bf16_constant(item: str):
    """The elements of a dense bf16 attribute (which the Python bindings
    cannot read) as uint16 bits: from MLIR's hex blob, or from its elements,
    printed as floats or, where a float would not round-trip, as bits."""
    m = _BF16_DENSE.fullmatch(item.strip())
    if m is None:
        return None
    body, dims = m.group(1).strip(), m.group(2)
    count = int(np.prod([int(d) for d in dims.split("x") if d])) if dims else 1
    if body.startswith('"0x'):
        bits = np.frombuffer(bytes.fromhex(body.strip('"')[2:]), dtype="<u2")
    else:
        values = []
        for token in _BF16_TOKEN.findall(body):
            if token.lower().startswith("0x"):
                values.append(int(token, 16))
            else:
                f32 = int(np.array(float(token), np.float32).view(np.uint32))
                values.append((f32 + 0x7FFF + ((f32 >> 16) & 1)) >> 16 if token.lower() != "nan" else 0x7FC0)
        bits = np.array(values, dtype=np.uint16)
    if bits.size == 1 and count != 1:
        bits = np.full(count, bits[0], dtype=np.uint16)
    return bits if bits.size == count else None
