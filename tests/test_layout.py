"""The package reads as the pipeline: stage subpackages, each importing only
the stages below it, at module level, and no import cycle between modules.
An ireegen import inside a function is allowed only in the CLI entry
points (LAZY_IMPORTERS); the other checks count such imports too."""

from __future__ import annotations

import ast
from pathlib import Path

import ireegen

PACKAGE = Path(ireegen.__file__).resolve().parent

# The stages, lowest first.  A module may import its own stage and the
# stages before it, never one after it.  The top-level modules (the emit
# driver, the commands on top of it and the CLI) come last, in their order.
STAGES = (
    "common",  # errors, progress, resources
    "config",  # the flag tables
    "frontend",  # reading a model
    "output",  # OUTDIR, the content key, the cache
    "cgen",  # the C
    "compile",  # iree-compile
    "runtimeless",  # plain C without a runtime
    "cbuild",  # building and running C
    "check",  # comparing numbers, tuning
    "driver",  # emit's stages: the request, the backends, verification
    "",
)
TOP_LEVEL_ORDER = ("__init__", "emit", "parity", "cmake_resolve", "pytest_plugin", "cli", "__main__")
# The entry points: the CLI imports the command a subcommand runs when it
# runs; the pytest plugin, loaded at every start of a project's pytest,
# imports the parity harness (numpy, IREE) when a test uses its fixture.
LAZY_IMPORTERS = ("ireegen.cli", "ireegen.__main__", "ireegen.pytest_plugin")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _import_nodes(path: Path):
    """(the ireegen module imported, whether the import is inside a
    function) for every import in `path`, absolute or relative."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    tree = ast.parse(path.read_text())
    in_function = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        for inner in ast.walk(node)
    }
    for node in ast.walk(tree):
        inside = id(node) in in_function
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
                yield (candidate if _exists(candidate) else target), inside, node.lineno
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("ireegen"):
                    yield a.name, inside, node.lineno


def _imports(path: Path) -> set:
    """The ireegen modules `path` imports (absolute or relative, anywhere in the file)."""
    found = {target for target, _, _ in _import_nodes(path)}
    found.discard(_module_name(path))
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


def test_ireegen_imports_are_at_module_level():
    """Outside the CLI entry points, every ireegen import is at module level:
    an import inside a function would hide a dependency from the reader
    (and an upward one from the order)."""
    hidden = sorted(
        {
            f"{path.relative_to(PACKAGE.parent)}:{line} imports {target} inside a function"
            for path in PACKAGE.rglob("*.py")
            if _module_name(path) not in LAZY_IMPORTERS
            for target, inside, line in _import_nodes(path)
            if inside
        }
    )
    assert not hidden, "imports to move to module level:\n" + "\n".join(hidden)


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
