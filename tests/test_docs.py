"""Docs that cannot drift: docs/cli.md against the CLI's argparse parser, and
docs/cmake.md against ireegen_add_model()'s keywords and the cache variables
the CMake files read.  Fast: nothing is compiled or configured."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from ireegen.cli import build_parser

ROOT = Path(__file__).resolve().parent.parent
CLI_MD = ROOT / "docs" / "cli.md"
CMAKE_MD = ROOT / "docs" / "cmake.md"
CMAKE_DIR = ROOT / "cmake"
ADD_MODEL = CMAKE_DIR / "ireegenAddModel.cmake"

# iree-compile's own flags that docs/cli.md quotes (not ireegen's options).
IREE_COMPILE_FLAGS = {"--output-format"}

OPTION = re.compile(r"(?<![\w-])(--?[a-z][a-z0-9-]*)")
HEADING = re.compile(r"^## `ireegen (\w+)`", re.M)


# --- docs/cli.md ----------------------------------------------------------


def _subparsers(parser: argparse.ArgumentParser) -> dict:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def _options(parser: argparse.ArgumentParser) -> set:
    return {s for a in parser._actions for s in a.option_strings if s not in ("-h", "--help")}


def _positionals(parser: argparse.ArgumentParser) -> list:
    return [a.dest.upper() for a in parser._actions if not a.option_strings]


def _sections(text: str) -> dict:
    """`## ireegen CMD` heading -> the text up to the next `## ` heading."""
    parts = re.split(r"^(?=## )", text, flags=re.M)
    return {m.group(1): part for part in parts if (m := HEADING.match(part))}


def _table_options(section: str) -> set:
    """The options named in the first column of the section's tables."""
    found = set()
    for line in section.splitlines():
        if line.startswith("| `"):
            found |= set(OPTION.findall(line.split("|")[1]))
    return found


def test_every_command_has_a_section_and_every_section_is_a_command():
    text = CLI_MD.read_text()
    commands = set(_subparsers(build_parser()))
    assert set(_sections(text)) == commands
    synopsis = set(re.findall(r"^python -m ireegen (\w+)", text, re.M))
    assert synopsis == commands, "the synopsis block lists every command, and only those"


def test_every_option_of_every_command_is_documented_in_its_section():
    sections = _sections(CLI_MD.read_text())
    for name, sub in _subparsers(build_parser()).items():
        missing = _options(sub) - _table_options(sections[name])
        assert not missing, f"docs/cli.md, `ireegen {name}`: options not documented: {sorted(missing)}"
        for positional in _positionals(sub):
            assert positional in sections[name], f"docs/cli.md, `ireegen {name}`: {positional} not shown"


def test_every_documented_option_exists():
    sections = _sections(CLI_MD.read_text())
    for name, sub in _subparsers(build_parser()).items():
        unknown = _table_options(sections[name]) - _options(sub)
        assert not unknown, f"docs/cli.md, `ireegen {name}`: no such options: {sorted(unknown)}"
    # Anywhere on the page (prose, examples), an option is one of ireegen's.
    parser = build_parser()
    every = _options(parser).union(*(_options(s) for s in _subparsers(parser).values()))
    unknown = set(OPTION.findall(CLI_MD.read_text())) - every - IREE_COMPILE_FLAGS - {"-h", "--help"}
    unknown = {o for o in unknown if o.startswith("--")}  # single-dash words are prose ("-o" is an option)
    assert not unknown, f"docs/cli.md names options ireegen does not have: {sorted(unknown)}"


def test_top_level_options_are_documented():
    text = CLI_MD.read_text()
    top = text[text.index("## Options before the command") :]
    assert _table_options(top) - {"-h", "--help"} == _options(build_parser())


# --- docs/cmake.md --------------------------------------------------------


def _cmake_list(text: str, var: str) -> list:
    m = re.search(rf"set\({var}\s+([^)]*)\)", text)
    assert m, f"{ADD_MODEL}: set({var} ...) not found"
    return m.group(1).split()


def add_model_keywords() -> set:
    """The keywords ireegen_add_model() parses: the option, value and list
    keywords its cmake_parse_arguments() is given."""
    text = ADD_MODEL.read_text()
    assert re.search(
        r'cmake_parse_arguments\(PARSE_ARGV 1 _ARG\s+"\$\{_IREEGEN_OPTION_KEYWORDS\}" '
        r'"\$\{_IREEGEN_VALUE_KEYWORDS\}" "\$\{_IREEGEN_LIST_KEYWORDS\}"\)',
        text,
    ), f"{ADD_MODEL}: cmake_parse_arguments(...) not in the expected form"
    return {k for kind in ("OPTION", "VALUE", "LIST") for k in _cmake_list(text, f"_IREEGEN_{kind}_KEYWORDS")}


def cache_variables() -> set:
    """The IREEGEN_* variables the CMake files read or let the user set (not
    ireegen's own _IREEGEN_* ones, nor target properties)."""
    names = set()
    for path in [*CMAKE_DIR.glob("*.cmake"), *CMAKE_DIR.glob("toolchains/*.cmake")]:
        text = path.read_text()
        names |= set(re.findall(r"\$\{(IREEGEN_\w+)\}", text))
        names |= set(re.findall(r"\b(?:if|elseif)\((?:[^)]*\s)?(IREEGEN_\w+)", text))
        names |= set(re.findall(r"(?<![\w{])(IREEGEN_\w+)\s+\S+\s+CACHE\b", text))
        names |= set(re.findall(r"find_program\((IREEGEN_\w+)", text))
        names |= set(re.findall(r"^\s+(IREEGEN_\w+)\s+--", text, re.M))  # a row of a keyword-to-flag table
    return names


def _argument_table_keywords(text: str) -> set:
    """Keywords in the first column of docs/cmake.md's argument table."""
    table = text[text.index("| argument |") :]
    table = table[: table.index("\n\n")]
    return {k for line in table.splitlines()[2:] for k in re.findall(r"`([A-Z][A-Z_]+)`", line.split("|")[1])}


def _doc_signature(text: str) -> str:
    return next(line for line in text.splitlines() if line.startswith("`ireegen_add_model(<target>"))


def _signature_keywords(signature: str) -> set:
    """`ireegen_add_model(<target> SRC <model> [NAME n] [VERIFY ON|OFF] ...)`:
    SRC and the first word in each bracket."""
    return set(re.findall(r"<target>\s+([A-Z_]+)", signature)) | set(re.findall(r"\[([A-Z_]+)", signature))


def _variables_table(text: str) -> set:
    table = text[text.index("| variable |") :]
    table = table[: table.index("\n\n")]
    return {c for line in table.splitlines()[2:] for c in re.findall(r"`(IREEGEN_\w+)", line.split("|")[1])}


def test_every_add_model_keyword_is_documented_and_only_those():
    text = CMAKE_MD.read_text()
    keywords = add_model_keywords()
    for where, documented in (
        ("argument table", _argument_table_keywords(text)),
        ("signature line", _signature_keywords(_doc_signature(text))),
    ):
        assert keywords - documented == set(), f"docs/cmake.md's {where} lacks these ireegen_add_model() keywords"
        assert documented - keywords == set(), f"docs/cmake.md's {where} has keywords ireegen_add_model() lacks"


def test_the_signature_comment_names_every_keyword():
    comment = "\n".join(
        line for line in (CMAKE_DIR / "ireegenConfig.cmake").read_text().splitlines() if line.startswith("#")
    )
    signature = comment[comment.index("ireegen_add_model(<target>") : comment.index(")\n")]
    assert _signature_keywords(signature) == add_model_keywords()


def test_execution_models_in_the_cmake_docs_are_the_cli_ones():
    from ireegen.config.modes import EXECUTION_MODELS

    for path in (CMAKE_MD, CMAKE_DIR / "ireegenConfig.cmake"):
        m = re.search(r"EXECUTION_MODEL[^\n]*?((?:[a-z-]+ ?\| ?)+[a-z-]+)", path.read_text())
        assert m, f"{path.name}: no EXECUTION_MODEL a | b | ... line"
        assert [s.strip() for s in m.group(1).split("|")] == list(EXECUTION_MODELS), path.name


def test_every_cache_variable_is_documented_and_every_documented_one_exists():
    text = CMAKE_MD.read_text()
    variables = cache_variables()
    assert variables - _variables_table(text) == set(), "docs/cmake.md's variable table lacks these"
    everything = "".join(p.read_text() for p in [*CMAKE_DIR.glob("*.cmake"), *CMAKE_DIR.glob("toolchains/*.cmake")])
    named = set(re.findall(r"(?<![\w])(IREEGEN_\w+)", text))
    unknown = {n for n in named if not re.search(rf"(?<![\w]){n}\b", everything)}
    assert not unknown, f"docs/cmake.md names IREEGEN_ variables or properties the CMake files lack: {unknown}"


# --- CONTRIBUTING.md ------------------------------------------------------


def test_contributing_names_every_stage_package_and_only_those():
    from test_layout import STAGES

    text = (ROOT / "CONTRIBUTING.md").read_text()
    table = text[text.index("| package |") :]
    table = table[: table.index("\n\n")]
    named = {m for line in table.splitlines()[2:] for m in re.findall(r"^\| `(\w+)/`", line)}
    assert named == {s for s in STAGES if s}
