"""Rendering the MLIR templates of templates/mlir/ (the int8 match spec):
the templates hold the MLIR's layout, the caller passes every decision
(which forms, which shapes, which names) as typed values.

Block tags are `<% ... %>`: MLIR writes `{%` in every dynamic shape
(`tensor<?xi8>{%n}`), so Jinja's default block tag cannot be used.  The
values rendered are integers and names ireegen chose; nothing read from a
model reaches these templates as text.  The files are named `.jinja`, not
`.j2`: cgen's environment loads every `.j2` with the default tags.
"""

from __future__ import annotations

import functools

import jinja2

from ireegen.common.resources import templates_dir


@functools.lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir() / "mlir")),
        block_start_string="<%",
        block_end_string="%>",
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )


def render(template: str, **context) -> str:
    return _environment().get_template(template).render(**context)
