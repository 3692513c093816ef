"""The package reads as the pipeline: stage subpackages, each importing only
the stages below it, and no import cycle between modules (lazy imports
inside functions count too)."""

from __future__ import annotations

import ast
from pathlib import Path

import ireegen

PACKAGE = Path(ireegen.__file__).resolve().parent

# The stages, lowest first.  A module may import its own stage and the
# stages before it, never one after it.  The top-level modules (the CLI and
# the commands on top of the pipeline) come last.
STAGES = ("common", "config", "frontend", "output", "cgen", "compile", "runtimeless", "cbuild", "check", "")
TOP_LEVEL_ORDER = ("__init__", "emit", "parity", "cmake_resolve", "pytest_plugin", "cli", "__main__")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set:
    """The ireegen modules `path` imports (absolute or relative, anywhere in the file)."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not target.startswith("ireegen"):
                continue
            for alias in node.names:  # `from ireegen.x import y` where y is a module
                candidate = f"{target}.{alias.name}"
                found.add(candidate if _exists(candidate) else target)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("ireegen"))
    found.discard(name)
    return found


def _exists(module: str) -> bool:
    rel = Path(*module.split(".")[1:])
    return (PACKAGE / rel).with_suffix(".py").is_file() or (PACKAGE / rel / "__init__.py").is_file()


def _graph() -> dict:
    return {_module_name(p): _imports(p) for p in sorted(PACKAGE.rglob("*.py"))}


def _rank(module: str) -> tuple:
    parts = module.split(".")
    if len(parts) == 1:
        return (len(STAGES) - 1, -1)
    if len(parts) == 2 and parts[1] not in STAGES:
        return (len(STAGES) - 1, TOP_LEVEL_ORDER.index(parts[1]) if parts[1] in TOP_LEVEL_ORDER else 99)
    return (STAGES.index(parts[1]), 0)


def test_every_import_names_a_module():
    """Lazy imports inside functions included: a moved module leaves no stale name behind."""
    missing = [f"{m} imports {d}" for m, deps in _graph().items() for d in deps if not _exists(d)]
    assert not missing, "\n".join(missing)


def test_every_module_is_in_a_stage():
    for module in _graph():
        parts = module.split(".")
        if len(parts) == 2 and (PACKAGE / f"{parts[1]}.py").is_file():
            assert parts[1] in TOP_LEVEL_ORDER, f"{module}: a top-level module; put it in a stage package"
        elif len(parts) >= 2:
            assert parts[1] in STAGES, f"{module}: {parts[1]}/ is not a stage in STAGES"


def test_stages_import_only_lower_stages():
    wrong = []
    for module, deps in _graph().items():
        for dep in deps:
            if dep == "ireegen" or not _exists(dep):
                continue  # the package's __version__
            mine, theirs = _rank(module), _rank(dep)
            stage_up = theirs[0] > mine[0]
            top_up = theirs[0] == mine[0] == len(STAGES) - 1 and theirs[1] > mine[1]
            if stage_up or top_up:
                wrong.append(f"{module} imports {dep}")
    assert not wrong, "imports that run back up the pipeline:\n" + "\n".join(sorted(wrong))


def test_no_import_cycle():
    graph = _graph()
    state, stack, cycles = {}, [], []

    def visit(m):
        state[m] = "open"
        stack.append(m)
        for d in sorted(graph.get(m, ())):
            if state.get(d) == "open":
                cycles.append(stack[stack.index(d) :] + [d])
            elif d not in state:
                visit(d)
        stack.pop()
        state[m] = "done"

    for m in sorted(graph):
        if m not in state:
            visit(m)
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)
