"""Direct calls into a static executables object: the runtimeless glue can
call IREE's dispatch functions by symbol instead of looking them up by name
through the library query at init, so that the query and the tables it
returns (export names, 64-byte dispatch attributes, pointers) are left out of
the firmware by --gc-sections.

iree-compile defines the dispatch functions as local symbols.  For each
export the schedule calls, `alias_exports` reads the library's export table
out of the ELF object (which function each ordinal is, that its workgroup
size is 1, and that the library needs no imports, executable constants,
workgroup local memory or sanitizer) and appends a hidden global alias NAME__export_I to the
symbol table.  Anything it does not recognize (not a little-endian ELF
relocatable, several libraries, a name found twice, an unknown relocation)
answers None, and the glue keeps the lookup."""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

_SHT_SYMTAB, _SHT_RELA, _SHT_REL, _SHT_SYMTAB_SHNDX = 2, 4, 9, 18
_STT_SECTION, _STT_FUNC = 3, 2
_STB_GLOBAL, _STV_HIDDEN = 1, 2
ATTRS_SIZE = 64  # iree_hal_executable_dispatch_attrs_v0_t


@dataclass
class _Section:
    index: int
    header_at: int
    type: int
    offset: int
    size: int
    link: int
    info: int
    entsize: int


@dataclass
class _Symbol:
    name: str
    value: int
    size: int
    info: int
    other: int
    shndx: int


class _Elf:
    def __init__(self, data: bytes):
        if data[:4] != b"\x7fELF" or data[5] != 1 or struct.unpack_from("<H", data, 16)[0] != 1:
            raise ValueError("not a little-endian ELF relocatable")
        self.data = data
        self.wide = data[4] == 2
        self.ptr = 8 if self.wide else 4
        if self.wide:
            (shoff,) = struct.unpack_from("<Q", data, 0x28)
            shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
        else:
            (shoff,) = struct.unpack_from("<I", data, 0x20)
            shentsize, shnum = struct.unpack_from("<HH", data, 0x2E)
        self.sections = []
        for i in range(shnum):
            at = shoff + i * shentsize
            if self.wide:
                _, type_, _, _, offset, size, link, info, _, entsize = struct.unpack_from("<IIQQQQIIQQ", data, at)
            else:
                _, type_, _, _, offset, size, link, info, _, entsize = struct.unpack_from("<IIIIIIIIII", data, at)
            self.sections.append(_Section(i, at, type_, offset, size, link, info, entsize))
        if any(s.type == _SHT_SYMTAB_SHNDX for s in self.sections):
            raise ValueError("extended section indices")
        symtabs = [s for s in self.sections if s.type == _SHT_SYMTAB]
        if len(symtabs) != 1:
            raise ValueError("not one symbol table")
        self.symtab = symtabs[0]
        self.strtab = self.sections[self.symtab.link]
        self.symbols = [self._symbol(self.symtab.offset + k * self.symtab.entsize) for k in range(self.symtab.size // self.symtab.entsize)]  # fmt: skip

    def _symbol(self, at: int) -> _Symbol:
        if self.wide:
            name, info, other, shndx, value, size = struct.unpack_from("<IBBHQQ", self.data, at)
        else:
            name, value, size, info, other, shndx = struct.unpack_from("<IIIBBH", self.data, at)
        start = self.strtab.offset + name
        return _Symbol(self.data[start : self.data.index(b"\0", start)].decode("latin-1"), value, size, info, other, shndx)  # fmt: skip

    def defined(self, name: str) -> _Symbol:
        found = [s for s in self.symbols if s.name == name and 0 < s.shndx < len(self.sections)]
        if len(found) != 1:
            raise ValueError(f"{name}: defined {len(found)} times")
        return found[0]

    def read(self, symbol: _Symbol, at: int, fmt: str):
        section = self.sections[symbol.shndx]
        return struct.unpack_from("<" + fmt, self.data, section.offset + symbol.value + at)[0]

    def pointee(self, symbol: _Symbol, at: int) -> _Symbol:
        """The function the pointer at `symbol`+`at` points to, from its relocation."""
        place = symbol.value + at
        for rel in self.sections:
            if rel.type not in (_SHT_REL, _SHT_RELA) or rel.info != symbol.shndx or rel.link != self.symtab.index:
                continue
            for k in range(rel.size // rel.entsize):
                entry = rel.offset + k * rel.entsize
                if self.wide:
                    offset, info = struct.unpack_from("<QQ", self.data, entry)
                    index = info >> 32
                    addend = struct.unpack_from("<q", self.data, entry + 16)[0] if rel.type == _SHT_RELA else None
                else:
                    offset, info = struct.unpack_from("<II", self.data, entry)
                    index = info >> 8
                    addend = struct.unpack_from("<i", self.data, entry + 8)[0] if rel.type == _SHT_RELA else None
                if offset != place:
                    continue
                if addend is None:  # REL: the addend is in place
                    addend = self.read(symbol, at, "q" if self.wide else "i")
                target = self.symbols[index]
                if target.info & 0xF == _STT_FUNC and addend == 0:
                    return target
                if target.info & 0xF == _STT_SECTION:
                    found = [
                        s
                        for s in self.symbols
                        if s.shndx == target.shndx and s.info & 0xF == _STT_FUNC and s.value == addend
                    ]
                    if len(found) == 1:
                        return found[0]
                raise ValueError(f"pointer at {symbol.name}+{at}: not a function")
        raise ValueError(f"pointer at {symbol.name}+{at}: no relocation")


def _export_table(elf: _Elf, query: str) -> dict:
    """export name -> symbol index of the library `query` returns, after
    checking what the glue's lookup checks, and that every workgroup size
    is 1 (or unset)."""
    p = elf.ptr
    library = elf.defined(f"{query}_v0")
    header = elf.defined(f"{query}_v0_header")
    # iree_hal_executable_library_v0_t: header, imports {count, symbols},
    # exports {count, ptrs, attrs, params, occupancy, names, tags,
    # parameter_names, source_locations, stage_locations}, constants {count}.
    imports, exports, constants = elf.read(library, p, "I"), elf.read(library, 3 * p, "I"), elf.read(library, 13 * p, "I")  # fmt: skip
    sanitizer = elf.read(header, 2 * p + 4, "i")
    if imports or constants or sanitizer:
        raise ValueError("the library needs imports, executable constants or a sanitizer")
    functions = elf.defined(f"{query}_v0_funcs")
    attrs = elf.defined(f"{query}_v0_attrs")
    table = {}
    for ordinal in range(exports):
        function = elf.pointee(functions, ordinal * p)
        at = ordinal * ATTRS_SIZE
        if elf.read(attrs, at + 8, "H"):
            raise ValueError(f"{function.name} needs workgroup local memory")
        size = (elf.read(attrs, at + 12, "I"), elf.read(attrs, at + 16, "I"), elf.read(attrs, at + 20, "H"))
        if function.name in table:
            raise ValueError(f"{function.name}: exported twice")
        if any(v > 1 for v in size):  # the glue passes 1 (IREE's CPU code generation sets no other)
            raise ValueError(f"{function.name}: workgroup size {size}")
        table[function.name] = elf.symbols.index(function)
    return table


def _with_aliases(elf: _Elf, aliases: list) -> bytes:
    """The object with (symbol index, alias name) appended as hidden global
    functions: a new .strtab and .symtab at the end of the file (local
    symbols keep their indices, so relocations are untouched)."""
    data = bytearray(elf.data)
    strtab = bytearray(data[elf.strtab.offset : elf.strtab.offset + elf.strtab.size])
    symtab = bytearray(data[elf.symtab.offset : elf.symtab.offset + elf.symtab.size])
    for index, alias in aliases:
        s = elf.symbols[index]
        name = len(strtab)
        strtab += alias.encode() + b"\0"
        info = (_STB_GLOBAL << 4) | _STT_FUNC
        if elf.wide:
            symtab += struct.pack("<IBBHQQ", name, info, _STV_HIDDEN, s.shndx, s.value, s.size)
        else:
            symtab += struct.pack("<IIIBBH", name, s.value, s.size, info, _STV_HIDDEN, s.shndx)
    for section, content in ((elf.strtab, strtab), (elf.symtab, symtab)):
        data += b"\0" * (-len(data) % 8)
        offset = len(data)
        data += content
        if elf.wide:
            struct.pack_into("<QQ", data, section.header_at + 0x18, offset, len(content))
        else:
            struct.pack_into("<II", data, section.header_at + 0x10, offset, len(content))
    return bytes(data)


def alias_exports(path: Path, queries: list, exports: list, prefix: str) -> list | None:
    """Gives each of `exports` (export names, in the glue's order) a global
    alias PREFIX__export_I in the object at `path`, rewritten in place; the
    aliases in that order ({"name", "symbol"}), or None (object unchanged)
    where the glue must look the functions up itself."""
    if len(queries) != 1:
        return None
    try:
        elf = _Elf(Path(path).read_bytes())
        table = _export_table(elf, queries[0])
        chosen = [(table[name], f"{prefix}__export_{i}") for i, name in enumerate(exports)]
        if any(s.name.startswith(f"{prefix}__export_") for s in elf.symbols):
            return None
        data = _with_aliases(elf, chosen)
    except (ValueError, KeyError, IndexError, struct.error):
        return None
    Path(path).write_bytes(data)
    return [{"name": name, "symbol": alias} for name, (_, alias) in zip(exports, chosen, strict=True)]
