"""Line breaking of the generated C, the way clang-format lays it out in
IREE's style (Google: 80 columns, 2-space indent, 4-space continuation,
arguments bin-packed and aligned after the open parenthesis).

The templates hold the layout of everything whose width is fixed; what
grows with a name (a declaration, a call, a comment, a #define) is laid
out here, so that the output is clang-format-clean for every name length
without clang-format being installed.  clang-format chooses among the
possible line breaks the one of least penalty; `call` and `declaration`
search the few breaks a flat argument list allows with clang-format's
penalties (tests/test_clang_format.py holds them to clang-format itself).
"""

from __future__ import annotations

import functools
import itertools
import re
import textwrap

COLUMNS = 80
CONTINUATION = 4
_EXCESS = 1_000_000  # PenaltyExcessCharacter
_RETURN_TYPE = 200  # PenaltyReturnTypeOnItsOwnLine
_ASSIGNMENT = 2  # PenaltyBreakAssignment
_COMMA = 40 + 1  # a break after an argument's comma, one level in
_SPLIT = 40 + 200  # a break inside an argument


_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[A-Za-z_0-9]+|->|\S')


def _excess_at(text: str, column: int) -> int:
    """clang-format's overflow of `text` placed at `column`: the sum, over
    its tokens, of how far each one ends past the limit."""
    return sum(max(0, column + m.end() - COLUMNS) for m in _TOKEN.finditer(text))


def _excess(lines) -> int:
    return sum(_excess_at(line, 0) for line in lines)


def _pieces(item: str) -> tuple:
    """Where clang-format may break inside an argument or parameter when
    it does not fit: between a parameter's type and its name, and before
    the `->` of a member access."""
    m = re.fullmatch(r"(.*[\w*])\s+(\**\w+)", item)
    if m and not item.startswith(("&", "*")) and "(" not in item:
        return m.group(1), m.group(2)
    m = re.fullmatch(r"(\w+)(->\w+)", item)
    if m:
        return m.group(1), m.group(2)
    return (item,)


def _pack(first: str, args, tail: str, column: int) -> tuple:
    """Bin-packs `args` (each followed by its comma, the last by `tail`)
    after `first` (a line ending in `(`, or the blank start of a
    continuation line), later lines starting at `column`: the layout of
    least penalty, as (penalty, lines)."""
    if not args:
        return _EXCESS * _excess_at(tail, len(first)), [first + tail]
    ends = [","] * (len(args) - 1) + [tail]
    items = [a + e for a, e in zip(args, ends)]
    pieces = [_pieces(a)[:-1] + (_pieces(a)[-1] + e,) for a, e in zip(args, ends)]

    @functools.cache
    def best(i: int, width: int) -> tuple:
        # The least penalty for items[i:] when the current line is `width`
        # long, and the steps: (break before?, the item's line texts).
        if i == len(items):
            return 0, ()
        options = []
        for brk in (False, True) if i else (False,):
            at = column if brk else width + (1 if i else 0)
            starts_line = brk or i == 0
            # An argument broken inside starts its own line.
            for split in (False, True) if len(pieces[i]) == 2 and starts_line else (False,):
                cost = _COMMA if brk else 0
                if split:
                    inner = column + CONTINUATION
                    cost += _SPLIT + _EXCESS * (_excess_at(pieces[i][0], at) + _excess_at(pieces[i][1], inner))
                    text = (pieces[i][0], " " * inner + pieces[i][1])
                    end = len(text[1])
                else:
                    cost += _EXCESS * _excess_at(items[i], at)
                    text = (items[i],)
                    end = at + len(items[i])
                rest_cost, rest = best(i + 1, end)
                # Ties go to the layout that breaks later, as clang-format's.
                options.append((cost + rest_cost, brk, split, ((brk, text),) + rest))
        penalty, _, _, steps = min(options, key=lambda o: o[:3])
        return penalty, steps

    penalty, steps = best(0, len(first))
    lines = [first]
    for i, (brk, text) in enumerate(steps):
        if brk:
            lines.append(" " * column + text[0])
        else:
            lines[-1] += (" " if i else "") + text[0]
        lines += text[1:]
    return penalty, lines


def _layouts(indent: int, lead: str, head: str, args, tail: str, decl: bool, ret: str):
    """(penalty, order, lines) of every layout clang-format would weigh."""
    pad = " " * indent
    out = []
    # Split penalties: 20 per level of nesting, plus the token's own.
    after_paren = 40 + (100 if decl else (1 if len(args) > 1 else 19))
    for order, (head_break, paren_break) in enumerate(itertools.product((False, True), repeat=2)):
        penalty = 0
        lines = []
        if decl:
            if head_break:  # the return type on its own line, unless it is very short
                if indent + len(ret) + 1 < 6:
                    continue
                lines.append(pad + ret)
                start = pad + head + "("
                penalty += _RETURN_TYPE + 20
            else:
                start = pad + ret + " " + head + "("
        else:
            if head_break:  # after the `=` of an assignment
                if not lead.endswith(" = "):
                    continue
                lines.append(pad + lead.rstrip())
                start = pad + " " * CONTINUATION + head + "("
                penalty += _ASSIGNMENT + 20
            else:
                start = pad + lead + head + "("
        penalty += _EXCESS * _excess(lines + [start])
        if paren_break and args:
            base = len(start) - len(start.lstrip()) if (head_break and not decl) else indent
            column = base + CONTINUATION
            body_penalty, body = _pack(" " * column, args, tail, column)
            penalty += after_paren + body_penalty
            lines += [start] + body
        elif paren_break:
            continue
        else:
            body_penalty, body = _pack(start, args, tail, len(start))
            penalty += body_penalty
            lines += body
        out.append((penalty, order, lines))
    return out


def call(indent: int, head: str, args, tail: str = ";", lead: str = "") -> str:
    """`lead head(args)tail` as a statement at `indent` columns: a call
    (`status = f(a, b);`), the arguments bin-packed."""
    return _best(_layouts(indent, lead, head, list(args), ")" + tail, False, ""))


def declaration(ret: str, head: str, params, tail: str = ";", indent: int = 0) -> str:
    """A function declaration or definition head (`tail` " {")."""
    return _best(_layouts(indent, "", head, list(params), ")" + tail, True, ret))


def _best(layouts) -> str:
    return "\n".join(min(layouts, key=lambda t: (t[0], t[1]))[2])


def comment(text: str, indent: int = 0) -> str:
    """A `//` comment, words filled to the column limit (a word longer than
    a line stands on its own line, as clang-format leaves it)."""
    pad = " " * indent + "// "
    lines = []
    for paragraph in text.split("\n"):
        if not paragraph.strip():
            lines.append(pad.rstrip())
            continue
        lines += textwrap.wrap(
            paragraph,
            width=COLUMNS,
            initial_indent=pad,
            subsequent_indent=pad,
            break_long_words=False,
            break_on_hyphens=False,
        ) or [pad.rstrip()]
    return "\n".join(lines)


def define(name: str, value: str) -> str:
    """`#define NAME VALUE`, the value on a continuation line when the
    line would be too long."""
    line = f"#define {name} {value}"
    if len(line) <= COLUMNS:
        return line
    return f"#define {name} \\\n  {value}"
