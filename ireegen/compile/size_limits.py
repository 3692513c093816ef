"""How large a tensor and a static arena may be, checked before any work is
spent on a model whose memory cannot exist on its target.

A tensor in a function's signature must fit the target's address space with
room to spare: at most PTRDIFF_MAX bytes on a 32-bit target (C's largest
object), and 1 TiB on a 64-bit one (more than any machine ireegen builds for
gives one tensor).  Runtimeless C keeps its arena, which holds staging
copies of the inputs and outputs, in a static array, and a static array
larger than 2 GiB is out of reach of the default code model (the link fails
with "relocation truncated"), so there every tensor and the planned arena
plus state stay under 2 GiB."""

from __future__ import annotations

from ireegen.common.errors import UsageError
from ireegen.config.modes import host_triple

# LLVM architectures whose pointers are 64 bits wide.
_64_BIT_ARCHS = frozenset(
    {"x86_64", "aarch64", "aarch64_be", "arm64", "riscv64", "ppc64", "ppc64le", "s390x", "mips64", "mips64el",
     "loongarch64", "sparcv9", "wasm64"}
)  # fmt: skip
MAX_TENSOR_BYTES_64 = 1 << 40
MAX_OBJECT_BYTES_32 = (1 << 31) - 1  # PTRDIFF_MAX of a 32-bit target
MAX_STATIC_BYTES = (1 << 31) - 1  # what the default code model reaches


def tensor_limit(config) -> tuple:
    """(bytes, why) a tensor of `config`'s functions may have at most."""
    triple = config.target.triple if config.target else host_triple()
    arch = triple.split("-", 1)[0]
    if not config.execution_model.has_vm_module:
        return MAX_STATIC_BYTES, "runtimeless C stages tensors in its static arena, which must stay under 2 GiB"
    if arch in _64_BIT_ARCHS:
        return MAX_TENSOR_BYTES_64, f"ireegen's limit for one tensor on a 64-bit target ({arch})"
    return MAX_OBJECT_BYTES_32, f"the largest object a 32-bit target ({arch}) can hold"


def check_tensor_sizes(functions, config, where: str) -> None:
    """Refuses, before compiling, a function argument or result whose static
    size cannot exist on the target, naming it and its size."""
    limit, why = tensor_limit(config)
    for fn in functions:
        for kind, values in (("argument", fn.inputs), ("result", fn.outputs)):
            for v in values:
                if v.is_tensor and v.is_static and v.byte_size > limit:
                    raise UsageError(
                        f"{where}: function @{fn.name}: {kind} {v.name} ({v.mlir_type}) is {v.byte_size:,} bytes, "
                        f"more than {limit:,} ({why}); give it smaller static dimensions"
                    )


def check_static_memory(arena_size: int, state_size: int, where: str) -> None:
    """Refuses a runtimeless plan whose static arena and state would not link."""
    if arena_size + state_size > MAX_STATIC_BYTES:
        raise UsageError(
            f"{where}: runtimeless C would need a {arena_size:,}-byte arena and {state_size:,} bytes of state, "
            f"more than the {MAX_STATIC_BYTES:,} bytes a static array can have under the default code model; "
            "use smaller shapes or another execution model"
        )
