"""The C names generated sources define, read off the rendered text.

Names are derived, not listed: after rendering, every file-scope definition
(function bodies, objects, typedefs, macros) of the generated files is
collected, and a name defined twice is a clash the C compiler would reject
(or, for a macro, silently redefine).  A model function whose C names clash
with the glue's own (`@report` next to the glue's `NAME_report`, `@f` next
to `@f_invoke`, runtimeless `@initialize`) is refused before anything is
written, with the function named.  (IREE's namespaces need no scan: every
name ireegen derives starts with the model's name, which naming.py keeps
out of iree_/IREE_.)"""

from __future__ import annotations

import re
from collections import defaultdict

from ireegen.common.errors import UsageError

_MACRO = re.compile(r"^\s*#\s*define\s+(\w+)(.*)$")
_CONDITIONAL = re.compile(r"^\s*#\s*(if|ifdef|ifndef|elif|else|endif)\b")
_TYPEDEF_CLOSE = re.compile(r"^\}\s*(\w+)\s*;")
_TYPEDEF_LINE = re.compile(r"^typedef\b(?:[^;{]*|.*\}\s*)\b(\w+)\s*;")
_HEAD = re.compile(r"^(?!typedef|return|if|else|for|while|switch|case|#)[A-Za-z_][\w\s\*]*?\b(\w+)\s*([\(\[=])")


_STRING = re.compile(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'')


def _strip_comments(text: str) -> str:
    # Line splices first (a macro's continued body is one line), as C does.
    text = text.replace("\\\n", " ")
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


_ATTRIBUTE = re.compile(r"\b(__attribute__|__declspec|_Alignas|alignas)\s*\(")


def _without_attributes(line: str) -> str:
    """`line` without `__attribute__((...))` and the like, which may stand
    before a definition's type."""
    while (m := _ATTRIBUTE.search(line)) is not None:
        depth, end = 0, len(line)
        for j in range(m.end() - 1, len(line)):
            depth += {"(": 1, ")": -1}.get(line[j], 0)
            if depth == 0:
                end = j + 1
                break
        line = line[: m.start()] + line[end:]
    return line


def _parentheses(line: str) -> int:
    """How many parentheses `line` leaves open (string literals aside)."""
    code = _STRING.sub('""', line)
    return code.count("(") - code.count(")")


def defined_names(text: str) -> list:
    """(name, kind, body, branches) for each file-scope definition in C
    text; macros carry their body (a repeated identical #define is
    harmless), and `branches` says which preprocessor branches it sits in:
    two definitions in different branches of one #if never both exist."""
    return [d[:4] for d in _definitions(text)]


def external_definitions(text: str) -> list:
    """The functions and objects C text defines with external linkage (at
    file scope, not `static`): the global symbols its object will define."""
    return sorted({d[0] for d in _definitions(text) if d[4]})


def _definitions(text: str) -> list:
    """defined_names' tuples, and whether each is a global symbol."""
    text = _strip_comments(text)
    out = []
    depth = 0
    parens = 0  # open parentheses: a line inside them continues a declaration
    conditionals = 0
    stack = []  # (conditional id, branch number) of the enclosing #if ... #endif
    lines = text.split("\n")
    for i, line in enumerate(lines):
        c = _CONDITIONAL.match(line)
        if c:
            if c.group(1).startswith("if"):
                conditionals += 1
                stack.append((conditionals, 0))
            elif c.group(1) in ("elif", "else") and stack:
                stack[-1] = (stack[-1][0], stack[-1][1] + 1)
            elif c.group(1) == "endif" and stack:
                stack.pop()
            continue
        branches = tuple(stack)
        opened = parens
        parens = max(parens + _parentheses(line), 0)
        if depth == 0 and opened == 0:
            # Indentation does not hide a definition (a generated line may
            # start with a space).
            line = line.lstrip()
            m = _MACRO.match(line)
            if not m:
                line = _without_attributes(line).lstrip()
            if m:
                out.append((m.group(1), "macro", m.group(2).strip(), branches, False))
            elif (m := _TYPEDEF_LINE.match(line)) is not None:
                out.append((m.group(1), "type", "", branches, False))
            elif (m := _HEAD.match(line)) is not None:
                static = re.search(r"\bstatic\b", line[: m.start(1)]) is not None
                rest = "\n".join([line[m.start(2) :], *lines[i + 1 : i + 40]])
                if m.group(2) == "(":
                    # A definition when the body comes before any ';'.
                    brace, semi = rest.find("{"), rest.find(";")
                    if brace != -1 and (semi == -1 or brace < semi):
                        out.append((m.group(1), "function", "", branches, not static))
                elif not re.match(r"^(extern)\b", line):
                    out.append((m.group(1), "object", "", branches, not static))
        elif depth == 1 and (m := _TYPEDEF_CLOSE.match(line)) is not None:
            out.append((m.group(1), "type", "", branches, False))
        if line.strip() in ('extern "C" {', '}  // extern "C"'):
            continue  # C++ linkage blocks do not nest scopes
        depth += line.count("{") - line.count("}")
        depth = max(depth, 0)
    return out


def clashes(texts: dict) -> dict:
    """name -> [file names] for every name defined more than once across
    `texts` (file name -> C text); identical macro redefinitions and a
    function's definition next to its prototype are not clashes."""
    seen = defaultdict(list)
    for file, text in texts.items():
        for name, kind, body, branches in defined_names(text):
            seen[name].append((file, kind, body, branches))
    out = {}
    for name, defs in seen.items():
        for i, a in enumerate(defs):
            for b in defs[i + 1 :]:
                same_macro = a[1] == b[1] == "macro" and a[2] == b[2]
                if not same_macro and not _exclusive(a, b):
                    out[name] = sorted({d[0] for d in defs})
    return out


def _exclusive(a, b) -> bool:
    """Whether two definitions sit in different branches of one #if (in one file)."""
    if a[0] != b[0]:
        return False
    branch_of = dict(a[3])
    return any(cond in branch_of and branch_of[cond] != branch for cond, branch in b[3])


def check_generated(texts: dict, functions, name: str, source: str) -> None:
    """Refuses generated sources whose names clash, naming the model function
    at fault."""
    found = clashes(texts)
    if not found:
        return
    clash = sorted(found)[0]
    culprit = _function_for(clash, functions)
    if culprit:
        raise UsageError(
            f"{source}: function @{culprit.function.name} would make the generated C define {clash} twice "
            f"(ireegen's glue for {name} defines it too); rename the function"
        )
    raise UsageError(
        f"{source}: the generated C would define {clash} twice ({', '.join(found[clash])}); choose another --name"
    )


def _function_for(symbol: str, functions):
    """The model function whose C names include `symbol` (the longest match)."""
    best = None
    for f in functions:
        s = f.symbol
        if symbol == s or symbol.startswith(s + "_") or symbol.upper().startswith(s.upper() + "_"):
            if best is None or len(s) > len(best.symbol):
                best = f
    return best
