"""`emit --tune`: choose, per model, the IREE configuration that runs it
fastest, among the candidates of config/tuning.py.

Every candidate that applies to the model is emitted as emit emits its
output, verification included (a compile error or a mismatch skips it with
a note: it can never ship), then timed where the target runs
(cbuild/timing.py): CPU time on this machine, median of alternating rounds,
or instructions counted under qemu for a target that runs there.  The
fastest verified candidate wins; one that is not at least MIN_GAIN faster
than the baseline loses to it (noise is no reason to change flags).  The
choice is recorded under the emit's content key (output/tuning_record.py),
so that the next emit of the same inputs uses it without searching.
"""

from __future__ import annotations

import json
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ireegen.cbuild.native_run import build_runner, built_runner_in
from ireegen.cbuild.timing import CPU_TIME, INSTRUCTIONS, Meter, Timer, build_plugin, this_cpu
from ireegen.cbuild.toolchains import runs_natively, toolchain_for
from ireegen.check.inputs import draw
from ireegen.check.module_timing import ModuleTimer
from ireegen.common.clock import cpu_seconds
from ireegen.common.errors import CompileError, DiskFullError, IreegenError, RunError, UsageError
from ireegen.common.progress import progress
from ireegen.config.tuning import BASELINE, candidates_for, order_for, target_features, untunable
from ireegen.frontend.model_features import model_features
from ireegen.output.outputs import MANIFEST
from ireegen.output.tuning_record import load_record, store_record

# How much faster than the baseline a candidate must be to be chosen.
MIN_GAIN = {CPU_TIME: 0.05, INSTRUCTIONS: 0.01}
# Alternating timing rounds per --tune level (instruction counts need one).
ROUNDS = {"quick": 3, "full": 5}


# A --tune level's limits (None: none), in CPU seconds of this process and
# the processes it runs (common/clock.py): the machine's load, which moves
# wall time several times over, does not decide what is tried.  A tuned
# emit is the import, the search and the write; an untuned one the import,
# one emit of the baseline (its compile, the references' compile and the
# verification) and the write.  The search may take `multiple` times the
# baseline candidate's emit, and the whole emit (from its start)
# `emit_seconds`: so quick stays within 3x an untuned emit's CPU time, and
# within 2 minutes of it unless the untuned emit alone takes longer.  A
# candidate that would end past either limit, as estimated from the
# candidates measured before it, is not tried (its row says so; --tune
# full tries it).
@dataclass(frozen=True)
class Budget:
    multiple: float | None
    emit_seconds: float | None
    floor_seconds: float = 0.0  # a search may always take this long: a tiny model's candidates all fit


BUDGET = {"quick": Budget(2.5, 110.0, 15.0), "full": Budget(None, None)}
NOT_TRIED = "not tried"
MAX_NOTE = 300
SAME = "same as baseline"


@dataclass
class Trial:
    name: str
    flags: tuple
    status: str = "ok"  # ok, failed, not timed, NOT_TRIED, SAME
    note: str = ""
    samples: list = field(default_factory=list)
    timer: object = None

    @property
    def figure(self) -> float | None:
        return statistics.median(self.samples) if self.samples else None

    def to_json(self, unit: str) -> dict:
        out = {"name": self.name, "flags": list(self.flags), "status": self.status}
        if self.figure is not None:
            out["figure"] = round(self.figure, 1)
            out["unit"] = unit
            out["samples"] = len(self.samples)
        if self.note:
            out["note"] = self.note
        return out


@dataclass
class Tuning:
    flags: tuple  # the chosen candidate's iree-compile flags
    section: dict  # the manifest's "tuning"
    summary: str = ""  # one line for the command line ("" when nothing was tried)
    # The chosen candidate's emitted (and verified) directory, kept for the
    # emit to write as its own; discard() removes it.
    output: Path | None = None

    def discard(self) -> None:
        if self.output is not None:
            shutil.rmtree(self.output.parent, ignore_errors=True)
            self.output = None


def _quiet(level: str, note: str) -> Tuning:
    return Tuning((), {"level": level, "choice": BASELINE, "candidates": [], "note": note})


def meter_for(config, workdir: Path) -> Meter | str:
    """How `config`'s code is timed here, or why it cannot be."""
    target = config.target
    if config.execution_model.has_vm_module:
        timed = (config.execution_model.name, config.executable_format.name, config.module_format)
        if timed == ("async", "embedded-elf", "vmfb") and runs_natively(target.triple):
            return Meter(CPU_TIME, vm_module=True)
        return (
            f"--execution-model {config.execution_model.name} with {config.executable_format.name} executables "
            f"and a {config.module_format} module is not timed by ireegen (runtimeless C is, and async "
            "embedded-elf vmfb modules for this machine): kept the baseline"
        )
    if runs_natively(target.triple):
        return Meter(CPU_TIME)
    try:
        toolchain_for(target.triple, cpu=target.cpu, cpu_features=target.cpu_features)
        return Meter(INSTRUCTIONS, build_plugin(workdir))
    except (UsageError, RunError) as e:
        return f"{target.triple} programs cannot run here ({e}): kept the baseline"


def _note(e: Exception) -> str:
    """The line of a failure that says what went wrong."""
    lines = [line.strip() for line in str(e).splitlines() if line.strip()]
    line = next((x for x in lines if "error:" in x), lines[0] if lines else type(e).__name__)
    kind = "compile error" if isinstance(e, CompileError) else "refused"
    if type(e).__name__ == "VerificationError":
        kind = "verification failed"
    text = f"{kind}: {line}"
    return text if len(text) <= MAX_NOTE else text[: MAX_NOTE - 3] + "..."


def show(figure: float | None, unit: str) -> str:
    if figure is None:
        return "-"
    if unit == CPU_TIME:
        if figure >= 1e6:
            return f"{figure / 1e6:.3g} ms CPU/call"
        return f"{figure / 1e3:.3g} µs CPU/call"
    return f"{figure:,.0f} instructions/call"


def _best(trials: list, unit: str):
    """(the chosen trial, the baseline's): among the candidates at least
    MIN_GAIN faster than the baseline, the first in the search's order
    whose figure is within MIN_GAIN of the fastest, so that candidates the
    noise cannot tell apart give the same choice from run to run; else the
    baseline."""
    timed = [t for t in trials if t.figure is not None]
    if not timed:
        return None, None
    gain = MIN_GAIN[unit]
    base = next((t for t in timed if t.name == BASELINE), None)
    faster = [t for t in timed if base is None or t is base or t.figure <= base.figure * (1 - gain)]
    if base is not None and len(faster) == 1:
        return base, base
    rivals = [t for t in faster if t is not base]
    fastest = min(t.figure for t in rivals)
    return next(t for t in rivals if t.figure * (1 - gain) <= fastest), base


def _progress_best(trials, unit) -> str:
    best, base = _best(trials, unit)
    if best is None:
        return ""
    gain = f", {base.figure / best.figure:.2f}x baseline" if base not in (None, best) and best.figure else ""
    return f" (best so far: {best.name}, {show(best.figure, unit)}{gain})"


def tune(
    model,
    level: str,
    config,
    key: str,
    functions,
    given_inputs: dict,
    seed: int,
    emit_candidate: Callable[[tuple, Path], None],
    keep_output: bool = False,
    emit_started: float | None = None,
    shared_seconds: Callable[[], float] = lambda: 0.0,
) -> Tuning:
    """Chooses the candidate for this emit.  `emit_candidate(flags, outdir)`
    emits the model, verified, with `flags` added, into `outdir`;
    `functions` are the model's signature.Functions, `given_inputs` the
    --verify-inputs arrays by function (timing uses them, else seeded draws).
    With `keep_output`, the chosen candidate's directory is kept (Tuning.output).
    `emit_started` is common.clock.cpu_seconds() at the emit's start (the
    level's emit_seconds count from it); `shared_seconds()` the CPU seconds
    spent so far building what every candidate shares (the references): the
    first candidate pays them, the others do not."""
    why = untunable(config)
    if why is not None:
        return _quiet(level, why)
    features = model_features(model)
    features |= target_features(config, features)
    candidates = candidates_for(level, features)
    if len(candidates) < 2:
        return _quiet(
            level, f"no candidate of --tune {level} can change this model (it has no convolutions or matmuls)"
        )
    offered = {c.name: c.flags for c in candidates}
    record = load_record(key, offered)
    timed_on = record.get("timed_on") if record is not None else None
    if isinstance(timed_on, str) and not timed_on.startswith("qemu") and timed_on != this_cpu():
        # Timed natively on another CPU (`host` resolves to the CPU's name,
        # which another machine may share): its choice is not this one's.
        record = None
    if record is not None:
        where = f", timed on {record['timed_on']}" if record.get("timed_on") else ""
        progress("tuning", f"the recorded choice for this content key: {record['choice']}{where} (no search)")
        # The manifest says what the search said: a rebuild writes the same bytes.
        section = {k: v for k, v in record.items() if k not in ("schema", "content_key")}
        return Tuning(
            tuple(record["flags"]),
            section,
            f"tuning ({level}): {record['choice']}, the recorded choice for this content key (no search)",
        )
    started, cpu_started = time.monotonic(), cpu_seconds()
    order = order_for(features) if level == "quick" else None
    if order is not None:
        progress("tuning", f"{len(candidates)} candidates, in the order for {order.why}")
    with tempfile.TemporaryDirectory(prefix="ireegen-tune-") as tmp:
        tmp = Path(tmp)
        meter = meter_for(config, tmp)
        if isinstance(meter, str):
            return _quiet(level, meter)
        inputs = {f.name: list(given_inputs.get(f.name) or draw(f, seed)) for f in functions}
        clock = _Clock(BUDGET[level], emit_started, shared_seconds)
        trials = _search(candidates, meter, inputs, emit_candidate, tmp, ROUNDS[level], clock)
        best, base = _best(trials, meter.unit)
        chosen = best or next(t for t in trials if t.name == BASELINE)
        kept = None
        if keep_output and best is not None:
            kept = Path(tempfile.mkdtemp(prefix="ireegen-tuned-")) / "output"
            shutil.move(str(tmp / f"candidate{trials.index(best) + 1}"), str(kept))
    seconds, cpu = time.monotonic() - started, cpu_seconds() - cpu_started
    measured = (
        f"CPU time on this machine{' (iree-benchmark-module, local-sync)' if meter.vm_module else ''}, "
        f"median of {ROUNDS[level]} alternating rounds"
        if meter.unit == CPU_TIME
        else f"guest instructions under qemu ({config.target.triple})"
    )
    # Instruction counts do not depend on the machine that ran qemu; CPU time does.
    timed_on = this_cpu() if meter.unit == CPU_TIME else f"qemu ({config.target.triple}, {config.target.cpu})"
    section = {
        "level": level,
        "measured": measured,
        "timed_on": timed_on,
        "unit": meter.unit,
        "candidates": [t.to_json(meter.unit) for t in trials],
        "choice": chosen.name,
        "flags": list(chosen.flags),
        "speedup": round(base.figure / chosen.figure, 3) if base is not None and chosen.figure else None,
        "search_seconds": round(seconds, 1),
        "search_cpu_seconds": round(cpu, 1),
    }
    if best is None:
        section["note"] = "no candidate could be timed: kept the baseline"
    else:
        store_record(key, section)
    speedup = f", {section['speedup']:.2f}x baseline" if section["speedup"] else ""
    summary = (
        f"tuning ({level}): chose {chosen.name}{speedup} by {meter.unit}; {len(trials)} candidates in {seconds:.1f} s "
        f"({cpu:.1f} s CPU)"
    )
    failed = [t.name for t in trials if t.status not in ("ok", SAME, NOT_TRIED)]
    if failed:
        summary += f" ({', '.join(failed)} skipped: see the manifest)"
    untried = [t.name for t in trials if t.status == NOT_TRIED]
    if untried:
        summary += f" ({', '.join(untried)} not tried within --tune {level}'s CPU-time budget; --tune full tries them)"
    return Tuning(tuple(chosen.flags), section, summary, kept)


def _output_files(outdir: Path) -> dict:
    """{file: sha256} of an emitted directory, from its manifest."""
    manifest = json.loads((outdir / MANIFEST).read_text())
    return {f["path"]: f["sha256"] for f in manifest["files"]}


def runner_dir(outdir: Path) -> Path:
    """Where a candidate emitted into `outdir` keeps the runner its
    verification built: its timing runs that program on one thread
    instead of compiling the C again."""
    return outdir.with_name(outdir.name + "-runner")


def _timer(outdir: Path, build_dir: Path, inputs: dict, meter: Meter):
    if meter.vm_module:
        manifest = json.loads((outdir / MANIFEST).read_text())
        module = next(f["path"] for f in manifest["files"] if f["role"] == "module")
        return ModuleTimer(outdir / module, inputs)
    runner = built_runner_in(outdir, runner_dir(outdir)) or build_runner(outdir, build_dir)
    return Timer(runner, inputs, meter)


@dataclass
class _Clock:
    """When a search stops starting candidates: it estimates each next
    candidate's CPU seconds (its emit, runner build and first timing) from
    the ones measured before it, and the timing rounds still owed.  Every
    time is `now()`'s: CPU seconds (common/clock.py)."""

    budget: Budget
    emit_started: float | None
    shared_seconds: Callable[[], float]
    started: float | None = None  # now() when the search started (None: at construction)
    now: Callable[[], float] = cpu_seconds
    baseline_seconds: float | None = None  # the baseline candidate's emit, shared references included
    estimate: float = 0.0  # the next candidate's seconds
    round_seconds: float = 0.0  # one timing round of the candidates timed so far
    timed: int = 0  # how many

    def __post_init__(self):
        if self.started is None:
            self.started = self.now()

    def deadline(self) -> float | None:
        ends = []
        if self.budget.multiple is not None and self.baseline_seconds is not None:
            ends.append(self.started + max(self.budget.multiple * self.baseline_seconds, self.budget.floor_seconds))
        if self.budget.emit_seconds is not None and self.emit_started is not None:
            ends.append(self.emit_started + self.budget.emit_seconds)
        return min(ends) if ends else None

    def left(self) -> str:
        """What is left of the budget, for the progress line ("" without one)."""
        deadline = self.deadline()
        if deadline is None:
            return ""
        return f"{max(deadline - self.now(), 0.0):.0f} s of CPU time left in the budget"

    def allows_next(self, rounds: int) -> bool:
        deadline = self.deadline()
        # The next candidate, then the later rounds of every timed one and of it.
        per_sample = self.round_seconds / self.timed if self.timed else 0.0
        owed = self.estimate + (rounds - 1) * (self.round_seconds + per_sample)
        return deadline is None or self.now() + owed <= deadline

    def measured(self, name: str, seconds: float, shared_before: float) -> None:
        """Candidate `name` took `seconds`, `shared_seconds()` having been `shared_before` when it started."""
        own = max(seconds - (self.shared_seconds() - shared_before), 0.0)
        if name == BASELINE:
            self.baseline_seconds = seconds
            self.estimate = own
        else:
            self.estimate = max(self.estimate, own)


def _try(candidate, trials: list, k: int, n: int, emit_candidate, tmp: Path, baseline_files, inputs, meter, clock):
    """Emits, verifies and first times candidate `k` of `n` (the last of
    `trials`) into tmp/candidate<k>."""
    trial = trials[-1]
    outdir = tmp / f"candidate{k}"
    try:
        emit_candidate(candidate.flags, outdir)
    except DiskFullError:
        raise
    except IreegenError as e:
        trial.status, trial.note = "failed", _note(e)
        progress("tuning", f"candidate {k} of {n}: {candidate.name}: skipped, {trial.note}")
        return
    if candidate.name != BASELINE and _output_files(outdir) == baseline_files:
        # The flags changed nothing this model compiles to: nothing to time.
        trial.status, trial.note = SAME, "the same output as the baseline"
        progress("tuning", f"candidate {k} of {n}: {candidate.name}: {trial.note}")
        return
    try:
        trial.timer = _timer(outdir, tmp / f"build{k}", inputs, meter)
        sampled = clock.now()
        trial.samples.append(trial.timer.sample())
        clock.round_seconds += clock.now() - sampled
        clock.timed += 1
    except (RunError, IreegenError) as e:
        trial.status, trial.note = "not timed", f"not timed: {str(e).strip().splitlines()[0][:MAX_NOTE]}"
        if trial.timer is not None:
            trial.timer.close()
            trial.timer = None
        return
    progress(
        "tuning",
        f"candidate {k} of {n}: {candidate.name}: {show(trial.figure, meter.unit)}{_progress_best(trials, meter.unit)}",
    )


def _search(candidates, meter: Meter, inputs: dict, emit_candidate, tmp: Path, rounds: int, clock: _Clock) -> list:
    trials = []
    n = len(candidates)
    baseline_files = None
    try:
        for k, candidate in enumerate(candidates, 1):
            trial = Trial(candidate.name, candidate.flags)
            trials.append(trial)
            if not clock.allows_next(rounds):
                trial.status, trial.note = NOT_TRIED, "not tried: past the level's CPU-time budget"
                progress("tuning", f"candidate {k} of {n}: {candidate.name}: {trial.note}")
                continue
            began, shared_before = clock.now(), clock.shared_seconds()
            progress(
                "tuning",
                f"candidate {k} of {n}: {candidate.name}: compiling and verifying{_progress_best(trials, meter.unit)}",
            )
            try:
                _try(candidate, trials, k, n, emit_candidate, tmp, baseline_files, inputs, meter, clock)
            finally:
                clock.measured(candidate.name, clock.now() - began, shared_before)
            if candidate.name == BASELINE and clock.left():
                progress("tuning", f"baseline: {clock.now() - began:.0f} s of CPU time; {clock.left()}")
            if candidate.name == BASELINE and trial.status != "failed":
                baseline_files = _output_files(tmp / f"candidate{k}")
        timed = [t for t in trials if t.timer is not None]
        if meter.unit == CPU_TIME and len(timed) > 1:
            for r in range(2, rounds + 1):
                progress("tuning", f"timing round {r} of {rounds}{_progress_best(trials, meter.unit)}")
                for trial in timed:
                    if trial.timer is not None:
                        try:
                            trial.samples.append(trial.timer.sample())
                        except RunError as e:
                            trial.status, trial.note = "not timed", f"not timed: {str(e).strip()[:MAX_NOTE]}"
                            trial.samples.clear()
                            trial.timer.close()
                            trial.timer = None
    finally:
        for trial in trials:
            if trial.timer is not None:
                trial.timer.close()
                trial.timer = None
    return trials
