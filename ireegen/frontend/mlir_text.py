"""Text that ireegen writes into MLIR: strings escaped as MLIR's own printer
escapes them, so any file name can stand in a location."""


def mlir_escaped(text: str) -> str:
    """A string as MLIR's printer writes it (llvm::printEscapedString)."""
    out = []
    for b in text.encode():
        c = chr(b)
        if c == "\\":
            out.append("\\\\")
        elif 0x20 <= b < 0x7F and c != '"':
            out.append(c)
        else:
            out.append(f"\\{b:02X}")
    return "".join(out)
