"""The big read-only bytes of an output directory (the runtimeless constants,
the vmfb module) as a source file, in the form `--data-format` chose:

- asm: NAME_....S, whose `.incbin` reads the bytes from a binary file beside
  it when it is assembled, so the C compiler never parses them (what that
  saves in compile time and memory: docs/weights.md);
- c: a C array of hex literals, for toolchains without a GNU-style assembler
  step (MSVC, or by choice).

Both forms define the same symbols, with the same alignment, in read-only
data (flash on firmware), so the headers and the C code that use them are
the same either way.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .c_api import c_byte_block
from .render import render

ASM_TEMPLATE = "data_incbin.S.j2"


@dataclass(frozen=True)
class DataSource:
    """The C face of one block of bytes: `symbol` (const uint8_t[]) and
    `size_symbol` (const size_t, optional) are its C names, aligned to
    `alignment`; `description` is the asm form's header comment, one line a
    string; `section_macro` the macro that places it in a section, `macro`
    the model's macro prefix; `c_template` renders the C form;
    `write_blob`: whether the asm form writes the bytes beside it."""

    symbol: str
    alignment: int
    description: list
    section_macro: str
    macro: str
    c_template: str
    size_symbol: str | None = None
    write_blob: bool = True


def write_data_source(
    staging: Path, data_format: str, source: str, blob: str | None, data: bytes, spec: DataSource, context: dict
) -> None:
    """Writes `source` (and, for asm with `spec.write_blob`, the bytes to
    `blob`) into `staging`; `context` is what `spec.c_template` (the C form)
    needs besides its `byte_block`."""
    if data_format == "asm":
        if spec.write_blob:
            (staging / blob).write_bytes(data)
        text = render(
            ASM_TEMPLATE,
            banner=context["banner"],
            description=spec.description,
            macro=spec.macro,
            symbol=spec.symbol,
            size_symbol=spec.size_symbol,
            blob=blob,
            size=len(data),
            alignment=spec.alignment,
            section_macro=spec.section_macro,
        )
    else:
        text = render(spec.c_template, byte_block=c_byte_block(data) if data else "    0,", **context)
    (staging / source).write_text(text)
