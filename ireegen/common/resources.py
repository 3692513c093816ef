"""Locations of the data ireegen ships: jinja templates, CMake package files,
Bazel rules and the docs.

An installed wheel carries them inside the package (see CMakeLists.txt); a
source checkout has them at the top of the tree.
"""

from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent.parent  # ireegen/


def _data_dir(name: str) -> Path:
    for candidate in (_PACKAGE_DIR / name, _PACKAGE_DIR.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"ireegen is installed without its {name}/ directory")


def package_dir() -> Path:
    """The `ireegen` package itself (its sources are in every subpackage)."""
    return _PACKAGE_DIR


def templates_dir() -> Path:
    return _data_dir("templates")


def cmake_dir() -> Path:
    return _data_dir("cmake")


def bazel_dir() -> Path:
    """A Bazel repository: WORKSPACE, BUILD, defs.bzl (ireegen_model) and the
    forwarding rules_cc/rules_java repositories (docs/bazel.md)."""
    return _data_dir("bazel")


def doc(page: str) -> str:
    """docs/`page` (`page` may end in `#section`) as a path the user can open:
    every message that points to the docs names its page through this.  A
    wheel without docs/ (built before it shipped them) gets the page's name."""
    name, _, section = page.partition("#")
    try:
        path = str(_data_dir("docs") / name)
    except FileNotFoundError:
        path = f"ireegen's docs/{name}"
    return f"{path}#{section}" if section else path
