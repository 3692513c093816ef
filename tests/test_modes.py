"""The mode table: which combinations exist and which flags each maps to."""

import pytest

from ireegen.common.errors import UsageError
from ireegen.config.modes import EXECUTION_MODELS, host_triple, make_config


def all_combinations():
    """Every VM-based combination (runtimeless has no module format)."""
    for em, model in EXECUTION_MODELS.items():
        if not model.has_vm_module:
            continue
        for fmt in model.executable_formats:
            for mf in ("vmfb", "emitc"):
                yield em, fmt, mf


@pytest.mark.parametrize("em,fmt,mf", list(all_combinations()))
def test_flags_for_every_combination(em, fmt, mf):
    config = make_config(em, fmt, mf)
    flags = config.compile_flags("/out/x.o")
    iree_em = {"async": "async-internal"}.get(em, em)
    assert f"--iree-execution-model={iree_em}" in flags
    assert "--iree-hal-target-device=local" in flags
    backend = {"vmvx": "vmvx-inline" if em == "inline-static" else "vmvx"}.get(fmt, "llvm-cpu")
    assert f"--iree-hal-local-target-device-backends={backend}" in flags
    assert f"--output-format={'vm-bytecode' if mf == 'vmfb' else 'vm-c'}" in flags
    llvm = fmt != "vmvx"
    assert (f"--iree-llvmcpu-target-triple={host_triple()}" in flags) == llvm
    default_cpu = "x86-64-v3" if host_triple().startswith("x86_64") else "generic"
    assert (f"--iree-llvmcpu-target-cpu={default_cpu}" in flags) == llvm
    static = fmt == "static-library"
    assert ("--iree-llvmcpu-static-library-output-path=/out/x.o" in flags) == static
    assert ("--iree-llvmcpu-link-embedded=false" in flags) == static
    assert ("--iree-llvmcpu-link-embedded=true" in flags) == (fmt == "embedded-elf")


def test_runtimeless_flags():
    config = make_config("runtimeless", target_triple="aarch64-unknown-linux-gnu")
    assert config.module_format is None and config.executable_format.name == "static-library"
    flags = config.compile_flags("/out/x.o")
    assert "--compile-to=hal" in flags and "--iree-hal-memoization=false" in flags
    assert "--iree-hal-indirect-command-buffers=false" in flags
    assert not any(f.startswith("--output-format") for f in flags)
    assert "--iree-llvmcpu-target-triple=aarch64-unknown-linux-gnu" in flags
    assert "--iree-llvmcpu-static-library-output-path=/out/x.o" in flags
    for bad in (dict(module_format="vmfb"), dict(executable_format="embedded-elf")):
        with pytest.raises(UsageError):
            make_config("runtimeless", **bad)


def test_defaults():
    assert make_config().executable_format.name == "embedded-elf"
    assert make_config("inline-static").executable_format.name == "vmvx"
    assert make_config("inline-dynamic").executable_format.name == "embedded-elf"
    assert make_config().target.cpu == ("x86-64-v3" if host_triple().startswith("x86_64") else "generic")
    assert make_config().target.cpu_features == ""


@pytest.mark.parametrize(
    "triple,cpu",
    [
        ("x86_64-unknown-linux-gnu", "x86-64-v3"),
        ("x86_64-pc-windows-msvc", "x86-64-v3"),
        ("aarch64-unknown-linux-gnu", "generic"),
        ("riscv64-unknown-linux-gnu", "generic-rv64"),
        ("thumbv7em-none-eabihf", "cortex-m4"),
    ],
)
def test_default_cpu_per_architecture(triple, cpu):
    """x86_64 compiles for x86-64-v3 (AVX2 + FMA) unless told otherwise; the
    portable choice stays one flag away; other architectures keep theirs."""
    assert make_config(target_triple=triple).target.cpu == cpu
    if not cpu.startswith("cortex"):
        assert make_config(target_triple=triple, target_cpu="generic").target.cpu == "generic"


def test_missing_cpu_features_are_named():
    from ireegen.config.baselines import CPU_NEEDS, missing_here

    sse2_only = frozenset({"sse", "sse2", "fpu"})
    assert "avx2" in missing_here("x86-64-v3", sse2_only) and "fma" in missing_here("x86-64-v3", sse2_only)
    assert missing_here("x86-64-v3", frozenset(CPU_NEEDS["x86-64-v3"])) == ()
    assert missing_here("generic", sse2_only) == () and missing_here("cortex-m4", sse2_only) == ()


def test_host_cpu_on_request():
    t = make_config(target_cpu="host").target
    assert (t.cpu, t.cpu_features) == ("host", "host")


def test_cross_triple():
    flags = make_config(target_triple="riscv64-unknown-linux-gnu", target_cpu_features="+m,+a,+f,+d").compile_flags()
    assert "--iree-llvmcpu-target-triple=riscv64-unknown-linux-gnu" in flags
    assert "--iree-llvmcpu-target-cpu-features=+m,+a,+f,+d" in flags


@pytest.mark.parametrize(
    "kwargs,words",
    [
        (dict(execution_model="inline-static", executable_format="static-library"), ["inline-static", "vmvx"]),
        (dict(execution_model="inline-static", executable_format="embedded-elf"), ["inline-static", "vmvx"]),
        (dict(execution_model="sync"), ["--execution-model", "async, inline-static, inline-dynamic"]),
        (dict(executable_format="so"), ["--executable-format", "embedded-elf, static-library, vmvx"]),
        (dict(module_format="tflite"), ["--module-format", "vmfb, emitc"]),
        (dict(execution_model="inline-static", target_cpu="host"), ["--target-cpu", "vmvx"]),
    ],
)
def test_impossible_combinations_name_the_choices(kwargs, words):
    with pytest.raises(UsageError) as e:
        make_config(**kwargs)
    for w in words:
        assert w in str(e.value)


def test_riscv64_defaults_to_the_linux_baseline():
    t = make_config(target_triple="riscv64-unknown-linux-gnu").target
    assert (t.cpu, t.cpu_features, t.abi) == ("generic-rv64", "+m,+a,+f,+d,+c", "lp64d")
    assert "--iree-llvmcpu-target-abi=lp64d" in make_config(target_triple="riscv64-unknown-linux-gnu").compile_flags()
