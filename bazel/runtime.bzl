"""ireegen_iree_runtime(): a prebuilt IREE runtime SDK as a Bazel repository.

In the WORKSPACE:

    load("@ireegen//:runtime.bzl", "ireegen_iree_runtime")
    ireegen_iree_runtime(name = "iree_runtime", path = "/opt/iree-runtime")

`path` is what CMake's IREERuntime_DIR takes (a directory with
IREERuntimeConfig.cmake: an installed prefix's lib/cmake/IREE or a build
tree's), or the installed prefix itself; empty: the environment's
IREERuntime_DIR.  Every exported runtime target of the SDK's CMake package
(IREETargets-Runtime*.cmake) becomes a cc_library of the same name: its
static archive, the targets it links, its include directories, definitions
and system libraries.  ireegen_model() with a VM mode depends on the ones
its mode links (docs/bazel.md).

The package files are data: a name, path, definition or option goes into
the generated BUILD only as a checked string literal (names and definitions
of [A-Za-z0-9_] only), archives and headers only as symbolic links.  A
target whose package entry this rule cannot take (a missing archive, a
compile option other than -I, a generator expression, a link item it does
not know) fails when something depends on it, naming the target and why.
"""

# Link items of the package that are no target of it -> linkopts.
_SYSTEM_LIBRARIES = {
    "Threads::Threads": ["-pthread"],
    "-pthread": ["-pthread"],
    "dl": ["-ldl"],
    "-ldl": ["-ldl"],
    "m": ["-lm"],
    "-lm": ["-lm"],
    "rt": ["-lrt"],
    "-lrt": ["-lrt"],
}

# The header files the SDK's include directories hold (by extension).
_HEADER_PATTERNS = ["*.h", "*.hpp", "*.inc", "*.inl"]

_NAME_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"
_PATH_CHARS = _NAME_CHARS + "/.-+"

# The imported-location properties, in the order a configuration is preferred.
_LOCATIONS = [
    "IMPORTED_LOCATION_RELEASE",
    "IMPORTED_LOCATION_MINSIZEREL",
    "IMPORTED_LOCATION_RELWITHDEBINFO",
    "IMPORTED_LOCATION_NOCONFIG",
    "IMPORTED_LOCATION_DEBUG",
    "IMPORTED_LOCATION",
]

_REFUSED_BZL = '''"""A package target ireegen_iree_runtime could not take: fails when used."""

def _refused_impl(ctx):
    fail("ireegen_iree_runtime(%s): %s" % (ctx.attr.repository, ctx.attr.reason))

refused = rule(implementation = _refused_impl, attrs = {"repository": attr.string(), "reason": attr.string()})
'''

def _only(text, chars):
    if not text:
        return False
    for c in text.elems():
        if c not in chars:
            return False
    return True

def _package_dir(rctx, path):
    """The directory with IREERuntimeConfig.cmake, from `path` (absolute)."""
    for candidate in [path + "/lib/cmake/IREE", path + "/lib64/cmake/IREE", path]:
        if rctx.path(candidate + "/IREERuntimeConfig.cmake").exists:
            return rctx.path(candidate)
    fail("ireegen_iree_runtime: %s has no IREERuntimeConfig.cmake (give an IREE runtime's lib/cmake/IREE, " % path +
         "or the prefix it was installed to)")

def _import_prefix(package, text):
    """${_IMPORT_PREFIX} of an installed export: the package directory, up
    as many levels as the file's get_filename_component() lines go."""
    prefix = package
    for _ in range(text.count('get_filename_component(_IMPORT_PREFIX "${_IMPORT_PREFIX}" PATH)')):
        prefix = prefix.dirname
    return str(prefix)

def _parse(rctx, package):
    """{target: {"kind": STATIC|INTERFACE|..., property: value}} of the
    package's IREETargets-Runtime*.cmake files."""
    targets = {}
    names = sorted([f.basename for f in package.readdir()])
    files = [package.get_child(n) for n in names if n.startswith("IREETargets-Runtime") and n.endswith(".cmake")]
    if not files:
        fail("ireegen_iree_runtime: %s has no IREETargets-Runtime*.cmake, the runtime's exported targets" % package)
    texts = [rctx.read(f) for f in files]
    # The main file computes ${_IMPORT_PREFIX}; the per-configuration files use it.
    prefix = str(package)
    for text in texts:
        if "get_filename_component(_IMPORT_PREFIX" in text:
            prefix = _import_prefix(package, text)
    for text in texts:
        current = None
        for line in text.splitlines():
            stripped = line.strip()
            if stripped.startswith("add_library(") and stripped.endswith(" IMPORTED)"):
                words = stripped[len("add_library("):-len(")")].split(" ")
                if len(words) == 3:
                    targets.setdefault(words[0], {})["kind"] = words[1]
            elif stripped.startswith("set_target_properties(") and stripped.endswith(" PROPERTIES"):
                current = targets.setdefault(stripped[len("set_target_properties("):-len(" PROPERTIES")], {})
            elif stripped == ")":
                current = None
            elif current != None and " " in stripped:
                key, value = stripped.split(" ", 1)
                if len(value) >= 2 and value.startswith('"') and value.endswith('"'):
                    current[key] = value[1:-1].replace("${_IMPORT_PREFIX}", prefix)
    return targets

def _items(value):
    return [v for v in value.split(";") if v] if value else []

def _directory(path):
    """An include directory as one spelling: no trailing or doubled '/'."""
    for _ in range(len(path)):
        if "//" not in path:
            break
        path = path.replace("//", "/")
    return path.rstrip("/") if path != "/" else path

def _target(name, props, targets):
    """(a struct of the cc_library of `name`, None) or (None, why not)."""
    if not _only(name, _NAME_CHARS):
        return None, "target %r has a name Bazel cannot take here" % name
    kind = props.get("kind")
    if kind not in ("STATIC", "INTERFACE"):
        return None, "%s is a %s library; only static and interface libraries are taken" % (name, kind)
    archive = None
    if kind == "STATIC":
        for key in _LOCATIONS:
            if props.get(key):
                archive = props[key]
                break
        if not archive or not archive.startswith("/") or not archive.endswith(".a"):
            return None, "%s has no static archive in the SDK's package" % name
    deps, linkopts, defines, includes = [], [], [], []
    for item in _items(props.get("INTERFACE_LINK_LIBRARIES")) + _items(props.get("INTERFACE_LINK_OPTIONS")):
        if item.startswith("\\$<LINK_ONLY:") and item.endswith(">"):
            item = item[len("\\$<LINK_ONLY:"):-1]
        if item in targets:
            if not _only(item, _NAME_CHARS):
                return None, "%s links %r, a target name Bazel cannot take here" % (name, item)
            if item != name:
                deps.append(item)
        elif item in _SYSTEM_LIBRARIES:
            linkopts += [o for o in _SYSTEM_LIBRARIES[item] if o not in linkopts]
        else:
            return None, "%s links %r, which is no target of the SDK and no system library this rule knows" % (name, item)
    for d in _items(props.get("INTERFACE_COMPILE_DEFINITIONS")):
        if not _only(d.replace("=", "", 1), _NAME_CHARS):
            return None, "%s has the compile definition %r; only NAME or NAME=VALUE of [A-Za-z0-9_] are taken" % (name, d)
        defines.append(d)
    for option in _items(props.get("INTERFACE_COMPILE_OPTIONS")):
        if not option.startswith("-I"):
            return None, "%s has the compile option %r; only -I<directory> is taken" % (name, option)
        includes.append(option[2:])
    includes = _items(props.get("INTERFACE_INCLUDE_DIRECTORIES")) + includes
    for d in includes:
        if not d.startswith("/") or not _only(d, _PATH_CHARS):
            return None, "%s has the include directory %r; only absolute paths of [A-Za-z0-9_/.+-] are taken" % (name, d)
    return struct(
        archive = archive,
        deps = deps,
        linkopts = linkopts,
        defines = defines,
        includes = [_directory(d) for d in includes],
    ), None

def _link_headers(rctx, directory, index):
    """The headers under `directory` (itself followed if it is a symbolic
    link), linked under include/<index>/ file by file, so that no BUILD file
    of the SDK splits the package."""
    args = ["find", "-H", directory, "-type", "f", "("]
    for i, pattern in enumerate(_HEADER_PATTERNS):
        args += (["-o"] if i else []) + ["-name", pattern]
    result = rctx.execute(args + [")"], quiet = True)
    if result.return_code != 0:
        fail("ireegen_iree_runtime: cannot list the headers of %s: %s" % (directory, result.stderr.strip()))
    for path in result.stdout.splitlines():
        relative = path[len(directory) + 1:]
        if path.startswith(directory + "/") and _only(relative, _PATH_CHARS) and ".." not in relative.split("/"):
            rctx.symlink(path, "include/%d/%s" % (index, relative))

def _impl(rctx):
    path = rctx.attr.path or rctx.os.environ.get("IREERuntime_DIR", "")
    if not path:
        fail("ireegen_iree_runtime(%s): give path, or set IREERuntime_DIR, to an IREE runtime's lib/cmake/IREE" %
             rctx.name)
    if not path.startswith("/"):
        path = str(rctx.path(Label("@//:WORKSPACE")).dirname) + "/" + path
    package = _package_dir(rctx, path)
    targets = _parse(rctx, package)
    rules, directories, order = [], {}, []
    for name in sorted(targets):
        target, why = _target(name, targets[name], targets)
        if target == None:
            if _only(name, _NAME_CHARS):
                rules.append("refused(name = %r, repository = %r, reason = %r, visibility = [\"//visibility:public\"])" %
                             (name, rctx.name, why))
            continue
        deps = [":" + d for d in target.deps]
        for d in target.includes:
            if d not in directories:
                directories[d] = len(order)
                order.append(d)
            deps.append(":_ireegen_include_%d" % directories[d])
        srcs = []
        if target.archive:
            if not rctx.path(target.archive).exists:
                rules.append("refused(name = %r, repository = %r, reason = %r, visibility = [\"//visibility:public\"])" % (
                    name,
                    rctx.name,
                    "the SDK has no %s (%s was not built)" % (target.archive, name),
                ))
                continue
            srcs = ["lib/lib%s.a" % name]
            rctx.symlink(target.archive, srcs[0])
        rules.append("cc_library(name = %r, srcs = %r, deps = %r, defines = %r, linkopts = %r, visibility = [\"//visibility:public\"])" % (
            name,
            srcs,
            sorted({d: 0 for d in deps}.keys()),
            target.defines,
            target.linkopts,
        ))
    for index, directory in enumerate(order):
        if not rctx.path(directory).exists:
            fail("ireegen_iree_runtime: the SDK's include directory %s does not exist" % directory)
        _link_headers(rctx, directory, index)
        rules.append("cc_library(name = %r, hdrs = glob(%r), includes = [%r])" % (
            "_ireegen_include_%d" % index,
            ["include/%d/**/%s" % (index, p) for p in _HEADER_PATTERNS],
            "include/%d" % index,
        ))
    rctx.file("refused.bzl", _REFUSED_BZL)
    rctx.file("WORKSPACE", "workspace(name = %r)\n" % rctx.name)
    rctx.file("BUILD", "\n".join([
        "# Generated by ireegen_iree_runtime from the IREE runtime SDK's CMake package.",
        'load(":refused.bzl", "refused")',
        "",
    ] + rules) + "\n")

ireegen_iree_runtime = repository_rule(
    implementation = _impl,
    doc = "A prebuilt IREE runtime SDK's exported targets as cc_library targets of the same names.",
    attrs = {
        "path": attr.string(doc = "the SDK's lib/cmake/IREE or its installed prefix; empty: $IREERuntime_DIR"),
    },
    environ = ["IREERuntime_DIR"],
    local = True,
)
