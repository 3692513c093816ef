"""Line breaking of the generated C, the way clang-format lays it out in
IREE's style (Google: 80 columns, 2-space indent, 4-space continuation,
arguments bin-packed and aligned after the open parenthesis).

The templates hold the layout of everything whose width is fixed; what
grows with a name (declarations, calls, comments, #defines, string
literals, braced arrays, conditions) is laid out here, so that the output
is clang-format-clean for every name length without clang-format being
installed.  clang-format chooses among the
possible line breaks the one of least penalty; `call` and `declaration`
search the few breaks a flat argument list allows with clang-format's
penalties (tests/test_clang_format.py holds them to clang-format itself).
"""

from __future__ import annotations

import itertools
import re
import textwrap

COLUMNS = 80
# The helpers the templates call.
TEMPLATE_GLOBALS = (
    "call",
    "declaration",
    "define",
    "typedef_struct",
    "assign",
    "variable",
    "string_literal",
    "body_indent",
    "braced_variable",
    "condition",
    "braced_list",
    "define_call",
    "if_defined",
    "section_attribute",
    "sum_item",
    "initializer",
)
CONTINUATION = 4
_EXCESS = 1_000_000  # PenaltyExcessCharacter
_RETURN_TYPE = 200  # PenaltyReturnTypeOnItsOwnLine
_ASSIGNMENT = 2  # PenaltyBreakAssignment
_COMMA = 40 + 1  # a break after an argument's comma, one level in
_SPLIT = 40 + 200  # a break inside an argument
_STRING = 1000  # PenaltyBreakString
# The column limit in force: COLUMNS, less 2 inside a multi-line macro, whose
# lines end in ` \`.
_limit = [COLUMNS]


_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[A-Za-z_0-9]+|->|\S')


def _excess_at(text: str, column: int) -> int:
    """clang-format's overflow of `text` placed at `column`: the sum, over
    its tokens, of how far each one ends past the limit."""
    return sum(max(0, column + m.end() - _limit[0]) for m in _TOKEN.finditer(text))


def _excess(lines) -> int:
    return sum(_excess_at(line, 0) for line in lines)


def _pieces(item: str) -> tuple:
    """Where clang-format may break inside an argument or parameter when
    it does not fit: between a parameter's type and its name, and before
    the `->` of a member access, after each `+` of a sum of names and
    numbers."""
    if re.fullmatch(r"\w+(?: \+ \w+)+", item):
        operands = item.split(" + ")
        return tuple(o + " +" for o in operands[:-1]) + (operands[-1],)
    m = re.fullmatch(r"(.*[\w*])\s+(\**\w+)", item)
    if m and not item.startswith(("&", "*")) and "(" not in item:
        return m.group(1), m.group(2)
    m = re.fullmatch(r"(sizeof\()(\w+\))", item)
    if m:
        return m.group(1), m.group(2)
    m = re.fullmatch(r"(\([\w ]+\))(\w+)", item)  # a cast
    if m:
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

    def options(i: int, width: int, after_lines: bool) -> list:
        # The ways to place items[i] when the current line is `width` long
        # (after_lines: the item before took lines of its own), as (cost,
        # break before?, kind, the item's line texts, the state after it).
        out = []
        for brk in ((True,) if after_lines else (False, True)) if i else (False,):
            at = column if brk else width + (1 if i else 0)
            if i and not brk and at >= _limit[0]:
                # Every token of it would overflow, each by more than if it
                # started the next line, and the line after it would be
                # longer: never the least penalty, so not explored (this
                # bounds the widths to explore on a long list).
                continue
            starts_line = brk or i == 0
            # An argument broken inside starts its own line.
            for split in (False, True) if len(pieces[i]) >= 2 and starts_line else (False,):
                cost = _COMMA if brk else 0
                literal = args[i][0] == '"' and args[i][-1] == '"' and len(args[i]) > 2
                if literal and (brk or i == 0 and not first.strip()) and _excess_at(items[i], at):
                    # A string literal that overflows is split, as clang-format
                    # breaks one, into adjacent literals aligned under it.
                    parts = string_literal(args[i], at, ends[i])
                    if len(parts) > 1:
                        text = (parts[0],) + tuple(" " * at + p for p in parts[1:])
                        cost += _STRING * (len(parts) - 1) + _EXCESS * sum(_excess_at(p, at) for p in parts)
                        out.append((cost, brk, 2, text, (i + 1, at + len(parts[-1]), True)))
                if split:
                    rest = _greedy(pieces[i][1:], column + CONTINUATION)
                    cost += _SPLIT + _EXCESS * (_excess_at(pieces[i][0], at) + _excess(rest))
                    text = (pieces[i][0], *rest)
                    end = len(text[-1])
                else:
                    cost += _EXCESS * _excess_at(items[i], at)
                    text = (items[i],)
                    end = at + len(items[i])
                out.append((cost, brk, split, text, (i + 1, end, split)))
        return out

    # The least penalty for items[i:] from each state, and its first step:
    # solved from the last item back with an explicit stack (a list of
    # thousands of values is deeper than Python's recursion), each state
    # once.  Ties go to the layout that breaks later, as clang-format's.
    best, pending = {}, [(0, len(first), False)]
    while pending:
        state = pending[-1]
        if state in best:
            pending.pop()
            continue
        if state[0] == len(items):
            best[state] = (0, None)
            pending.pop()
            continue
        placed = options(*state)
        unsolved = [after for *_, after in placed if after not in best]
        if unsolved:
            pending.extend(unsolved)
            continue
        total, brk, kind, text, after = min(
            ((cost + best[after][0], brk, kind, text, after) for cost, brk, kind, text, after in placed),
            key=lambda o: o[:3],
        )
        best[state] = (total, (brk, text, after))
        pending.pop()
    penalty, steps, state = best[(0, len(first), False)][0], [], (0, len(first), False)
    while best[state][1] is not None:
        brk, text, state = best[state][1]
        steps.append((brk, text))
    lines = [first]
    for i, (brk, text) in enumerate(steps):
        if brk:
            lines.append(" " * column + text[0])
        else:
            lines[-1] += (" " if i else "") + text[0]
        lines += text[1:]
    return penalty, lines


def _greedy(pieces, column: int) -> list:
    """`pieces` on lines starting at `column`, as many on a line as fit."""
    lines = [" " * column + pieces[0]]
    for piece in pieces[1:]:
        if len(f"{lines[-1]} {piece}") <= _limit[0]:
            lines[-1] += f" {piece}"
        else:
            lines.append(" " * column + piece)
    return lines


def _layouts(indent: int, lead: str, head: str, args, tail: str, decl: bool, ret: str, opening: str = "("):
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
                start = pad + head + opening
                penalty += _RETURN_TYPE + 20
            else:
                start = pad + ret + " " + head + opening
        else:
            if head_break:  # after the `=` of an assignment
                if not lead.endswith(" = ") or opening == "{":
                    continue
                lines.append(pad + lead.rstrip())
                start = pad + " " * CONTINUATION + head + opening
                penalty += _ASSIGNMENT + 20
            else:
                start = pad + lead + head + opening
        penalty += _EXCESS * _excess(lines + [start])
        if paren_break and args:
            base = len(start) - len(start.lstrip()) if (head_break and not decl) else indent
            # Inside `if (`, one level deeper.
            column = base + CONTINUATION * (2 if lead.endswith("(") else 1)
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


def _best_lines(layouts) -> list:
    return min(layouts, key=lambda t: (t[0], t[1]))[2]


def _best(layouts) -> str:
    return "\n".join(_best_lines(layouts))


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


def _fewest(candidates) -> str:
    """The candidate layout (lists of lines, in clang-format's order of
    preference) that overflows least."""
    return "\n".join(min(candidates, key=_excess))


def assign(indent: int, lhs: str, rhs: str) -> str:
    """`lhs = rhs;`, broken after the `=` when too long; then, when the
    left side declares (`type name`) and the right one casts
    (`(type)name`), between type and name on either side."""
    pad = " " * indent
    more = " " * CONTINUATION
    candidates = [[f"{pad}{lhs} = {rhs};"], [f"{pad}{lhs} =", f"{pad}{more}{rhs};"]]
    declared = _pieces(lhs)
    binary = re.fullmatch(r"(\S+ (?:\+|>=)) (\w+)", rhs)
    if binary:  # `a + b`: broken after the operator too, the operands aligned
        candidates.append([f"{pad}{lhs} =", f"{pad}{more}{binary.group(1)}", f"{pad}{more}{binary.group(2)};"])
    cast = re.fullmatch(r"(\([\w *]+\))(\w+)", rhs)
    if cast:
        candidates.append([f"{pad}{lhs} =", f"{pad}{more}{cast.group(1)}", f"{pad}{more * 2}{cast.group(2)};"])
    if len(declared) == 2:
        kind, name = declared
        candidates.append([f"{pad}{kind}", f"{pad}{more}{name} = {rhs};"])
        candidates.append([f"{pad}{kind}", f"{pad}{more}{name} =", f"{pad}{more * 2}{rhs};"])
        if cast:
            candidates.append(
                [
                    f"{pad}{kind}",
                    f"{pad}{more}{name} =",
                    f"{pad}{more * 2}{cast.group(1)}",
                    f"{pad}{more * 3}{cast.group(2)};",
                ]
            )
    return _fewest(candidates)


def variable(indent: int, specifiers: str, name: str, subscript: str, rest: str) -> str:
    """A declaration `specifiers name[subscript]rest` (rest: `;`, ` = {4};`):
    broken after the specifiers, then before the subscript, when too long."""
    return _fewest(_variable_layouts(indent, specifiers, name, subscript, rest))


def initializer(indent: int, specifiers: str, name: str, fields) -> str:
    """`specifiers name = {.field = value, ...};`, one designated field a
    line, as clang-format lays it out: the declaration broken as variable()
    breaks it, the fields one level in from the line of the `{` and the `}`
    under that line, whichever way overflows least over the whole."""
    candidates = []
    for opening in _variable_layouts(indent, specifiers, name, "", " = {"):
        inner = len(opening[-1]) - len(opening[-1].lstrip())
        body = [line for field, value in fields for line in assign(inner + CONTINUATION, field, value).split("\n")]
        body = [line[:-1] + "," if line.endswith(";") else line for line in body]
        candidates.append(opening + body + [" " * inner + "};"])
    return _fewest(candidates)


def _variable_layouts(indent: int, specifiers: str, name: str, subscript: str, rest: str) -> list:
    pad = " " * indent
    more = " " * CONTINUATION
    candidates = [
        [f"{pad}{specifiers} {name}{subscript}{rest}"],
        [f"{pad}{specifiers}", f"{pad}{more}{name}{subscript}{rest}"],
    ]
    if subscript:
        candidates.append([f"{pad}{specifiers} {name}", f"{pad}{more}{subscript}{rest}"])
        candidates.append([f"{pad}{specifiers}", f"{pad}{more}{name}", f"{pad}{more * 2}{subscript}{rest}"])
    if rest.startswith(" = "):
        candidates.append([f"{pad}{specifiers}", f"{pad}{more}{name}{subscript} =", f"{pad}{more * 2}{rest[3:]}"])
    return candidates


def sum_item(indent: int, operands, tail: str = ",") -> str:
    """`a + b + c` and `tail` as an element of a braced initializer: on one
    line when it fits, else broken after a `+`, the operands bin-packed on
    lines one continuation in."""
    operands = list(operands)
    pad = " " * indent
    one = f"{pad}{' + '.join(operands)}{tail}"
    if len(one) <= COLUMNS:
        return one
    lines = [f"{pad}{operands[0]}"]
    inner = " " * (indent + CONTINUATION)
    for k, operand in enumerate(operands[1:], 1):
        end = tail if k == len(operands) - 1 else " +"
        if len(f"{lines[-1]} + {operand}{end}") <= COLUMNS:
            lines[-1] += f" + {operand}"
        else:
            lines[-1] += " +"
            lines.append(f"{inner}{operand}")
    lines[-1] += tail
    return "\n".join(lines)


def body_indent(text: str) -> str:
    """The indentation of what follows a brace opened at the end of `text`
    (a declaration that `variable` may have broken): 4 more than its last
    line, as clang-format indents a braced initializer."""
    last = text.split("\n")[-1]
    return " " * (len(last) - len(last.lstrip()) + CONTINUATION)


def braced_variable(indent: int, specifiers: str, name: str, subscript: str, values) -> str:
    """`specifiers name[subscript] = {values};`, an array with its
    initializer (a braced list, bin-packed as a call's arguments), broken
    as clang-format breaks it: inside the braces, else after the
    specifiers and then inside the braces, after the `=` or before the
    subscript."""
    pad = " " * indent
    inner = indent + CONTINUATION
    values = list(values)
    init = "{" + ", ".join(values) + "};"
    candidates = [
        [f"{pad}{specifiers} {name}{subscript} = {init}"],
        _best_lines(_layouts(indent, f"{specifiers} {name}{subscript} = ", "", values, "};", False, "", "{")),
        [f"{pad}{specifiers} {name}{subscript} =", f"{' ' * inner}{init}"],
        [f"{pad}{specifiers}", f"{' ' * inner}{name}{subscript} = {init}"],
        [f"{pad}{specifiers}"]
        + _best_lines(_layouts(inner, f"{name}{subscript} = ", "", values, "};", False, "", "{")),
        [f"{pad}{specifiers}", f"{' ' * inner}{name}{subscript} =", f"{' ' * (inner + CONTINUATION)}{init}"],
        [f"{pad}{specifiers}", f"{' ' * inner}{name}"]
        + _best_lines(_layouts(inner + CONTINUATION, f"{subscript} = ", "", values, "};", False, "", "{")),
    ]
    return _fewest(candidates)


def condition(indent: int, operands, operator: str, keyword: str = "if", tail: str = ") {") -> str:
    """`if (a || b || c) {`: the operands of one binary operator, packed
    as clang-format packs them, each line but the last ending in the
    operator and the next ones aligned after the `(`."""
    pad = " " * indent
    column = indent + len(keyword) + 2
    operands = list(operands)
    items = [f"{o} {operator}" for o in operands[:-1]] + [operands[-1] + tail]
    lines = [f"{pad}{keyword} ({items[0]}"]
    for item in items[1:]:
        joined = f"{lines[-1]} {item}"
        if len(joined) <= COLUMNS or _excess([joined]) <= _excess_at(item, column):
            lines[-1] = joined
        else:
            lines.append(" " * column + item)
    return "\n".join(_break_after_cast(line) for line in lines)


_CAST = re.compile(r"^( *)(\([A-Za-z_][A-Za-z0-9_ ]*\**\))(\S.*)$")


def _break_after_cast(line: str) -> str:
    """A line too long that starts with a cast, `(uint8_t*)name) {`, broken
    after the cast as clang-format breaks it, the rest one continuation in."""
    m = _CAST.match(line)
    if len(line) <= COLUMNS or m is None:
        return line
    pad, cast, rest = m.groups()
    return f"{pad}{cast}\n{pad}{' ' * CONTINUATION}{rest}"


def braced_list(indent: int, values, tail: str = ",") -> str:
    """`{a, b}` as an element of an initializer, laid out as a call's
    arguments are (clang-format's Cpp11BracedListStyle)."""
    return _best(_layouts(indent, "", "", list(values), "}" + tail, False, "", "{"))


def typedef_struct(tag: str, opens: bool = False) -> str:
    """`typedef struct TAG TAG;` (or `typedef struct TAG {` when it
    `opens` the definition), broken before each name when too long."""
    if opens:
        return _fewest([[f"typedef struct {tag} {{"], ["typedef struct", f"    {tag} {{"]])
    return _fewest(
        [
            [f"typedef struct {tag} {tag};"],
            [f"typedef struct {tag}", f"    {tag};"],
            ["typedef struct", f"    {tag}", f"        {tag};"],
        ]
    )


def if_defined(macro: str) -> str:
    """`#if defined(MACRO)`, continued on the next line when too long."""
    return _fewest([[f"#if defined({macro})"], ["#if defined( \\", f"    {macro})"]])


def section_attribute(macro: str) -> str:
    """`__attribute__((section(MACRO)))`, broken inside when too long."""
    return _fewest([[f"__attribute__((section({macro})))"], ["__attribute__((section(", f"    {macro})))"]])


def _escape_length(text: str, i: int) -> int:
    """The length of the escape sequence at text[i] (a backslash), as
    clang-format measures it: octal digits (up to 3) and hex digits belong
    to it, so a literal is never split inside one."""
    if i + 1 < len(text) and text[i + 1] in "01234567":
        n = 1
        while n < 3 and i + 1 + n < len(text) and text[i + 1 + n] in "01234567":
            n += 1
        return 1 + n
    if i + 1 < len(text) and text[i + 1] == "x":
        n = 2
        while i + n < len(text) and text[i + n] in "0123456789abcdefABCDEF":
            n += 1
        return n
    return 2


def _string_split(text: str, room: int) -> int:
    """Where clang-format splits the contents of a string literal that has
    `room` columns: after the last blank, else after the last '/', else
    after the last other non-alphanumeric character, that fits; else as
    much as fits (an escape sequence is not split)."""
    blank = slash = word = point = 0
    used = 0
    i = 0
    while text:
        advance = _escape_length(text, i) if text[i] == "\\" else 1
        used += advance
        if used > room or len(text) - i <= advance:
            break
        if text[i] in " \t":
            blank = point
        if text[i] == "/":
            slash = point
        if advance == 1 and not (text[i].isascii() and text[i].isalnum()):
            word = point
        point += advance
        i += advance
    for offset in (blank, slash, word):
        if offset:
            return offset + 1
    return point


def string_literal(literal: str, column: int, tail: str = "") -> list:
    """The lines of the string literal `literal` ("...", as text.py writes
    it) starting at `column`, followed by `tail` (`,` or `);`): split into
    adjacent literals as clang-format breaks a literal that does not fit,
    each line but the first to be indented to `column`."""
    contents = literal[1:-1]
    lines = []
    while len(contents) + 2 + len(tail) > COLUMNS - column:
        at = _string_split(contents, COLUMNS - column - 2)
        if at <= 0 or at >= len(contents):
            break
        lines.append(f'"{contents[:at]}"')
        contents = contents[at:]
    return lines + [f'"{contents}"{tail}']


def define_call(name: str, params, callee: str, args) -> str:
    """`#define NAME(params) CALLEE(args)`: a function-like macro that
    forwards to a call, laid out as clang-format lays out a macro: its
    parameter list and its call broken as a call's arguments, within two
    columns less, and the escaped newlines aligned one past the longest
    line."""
    params, args = list(params), list(args)
    line = f"#define {name}({', '.join(params)}) {callee}({', '.join(args)})"
    if len(line) <= COLUMNS:
        return line
    body = f"  {callee}({', '.join(args)})"
    _limit[0] = COLUMNS - 2
    try:
        lines = _best_lines(_layouts(0, "#define ", name, params, ")", False, ""))
        # The last line has no ` \`: the call may use the whole width there.
        lines += [body] if len(body) <= COLUMNS else _best_lines(_layouts(2, "", callee, args, ")", False, ""))
    finally:
        _limit[0] = COLUMNS
    width = max(len(line) for line in lines[:-1])
    return "\n".join([line.ljust(width) + " \\" for line in lines[:-1]] + lines[-1:])


def refill_comment(text: str) -> str:
    """A `//` comment block refilled to the column limit (the `comment`
    filter of the templates): lines join into paragraphs, which an empty
    `//` line separates; the first line's indentation is kept."""
    lines = text.strip("\n").split("\n")
    indent = len(lines[0]) - len(lines[0].lstrip())
    paragraphs = [[]]
    for line in lines:
        words = line.strip().removeprefix("//").strip()
        if words:
            paragraphs[-1].append(words)
        elif paragraphs[-1]:
            paragraphs.append([])
    return comment("\n\n".join(" ".join(p) for p in paragraphs if p), indent) + ("\n" if text.endswith("\n") else "")


def define(name: str, value: str) -> str:
    """`#define NAME VALUE`, the value on a continuation line when the
    line would be too long."""
    line = f"#define {name} {value}"
    if len(line) <= COLUMNS:
        return line
    return f"#define {name} \\\n  {value}"
