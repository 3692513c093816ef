"""Emitted bytes depend on the model and the options only: the same model
from two checkouts in different places, emitted into two different output
directories (one by absolute, one by relative paths), gives identical files,
manifest included, in every mode and format.  Also: EmitC's ref-copy order,
which IREE leaves to pointer hashing, comes out canonical."""

import os
import shutil

import pytest
from conftest import SAMPLES
from test_modes import all_combinations

from ireegen.cli import main
from ireegen.compile.emitc_order import canonical_ref_copies

CONFIGS = [c for c in all_combinations()] + [("runtimeless", "static-library", None)]


def _id(c):
    return "-".join(x for x in c if x)


def _emit(model, out, combo, cwd):
    em, fmt, mf = combo
    args = ["emit", str(model), "-o", str(out), "--execution-model", em, "--executable-format", fmt]
    if mf:
        args += ["--module-format", mf]
    old = os.getcwd()
    os.chdir(cwd)
    try:
        assert main(args) == 0
    finally:
        os.chdir(old)


def _tree(out):
    return {p.name: p.read_bytes() for p in sorted(out.iterdir()) if not p.name.startswith(".")}


@pytest.mark.parametrize("combo", CONFIGS, ids=_id)
def test_same_bytes_from_other_checkout_and_outdir(tmp_path, combo):
    one = tmp_path / "checkout-one" / "samples" / "mlp"
    two = tmp_path / "elsewhere" / "a much longer path, with spaces" / "ckout2"
    for d in (one, two):
        d.mkdir(parents=True)
        shutil.copy(SAMPLES / "mlp" / "mlp.mlir", d / "mlp.mlir")
    out_one = tmp_path / "build" / "out"
    _emit(one / "mlp.mlir", out_one, combo, tmp_path)  # absolute paths
    (two / "b" / "deeper").mkdir(parents=True)
    _emit("mlp.mlir", "b/deeper/generated", combo, two)  # relative paths
    a, b = _tree(out_one), _tree(two / "b" / "deeper" / "generated")
    assert sorted(a) == sorted(b)
    for name in a:
        assert a[name] == b[name], f"{name} differs between the two emits"
        for needle in (str(tmp_path).encode(), b".ireegen-staging", b"checkout-one", b"ckout2"):
            assert needle not in a[name], f"{name} contains {needle!r}"


def test_emitc_ref_copy_order_is_canonical():
    # Two orders of the same independent ref copies, as IREE prints them.
    def group(pairs):
        lines = []
        for n, (src, _) in enumerate(pairs):
            t, v, s = f"v{100 + 3 * n}", f"v{99 + 3 * n}", f"v{101 + 3 * n}"
            lines += [
                "  ;",
                f"  {t} = &{v};",
                f"  {s} = sizeof(iree_vm_ref_t);",
                f"  memset({t}, 0, {s});",
                f"  iree_vm_ref_retain({src}, {t});",
            ]
        lines += [f"  iree_vm_ref_assign(v{100 + 3 * n}, {dst});" for n, (_, dst) in enumerate(pairs)]
        return "label1:\n" + "\n".join(lines) + "\n  goto label2;\n"

    a = group([("v17", "v8"), ("v11", "v5"), ("v3", "v9")])
    b = group([("v11", "v5"), ("v3", "v9"), ("v17", "v8")])
    assert a != b
    assert canonical_ref_copies(a) == canonical_ref_copies(b) == group([("v11", "v5"), ("v17", "v8"), ("v3", "v9")])
    # A group that does not match exactly (assign of another temp) is left alone.
    odd = b.replace("iree_vm_ref_assign(v103,", "iree_vm_ref_assign(v42,")
    assert canonical_ref_copies(odd) == odd


def test_content_key_covers_the_templates(tmp_path, monkeypatch):
    """The key hashes ireegen's templates by relative path and bytes: two
    copies in different places give the installed templates' key, and one
    changed byte in one template gives another key."""
    from ireegen.common.resources import templates_dir
    from ireegen.compile.compiler import find_compiler
    from ireegen.config.modes import make_config
    from ireegen.output import reproducible

    config, compiler = make_config("async"), find_compiler()

    def key():
        return reproducible.content_key(SAMPLES / "mlp" / "mlp.mlir", "mlp", config, [], compiler)

    installed = key()
    copies = [tmp_path / "checkout-one" / "templates", tmp_path / "elsewhere" / "a longer path" / "t"]
    for copy in copies:
        shutil.copytree(templates_dir(), copy)
        monkeypatch.setattr(reproducible, "templates_dir", lambda copy=copy: copy)
        assert key() == installed
    runtime = copies[1] / "runtime.c.j2"
    runtime.write_bytes(runtime.read_bytes().replace(b"\n", b"\n ", 1))
    assert key() != installed


def test_content_key_covers_every_option_that_changes_the_output(tmp_path):
    """--data-format, --optimize-for, --no-workarounds and --input-shape
    change what emit writes, so each gives its own key (they once shared one)."""
    import json

    from ireegen.compile.compiler import find_compiler
    from ireegen.config.modes import make_config
    from ireegen.output.reproducible import content_key

    keys = {}
    for flags in ([], ["--data-format", "c"], ["--optimize-for", "size"], ["--no-workarounds"]):
        out = tmp_path / ("-".join(flags) or "default")
        assert (
            main(
                [
                    "emit",
                    str(SAMPLES / "mlp" / "mlp.mlir"),
                    "-o",
                    str(out),
                    "--execution-model",
                    "runtimeless",
                    "--no-verify",
                    *flags,
                ]
            )
            == 0
        )
        keys[tuple(flags)] = json.loads((out / "manifest.json").read_text())["content_key"]
    assert len(set(keys.values())) == len(keys), keys
    args = (SAMPLES / "mlp" / "mlp.mlir", "mlp", make_config("runtimeless"), [], find_compiler(), True)
    assert len({content_key(*args), content_key(*args, {"x": (1, 8)}), content_key(*args, {"x": (2, 8)})}) == 3
    # --input-value too (the key does not read the model's inputs: any name does).
    by_value = {content_key(*args, None, None, v) for v in (None, {"sr": (16000,)}, {"sr": (8000,)})}
    assert len(by_value) == 3
