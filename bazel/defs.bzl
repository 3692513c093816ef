"""ireegen_model(): a model compiled by `ireegen emit` into a cc_library.

Load it from the repository `python -m ireegen --bazel-dir` prints
(docs/bazel.md).  Only native rules and ctx.actions.run, so that it loads on
Debian's Bazel 4.2.3 as on current Bazel.
"""

load(":layout.bzl", "OUTPUTS", "PLACEHOLDER")

IreegenPythonInfo = provider(doc = "The Python that runs ireegen.", fields = ["path"])

def _python_flag_impl(ctx):
    return [IreegenPythonInfo(path = ctx.build_setting_value)]

# `--@ireegen//:python=/path/to/python3`: the Python that has ireegen.
python_flag = rule(implementation = _python_flag_impl, build_setting = config.string(flag = True))

def _layout(model_name, execution_model, executable_format, module_format, data_format):
    if not data_format and module_format != "emitc":
        data_format = "c"
    key = "|".join([execution_model, executable_format, module_format, data_format])
    entry = OUTPUTS.get(key)
    if entry == None:
        fail("ireegen_model: unknown execution_model/executable_format/module_format/data_format %s" % key)
    if "error" in entry:
        fail("ireegen_model(%s): %s" % (model_name, entry["error"]))
    return data_format, struct(
        hdrs = [f.replace(PLACEHOLDER, model_name) for f in entry["hdrs"]],
        srcs = [f.replace(PLACEHOLDER, model_name) for f in entry["srcs"]],
        data = [f.replace(PLACEHOLDER, model_name) for f in entry["data"]],
        linkopts = entry["linkopts"],
        runtime = entry["runtime"],
    )

_COPY = "import shutil, sys; shutil.copyfile(sys.argv[1], sys.argv[2])"

def _as_path(path):
    """`path` as an argument no program reads as an option: absolute or `./path`."""
    return path if path.startswith("/") else "./" + path

def _side_by_side(ctx, python, main, others, subdir, attr_name):
    """`main` and `others` (files in its directory or below), copied side by
    side into a directory of their own.  ireegen reads no file through a
    symbolic link, which is what a sandbox makes of every input (onnx
    refuses such external data too), so the emit then runs unsandboxed on
    these copies, and the directory holds only the declared files.
    Returns (main's copy, [all copies])."""
    base = main.short_path[:-len(main.basename)]
    copies = []
    for f in [main] + others:
        if not f.short_path.startswith(base):
            fail("ireegen_model: %s %s is not in %s's directory or below it" % (attr_name, f.short_path, main.short_path))
        out = ctx.actions.declare_file(ctx.label.name + "_" + subdir + "/" + f.short_path[len(base):])
        ctx.actions.run(
            executable = python,
            arguments = ["-c", _COPY, f.path, out.path],
            inputs = [f],
            outputs = [out],
            mnemonic = "IreegenCopy",
            progress_message = "ireegen: copying %s" % f.short_path,
            use_default_shell_env = True,
        )
        copies.append(out)
    return copies[0], copies

def _emit_impl(ctx):
    data_format, layout = _layout(
        ctx.attr.model_name,
        ctx.attr.execution_model,
        ctx.attr.executable_format,
        ctx.attr.module_format,
        ctx.attr.data_format,
    )
    hdrs = [ctx.actions.declare_file(ctx.label.name + "/" + f) for f in layout.hdrs]
    srcs = [ctx.actions.declare_file(ctx.label.name + "/" + f) for f in layout.srcs]
    data = [ctx.actions.declare_file(ctx.label.name + "/" + f) for f in layout.data]
    manifest = ctx.actions.declare_file(ctx.label.name + "/manifest.json")

    python = ctx.attr._python[IreegenPythonInfo].path
    model, model_inputs = ctx.file.src, [ctx.file.src]
    requirements = {}
    if ctx.file.src.extension == "onnx" and ctx.files.model_data:
        model, model_inputs = _side_by_side(ctx, python, ctx.file.src, ctx.files.model_data, "src", "model_data")
        requirements = {"no-sandbox": "1"}
    kernel_inputs = []
    if ctx.file.kernels:
        spec, kernel_inputs = _side_by_side(ctx, python, ctx.file.kernels, ctx.files.kernel_files, "kernels", "kernel_files")
        requirements = {"no-sandbox": "1"}
    elif ctx.files.kernel_files:
        fail("ireegen_model(%s): kernel_files needs kernels, the spec that names them" % ctx.attr.model_name)

    args = ctx.actions.args()
    # Paths from the workspace go as values (`--flag=path`) or as `./path`:
    # a file named `-x.mlir` or `@x` is never read as an option.
    args.add_all(["-m", "ireegen", "emit", _as_path(model.path), "-o", _as_path(manifest.dirname)])
    args.add_all(["--name", ctx.attr.model_name, "--execution-model", ctx.attr.execution_model])
    for flag, value in [
        ("--executable-format", ctx.attr.executable_format),
        ("--module-format", ctx.attr.module_format),
        ("--data-format", data_format),
        ("--target-triple", ctx.attr.target_triple),
        ("--target-cpu", ctx.attr.target_cpu),
        ("--target-cpu-features", ctx.attr.target_cpu_features),
        ("--optimize-for", ctx.attr.optimize_for),
        ("--tune", ctx.attr.tune),
    ]:
        if value:
            args.add(flag + "=" + value)
    args.add_all(ctx.attr.flags, format_each = "--iree-flag=%s")
    args.add_all(ctx.attr.input_shapes, format_each = "--input-shape=%s")
    args.add_all(ctx.attr.input_values, format_each = "--input-value=%s")
    if ctx.file.kernels:
        args.add("--kernels=" + spec.path)
    if not ctx.attr.builtin_kernels:
        args.add("--no-builtin-kernels")
    if ctx.attr.quantized_io:
        args.add("--quantized-io")
    if not ctx.attr.verify:
        args.add("--no-verify")
    if ctx.file.verify_inputs:
        args.add("--verify-inputs=" + ctx.file.verify_inputs.path)

    ctx.actions.run(
        executable = python,
        arguments = [args],
        # The model, an ONNX model's external data files beside it, the
        # kernel spec and its files, the verification inputs.
        inputs = model_inputs + kernel_inputs + ctx.files.verify_inputs,
        execution_requirements = requirements,
        outputs = hdrs + srcs + data + [manifest],
        mnemonic = "IreegenEmit",
        progress_message = "ireegen: generating %s (%s) from %s" % (
            ctx.attr.model_name,
            ctx.attr.execution_model,
            ctx.file.src.short_path,
        ),
        use_default_shell_env = True,
    )
    return [
        DefaultInfo(files = depset(hdrs + srcs + data + [manifest])),
        OutputGroupInfo(
            hdrs = depset(hdrs),
            srcs = depset(srcs),
            data = depset(data),
            manifest = depset([manifest]),
        ),
    ]

ireegen_emit = rule(
    implementation = _emit_impl,
    doc = "The files `ireegen emit` writes for one model (ireegen_model() wraps them in a cc_library).",
    attrs = {
        "src": attr.label(allow_single_file = [".mlir", ".mlirbc", ".onnx", ".tflite"], mandatory = True),
        "model_data": attr.label_list(allow_files = True, doc = "an ONNX model's external data files"),
        "model_name": attr.string(mandatory = True),
        "execution_model": attr.string(default = "async"),
        "executable_format": attr.string(),
        "module_format": attr.string(),
        "data_format": attr.string(),
        "target_triple": attr.string(),
        "target_cpu": attr.string(),
        "target_cpu_features": attr.string(),
        "optimize_for": attr.string(),
        # A Bazel action is hermetic: no timed search unless asked for.
        "tune": attr.string(default = "off"),
        "flags": attr.string_list(),
        "input_shapes": attr.string_list(),
        "input_values": attr.string_list(),
        "verify": attr.bool(default = True),
        "verify_inputs": attr.label(allow_single_file = [".npz"]),
        "kernels": attr.label(allow_single_file = [".json"], doc = "a --kernels spec (docs/kernels.md)"),
        "kernel_files": attr.label_list(allow_files = True, doc = "the files the kernel spec names"),
        "builtin_kernels": attr.bool(default = True),
        "quantized_io": attr.bool(default = False),
        "_python": attr.label(default = Label("//:python")),
    },
)

def ireegen_model(
        name,
        src,
        model_name = None,
        execution_model = "async",
        executable_format = "",
        module_format = "",
        data_format = "",
        target_triple = "",
        target_cpu = "",
        target_cpu_features = "",
        optimize_for = "",
        flags = [],
        input_shapes = [],
        input_values = [],
        verify = True,
        verify_inputs = None,
        model_data = [],
        kernels = None,
        kernel_files = [],
        builtin_kernels = True,
        quantized_io = False,
        constants_section = "",
        arena_section = "",
        iree_runtime = "@iree_runtime",
        **kwargs):
    """A cc_library `name` of the model `src`, as ireegen_add_model() makes in CMake.

    Include "<model_name>.h" (model_name defaults to `name`).  The generation
    is the target `<name>_ireegen`; its output group `manifest` is manifest.json.
    `model_data`: an ONNX model's external data files (inputs of the action).
    `kernels`: a `--kernels` spec; `kernel_files`: the sources, headers and
    match spec it names, in its directory or below (docs/kernels.md).
    `builtin_kernels = False`: `--no-builtin-kernels`.
    `quantized_io = True`: `--quantized-io` (a QDQ model's int8 interface).
    `iree_runtime`: the repository of ireegen_iree_runtime() (runtime.bzl)
    whose targets a VM mode links, as CMake links them; None: the caller
    puts IREE's runtime in `deps` itself.
    Other keyword arguments (visibility, deps, copts, ...) go to the cc_library.
    """
    model_name = model_name or name
    _, layout = _layout(model_name, execution_model, executable_format, module_format, data_format)
    gen = name + "_ireegen"
    copts = []
    if [f for f in layout.srcs if f.endswith(".S")]:
        # The assembler .incbin's the blobs beside the .S: they are inputs of
        # its compile, found on the include path.
        pkg = native.package_name()
        copts.append("-I$(BINDIR)/" + (pkg + "/" if pkg else "") + gen)
    ireegen_emit(
        name = gen,
        src = src,
        model_data = model_data,
        model_name = model_name,
        execution_model = execution_model,
        executable_format = executable_format,
        module_format = module_format,
        data_format = data_format,
        target_triple = target_triple,
        target_cpu = target_cpu,
        target_cpu_features = target_cpu_features,
        optimize_for = optimize_for,
        flags = flags,
        input_shapes = input_shapes,
        input_values = input_values,
        verify = verify,
        verify_inputs = verify_inputs,
        kernels = kernels,
        kernel_files = kernel_files,
        builtin_kernels = builtin_kernels,
        quantized_io = quantized_io,
        visibility = ["//visibility:private"],
    )
    for group in ("hdrs", "srcs", "data"):
        native.filegroup(name = gen + "_" + group, srcs = [":" + gen], output_group = group)
    runtime = [iree_runtime + "//:" + t for t in layout.runtime] if iree_runtime else []
    defines = []
    for macro, section in [("CONSTANTS", constants_section), ("ARENA", arena_section)]:
        if section:
            defines.append('%s_%s_SECTION="%s"' % (model_name.upper(), macro, section))
    native.cc_library(
        name = name,
        hdrs = [":" + gen + "_hdrs"],
        srcs = [":" + gen + "_srcs"],
        textual_hdrs = [":" + gen + "_data"] if layout.data else [],
        includes = [gen],
        copts = copts + kwargs.pop("copts", []),
        linkopts = layout.linkopts + kwargs.pop("linkopts", []),
        local_defines = defines + kwargs.pop("local_defines", []),
        deps = runtime + kwargs.pop("deps", []),
        **kwargs
    )
