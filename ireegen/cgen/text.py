"""The one rule for outside text (a model's file name, its graph, function
and value names, the messages its asserts carry) that enters a generated
file: it goes through this module, and only as data.

- `c_comment(text)`: for a `//` or `/* */` comment (C, and the C-preprocessed
  assembler sources).  The result is printable ASCII in which a backslash
  always starts an escape: no newline or carriage return can end the
  comment, no backslash can splice the next line into it, no `*/` can close
  it, no `??/` trigraph can become a backslash, and no bidirectional or
  invisible character can make it read differently from what compiles.
- `c_string_literal(text)`: a complete C string literal ("...") whose bytes
  are exactly the UTF-8 bytes of `text`: octal escapes (never hex ones,
  which swallow the hex digits after them), no trigraphs.
- `asm_string(text)`: the same for a GNU assembler string (`.error "..."`).

Humans keep the real text elsewhere: the manifest and ireegen's messages
carry the names as they are.
"""

from __future__ import annotations

# ASCII characters a comment keeps as they are: printable, minus the
# backslash (which introduces the escapes).
_COMMENT_SAFE = frozenset(chr(c) for c in range(0x20, 0x7F)) - {"\\"}
# Pairs that would change a comment's meaning: the second character is escaped.
_COMMENT_PAIRS = {("*", "/"), ("/", "*"), ("?", "?")}


def c_comment(text) -> str:
    """`text` made safe inside a C comment (see the module's description)."""
    out = []
    previous = ""
    for ch in str(text):
        if ch in _COMMENT_SAFE and (previous, ch) not in _COMMENT_PAIRS:
            out.append(ch)
        elif ord(ch) < 0x100:
            out.append(f"\\x{ord(ch):02x}")
        elif ord(ch) < 0x10000:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
        # An escape ends the pair: "?\x3f?" is as harmless as "?\x3f".
        previous = out[-1][-1]
    return "".join(out)


def _string_body(text: str, specials: dict) -> str:
    out = []
    previous = 0
    for b in str(text).encode("utf-8", "surrogatepass"):
        ch = chr(b)
        if ch in specials:
            out.append(specials[ch])
        elif 0x20 <= b < 0x7F and not (ch == "?" and previous == ord("?")):
            out.append(ch)
        else:
            out.append(f"\\{b:03o}")
        previous = b
    return "".join(out)


def c_string_literal(text) -> str:
    """`text` as a C string literal, quotes included, holding its UTF-8 bytes."""
    return '"' + _string_body(text, {'"': '\\"', "\\": "\\\\"}) + '"'


def asm_string(text) -> str:
    """`text` as a GNU assembler string, quotes included (a `.S` file goes
    through the C preprocessor first, so the C rules hold too)."""
    return '"' + _string_body(text, {'"': '\\"', "\\": "\\\\"}) + '"'


# The Jinja filters templates apply to outside text (render.py registers them).
FILTERS = {"c_comment": c_comment, "c_string": c_string_literal, "asm_string": asm_string}
