"""Runtimeless: every dispatch binds the byte range it uses.

By default IREE fuses the bindings of one resource into one (the whole
transient slab) and folds each buffer's offset into the kernel, so the
schedule shows every dispatch touching the whole slab.  With binding
optimization off each binding is its buffer's own range, so runtimeless
can read the slab's buffers and their lifetimes back off the schedule and
place them itself (runtimeless/slab.py): for staging the caller's tensors in
bytes no buffer uses at the time, and its own layout of the buffers.  The
kernels are the same; the offsets move from the kernels to the glue's
binding pointers.  A value the user passes with --iree-flag is kept."""

from __future__ import annotations

FLAG = "--iree-scheduling-optimize-bindings"


def compile_flags(user_flags) -> list:
    if any(str(f).split("=", 1)[0] == FLAG for f in user_flags or ()):
        return []
    return [f"{FLAG}=false"]
