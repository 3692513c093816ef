"""The big read-only bytes of an output directory (the runtimeless constants,
the vmfb module) as a source file, in the form `--data-format` chose:

- asm: NAME_....S, whose `.incbin` reads the bytes from a binary file beside
  it when it is assembled, so the C compiler never parses them (an 8 MB
  blob assembles in milliseconds; as a C array gcc -O2 needs ~40 s and 1 GB);
- c: a C array of hex literals, for toolchains without a GNU-style assembler
  step (MSVC, or by choice).

Both forms define the same symbols, with the same alignment, in read-only
data (flash on firmware), so the headers and the C code that use them are
the same either way.
"""

from __future__ import annotations

from pathlib import Path

from .c_api import c_byte_block
from .render import render

ASM_TEMPLATE = "data_incbin.S.j2"


def write_data_source(
    staging: Path,
    data_format: str,
    source: str,
    blob: str | None,
    data: bytes,
    *,
    symbol: str,
    alignment: int,
    description: list,
    section_macro: str,
    macro: str,
    c_template: str,
    context: dict,
    size_symbol: str | None = None,
    write_blob: bool = True,
) -> None:
    """Writes `source` (and, for asm with `write_blob`, the bytes to `blob`)
    into `staging`.  `symbol` (const uint8_t[]) and `size_symbol` (const
    size_t, optional) are the C names; `context` is what `c_template` (the C
    form) needs besides its `byte_block`; `description` is the asm header's
    comment, one line a string."""
    if data_format == "asm":
        if write_blob:
            (staging / blob).write_bytes(data)
        text = render(
            ASM_TEMPLATE,
            banner=context["banner"],
            description=description,
            macro=macro,
            symbol=symbol,
            size_symbol=size_symbol,
            blob=blob,
            size=len(data),
            alignment=alignment,
            section_macro=section_macro,
        )
    else:
        text = render(c_template, byte_block=c_byte_block(data) if data else "    0,", **context)
    (staging / source).write_text(text)
