"""The parity report: one row per output, mode and reference, with the
verdicts that fail a run and the table both `parity` and emit's
verification print."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from ireegen.check.inputs import InputChoice

REFERENCE = "async"
EXPECTED = "expected"  # the name of reference outputs given with --expected

# verdict -> does it fail the run (exit 1)?
VERDICTS = {
    "reference": False,
    "ok": False,
    "no-reference": False,
    "mismatch": True,
    "run-error": True,
    "ireegen-error": True,
}


@dataclass
class Row:
    function: str
    output: str
    mode: str
    max_abs_error: float | None
    max_rel_error: float | None
    verdict: str  # a VERDICTS key
    message: str = ""
    against: str = REFERENCE  # what the mode is compared with: async, or expected
    dtype: str = ""
    shape: list | None = None
    value_range: list | None = None  # [min, max] of this mode's output (finite values)


@dataclass
class Report:
    model: str
    compiler_version: str
    runtime: str
    modes: list
    rows: list = field(default_factory=list)
    reference: str = REFERENCE
    compile_errors: dict = field(default_factory=dict)  # mode -> message (refused or does not compile)
    ireegen_errors: dict = field(default_factory=dict)  # mode -> message (ireegen itself failed)
    inputs: dict = field(default_factory=dict)  # function -> InputChoice
    results: dict = field(default_factory=dict)  # mode -> function -> outputs (not in the JSON)

    @property
    def exit_code(self) -> int:
        if self.compile_errors:
            return 2
        failed = any(VERDICTS.get(r.verdict, True) for r in self.rows) or self.ireegen_errors
        return 1 if failed else 0

    @property
    def agrees(self) -> bool:
        return self.exit_code == 0

    @property
    def notes(self) -> list:
        return [c.note for c in self.inputs.values() if c.note]

    def to_json(self) -> dict:
        return {
            "model": self.model,
            "compiler_version": self.compiler_version,
            "runtime": self.runtime,
            "modes": self.modes,
            "reference": self.reference,
            "exit_code": self.exit_code,
            "compile_errors": self.compile_errors,
            "ireegen_errors": self.ireegen_errors,
            "inputs": {f: c.to_json() for f, c in self.inputs.items()},
            "notes": self.notes,
            "rows": [asdict(r) for r in self.rows],
        }

    def table(self) -> str:
        header = ("function", "output", "mode", "vs", "max abs err", "max rel err", "range", "verdict")
        lines = [header]
        for r in self.rows:
            lines.append(
                (
                    r.function,
                    r.output,
                    r.mode,
                    "-" if r.verdict == "reference" else r.against,
                    _fmt(r.max_abs_error),
                    _fmt(r.max_rel_error),
                    _fmt_range(r.value_range),
                    r.verdict,
                )
            )
        widths = [max(len(str(line[i])) for line in lines) for i in range(len(header))]
        text = [
            f"parity of {self.model} (compiler {self.compiler_version}, runtime {self.runtime})",
            "  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip(),
            "  ".join("-" * w for w in widths),
        ]
        text += ["  ".join(str(c).ljust(w) for c, w in zip(line, widths)).rstrip() for line in lines[1:]]
        text += [_inputs_line(c) for c in self.inputs.values()]
        text += [f"note: {n}" for n in self.notes]
        seen = set()
        for r in self.rows:
            if r.message and (r.mode, r.function) not in seen:
                seen.add((r.mode, r.function))
                text.append(f"{r.mode} @{r.function}: {r.message.strip().splitlines()[0][:300]}")
        for mode, message in self.ireegen_errors.items():
            text.append(f"{mode}: ireegen error: {message.strip()[:2000]}")
        for mode, message in self.compile_errors.items():
            text.append(f"{mode}: does not compile: {message.strip()[:2000]}")
        return "\n".join(text)


def _fmt(v) -> str:
    return "-" if v is None else f"{v:.3g}"


def _fmt_range(r) -> str:
    return "-" if not r else f"[{_fmt(r[0])}, {_fmt(r[1])}]"


def _inputs_line(c: InputChoice) -> str:
    if c.distribution == "given":
        return f"inputs @{c.function}: given"
    tried = f" (after {', '.join(c.tried)} gave degenerate outputs)" if c.tried else ""
    return f"inputs @{c.function}: {c.distribution}, seed {c.seed}{tried}"
