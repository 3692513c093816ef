"""Prints the corpus parity report as a Markdown table: for each model, each
execution model's verdict against async, for one IREE release.

    python tests/models/report.py                       # installed IREE, with ireegen's workarounds
    python tests/models/report.py --no-workarounds      # what the raw compiler does
    python tests/models/report.py --iree-venv /path/to/venv-with-iree-3.10
"""

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpus  # noqa: E402

from ireegen.common.errors import IreegenError  # noqa: E402
from ireegen.parity import DEFAULT_MODES, parity, toolchain_from  # noqa: E402


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--iree-venv")
    p.add_argument("--no-workarounds", action="store_true")
    args = p.parse_args()
    toolchain = toolchain_from(iree_venv=args.iree_venv)
    print(f"IREE {toolchain.compiler.version.split(' ')[0]}, workarounds {'off' if args.no_workarounds else 'on'}\n")
    modes = [m for m in DEFAULT_MODES if m != "async"]
    print("| model | " + " | ".join(modes) + " |")
    print("|---" * (len(modes) + 1) + "|")
    for name, case in sorted(corpus.CASES.items()):
        inputs = {}
        for call in case.calls:
            inputs.setdefault(call.function, call.inputs)
        try:
            report = parity(
                case.path,
                inputs=inputs,
                rtol=case.rtol,
                atol=case.atol,
                toolchain=toolchain,
                apply_workarounds=not args.no_workarounds,
            )
        except IreegenError as e:
            print(f"| {name} | " + " | ".join(f"error: {e}" for _ in modes) + " |")
            continue
        cells = []
        for mode in modes:
            if mode in report.compile_errors:
                cells.append("does not compile")
                continue
            verdicts = {r.verdict for r in report.rows if r.mode == mode}
            cells.append("agrees" if verdicts == {"ok"} else ", ".join(sorted(verdicts)))
        print(f"| {name} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
