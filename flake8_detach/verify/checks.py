"""The per-rule verdicts: does what a fixture claims hold when it runs on a device?

A claim is a `# expect:` annotation; what it means at run time is the rule's runtime truth:

- DET101: the flagged line raises RuntimeError (requires grad); the fixed version runs and its
  `.numpy()` calls return what the reference run returns (the original with every `.numpy()`
  converting as `.numpy(force=True)` does: detached and copied by torch itself; a call that would
  have raised returns a copy of that array, because on the CPU `.numpy(force=True)` shares the
  tensor's memory and a write through it must not reach the tensor: a fix that makes the call run
  must copy where the array is written, and the values of the tensor show whether it did).
- DET104: the flagged line raises TypeError (device type) off the CPU, and runs on the CPU (where
  a line also claims DET101, the RuntimeError is what the CPU raises: torch checks the device
  first); the fixed version runs.
- DET102: the device move at the flagged line returns a tensor with a ``grad_fn`` (the copy was
  recorded) on a GPU, and the fixed order records none; on the CPU the move returns the tensor
  itself, reported as "no effect on cpu".
- DET103: the `.data` version runs silently; its fixed version either keeps every value or, where
  the write through `.data` hid an in-place change to a tensor autograd saved, raises autograd's
  in-place modification error: then the `.data` run's gradient must differ from the gradient of
  the graph autograd recorded (the run with the write skipped).
- DET107: the flagged line raises what `.numpy()` says of the tensor's dtype or layout, as the
  message names it: `TypeError: Got unsupported ScalarType BFloat16`, `TypeError: can't convert
  Sparse layout tensor to numpy`, `RuntimeError: Can't call numpy() on Tensor that has conjugate
  bit set`; the fixed version runs. On every device (the meta leg cannot show it: `.numpy()`
  checks the device first).
- DET109: the flagged line raises the dtype-mismatch RuntimeError of the kernel (`mat1 and mat2
  must have the same dtype`, `Input type (double) and bias type (float) should be the same`,
  `Found dtype Double but expected Float`); the fixed version runs. A fixture that reads DEVICE
  claims it on meta too (conv checks dtypes there).
- DET108: the flagged line raises ValueError (a negative stride, or a byte order torch does not
  take) on every device, meta included; the fixed version runs and its values equal the reference
  run's, where torch's array constructors were handed a contiguous native copy. For
  `torch.from_dlpack` the message claims what it does instead: a negative stride aborts the
  process (SIGABRT; the runner names the fixture's line from faulthandler's stack and the C++
  `what()`), a non-native byte order raises NumPy's BufferError.
- No claim: the fixture runs cleanly.
Meta tensors hold no data: a meta run that stops at an operation needing values is skipped with
that reason, never passed; only the device-type TypeError is claimed there.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any

from ..diagnostics import Diagnostic
from ..engine import AnalysisError, Settings, analyze
from ..fixing.fixer import fix_source
from ..suppression import unsuppressed
from .devices import DeviceLeg
from .execution import RunResult
from .fixtures import Fixture
from .values import conversion_differences, differences, gradients, mapping_differences, preview

PASSED, FAILED, SKIPPED = "passed", "failed", "skipped"
LINT = "lint"
# What each code claims at run time. DET106 predicts DET101's or DET104's error (or both), raised
# inside the library that converts the tensor; its message says which (see claim_kinds).
CODE_KINDS = {"DET101": "grad", "DET102": "move", "DET103": "data", "DET104": "device", "DET105": "alias",
              "DET108": "stride", "DET111": "grad"}  # DET111: DET101's claim, with the call in the fixture
CHECKED_CODES = frozenset(CODE_KINDS) | {"DET106", "DET107", "DET109"}
# DET107's message names what `.numpy()` refuses; each is its own kind (and exception).
DET107_KINDS = (("bf16", "ScalarType BFloat16"), ("sparse", "Sparse layout"), ("conj", "conjugate bit"))
# Kinds whose flagged line raises whatever the device: the fixed version is judged by running.
RAISING_EVERYWHERE = frozenset({"bf16", "sparse", "conj", "mixed"})

# What torch says, matched loosely so that a rewording within a sentence still matches.
REQUIRES_GRAD = re.compile(r"requires grad")
DEVICE_TYPE = re.compile(r"can't convert \S+ device type tensor to numpy")
ARRAY_LAYOUT = re.compile(r"stride in the given numpy array is negative|byte order different from the native byte order")
INPLACE_MODIFIED = re.compile(r"modified by an inplace operation")
UNSUPPORTED_BF16 = re.compile(r"Got unsupported ScalarType BFloat16")
SPARSE_LAYOUT = re.compile(r"can't convert Sparse\w* layout tensor to numpy")
CONJ_BIT = re.compile(r"Can't call numpy\(\) on Tensor that has conjugate bit set")
DTYPE_MISMATCH = re.compile(
    r"(?:must|to) have the same dtype|should be the same|expected scalar type|Found dtype \w+ but expected|"
    r"mixed dtype|Type promoting not supported|expected both vectors to have same dtype"
)
META_NO_DATA = re.compile(r"meta tensor|on meta tensors|device='meta'|no data!")

META_CANNOT_SHOW = {
    "grad": "meta cannot show the requires-grad error: .numpy() checks the device (TypeError) first, and .cpu() cannot copy a meta tensor",
    "move": "meta cannot show DET102: .cpu() cannot copy a meta tensor (no data), so no copy is ever recorded",
    "data": "meta cannot show DET103: the wrong gradient is a value, and meta tensors hold none",
    "alias": "meta cannot show DET105: shared memory is seen through values, and meta tensors hold none",
    "bf16": "meta cannot show DET107: .numpy() checks the device (TypeError) before the dtype",
    "conj": "meta cannot show DET107: .numpy() checks the device (TypeError) before the conjugate bit",
    "sparse": "meta cannot show DET107: torch 2.13 has no meta kernel for to_sparse/sparse tensors",
    "mixed": "meta cannot show DET109: the meta kernels of linear and matmul do not check dtypes (torch 2.13)",
}
# What a meta run can show: the device-type TypeError, and DET109 in a fixture that reads DEVICE
# (the meta kernels of conv and bmm check dtypes; those of linear and matmul do not, so such a
# fixture does not read DEVICE and runs on the CPU only).
META_SHOWS = frozenset({"device", "mixed"})


@dataclass(frozen=True)
class Expectation:
    exception: str
    pattern: re.Pattern[str]
    text: str
    outcome: str = "raised"  # "crashed": the process died (an "abort", named by the runner)

    def matches(self, result: RunResult) -> bool:
        raised = result.exception
        return (
            result.outcome == self.outcome
            and raised is not None
            and raised.type == self.exception
            and bool(self.pattern.search(raised.message))
        )


RAISES_REQUIRES_GRAD = Expectation("RuntimeError", REQUIRES_GRAD, "RuntimeError (requires grad)")
RAISES_DEVICE_TYPE = Expectation("TypeError", DEVICE_TYPE, "TypeError (device type)")
RAISES_BY_KIND = {
    "bf16": Expectation("TypeError", UNSUPPORTED_BF16, "TypeError (unsupported ScalarType BFloat16)"),
    "sparse": Expectation("TypeError", SPARSE_LAYOUT, "TypeError (sparse layout)"),
    "conj": Expectation("RuntimeError", CONJ_BIT, "RuntimeError (conjugate bit set)"),
    "mixed": Expectation("RuntimeError", DTYPE_MISMATCH, "RuntimeError (dtype mismatch)"),
}
RAISES_ARRAY_LAYOUT = Expectation("ValueError", ARRAY_LAYOUT, "ValueError (negative stride or byte order)")
# DET108 on `torch.from_dlpack`: a negative stride aborts the process, a non-native byte order
# raises NumPy's BufferError; DET108's message says which, and the claim follows it.
DLPACK_ABORT = re.compile(r"Storage size calculation overflowed")
DLPACK_BYTE_ORDER = re.compile(r"DLPack only supports native byte order")
DET108_KINDS = (("abort", "aborts the process"), ("buffer", "BufferError"))
RAISES_ABORT = Expectation("abort", DLPACK_ABORT, "the process aborts (storage size overflowed)", outcome="crashed")
RAISES_BUFFER = Expectation("BufferError", DLPACK_BYTE_ORDER, "BufferError (DLPack byte order)")


@dataclass
class Row:
    """One line of the report: a fixture on a device (or its lint check)."""

    fixture: str
    path: str
    device: str
    status: str
    claimed: str
    observed: str
    fixed: str = ""
    line: int | None = None

    @property
    def message(self) -> str | None:
        """For a failure: fixture, line, device, claimed and observed, in one line."""
        if self.status != FAILED:
            return None
        where = f"{self.path}:{self.line}" if self.line is not None else self.path
        fixed = f"; fixed version: {self.fixed}" if self.fixed and self.fixed.startswith("FAILED") else ""
        return f"{where} [{self.device}] claimed {self.claimed}; observed {self.observed}{fixed}"

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["message"] = self.message
        return data


@dataclass
class FixOutcome:
    source: str
    changed: bool
    remaining: list[Diagnostic]
    error: str | None

    def problem(self) -> str | None:
        """Why the fixed version cannot be judged as a fix (None when it can)."""
        if self.error:
            return f"the fixer could not run: {self.error}"
        fixable = [d for d in self.remaining if d.fix is not None]
        if fixable:
            return "the fixer left " + ", ".join(f"{d.code} at line {d.line}" for d in fixable)
        if not self.changed and not self.remaining:
            return "the fixer changed nothing"
        return None

    def advice_only(self) -> str | None:
        """The diagnostics the rules leave with advice (no automatic fix), if any."""
        if not self.remaining or any(d.fix is not None for d in self.remaining):
            return None
        return "no automatic fix for " + ", ".join(f"{d.code} at line {d.line}" for d in self.remaining) + " (advice only)"


@dataclass
class Runs:
    """The executions judged for one fixture on one device."""

    original: RunResult
    fixed: RunResult | None = None
    reference: RunResult | None = None
    write_skipped: RunResult | None = None


def lint(fixture: Fixture, settings: Settings) -> tuple[list[Diagnostic], str | None]:
    """The diagnostics the linter reports, as flake8 would (after `# noqa`); or an error."""
    try:
        return unsuppressed(fixture.source, analyze(fixture.source, settings).diagnostics), None
    except AnalysisError as error:
        return [], str(error)


def claim_kinds(fixture: Fixture, diagnostics: list[Diagnostic]) -> dict[int, frozenset[str]]:
    """Line -> what its claims predict at run time; DET106's message names the error it predicts."""
    messages = {(d.line, d.code): d.message for d in diagnostics}
    kinds: dict[int, frozenset[str]] = {}
    for line, codes in fixture.claims.items():
        found = {CODE_KINDS[code] for code in codes if code in CODE_KINDS}
        if "DET106" in codes:
            message = messages.get((line, "DET106"), "")
            predicted = {kind for kind, error in (("grad", "(RuntimeError)"), ("device", "(TypeError)")) if error in message}
            found |= predicted or {"grad"}
        if "DET107" in codes:
            message = messages.get((line, "DET107"), "")
            found |= {kind for kind, text in DET107_KINDS if text in message}
        if "DET108" in codes:
            message = messages.get((line, "DET108"), "")
            found |= {kind for kind, text in DET108_KINDS if text in message}
        if "DET109" in codes:
            found.add("mixed")
        kinds[line] = frozenset(found)
    return kinds


def lint_row(fixture: Fixture, diagnostics: list[Diagnostic], error: str | None) -> Row:
    claimed = {(line, code) for line, codes in fixture.claims.items() for code in codes}
    row = Row(fixture.name, str(fixture.path), LINT, PASSED, _pairs(claimed), "")
    if error is not None:
        row.status, row.observed = FAILED, f"the linter could not analyse it: {error}"
        return row
    found = {(d.line, d.code) for d in diagnostics}
    row.observed = _pairs(found)
    if found != claimed:
        row.status = FAILED
        missing, extra = sorted(claimed - found), sorted(found - claimed)
        row.line = (missing or extra)[0][0]
        parts = [f"not reported: {_pairs(set(missing))}"] if missing else []
        parts += [f"reported without annotation: {_pairs(set(extra))}"] if extra else []
        row.observed += " (" + "; ".join(parts) + ")"
    return row


def fix_fixture(fixture: Fixture, settings: Settings) -> FixOutcome:
    result = fix_source(fixture.source, settings, unsafe=True)
    return FixOutcome(result.source, result.changed, list(result.remaining), result.error)


def skip_reason(fixture: Fixture, leg: DeviceLeg) -> str | None:
    """Why this fixture does not run on this device at all, or None."""
    missing = fixture.missing_requirement()
    if missing:
        return missing
    if leg.skip_reason:
        return leg.skip_reason
    if leg.name != "cpu" and not fixture.reads_device:
        return "does not read DEVICE: the run would repeat the cpu run"
    unknown = sorted(fixture.codes - CHECKED_CODES)
    if unknown:
        return f"no runtime check for {', '.join(unknown)} yet"
    if leg.is_stand_in:
        for kinds in fixture.kinds.values():
            if not kinds & (META_SHOWS | {"stride"}):
                return META_CANNOT_SHOW[min(kinds)]
    return None


def expected_raise(kinds: frozenset[str], leg: DeviceLeg) -> Expectation | None:
    if leg.name != "cpu" and "device" in kinds:
        return RAISES_DEVICE_TYPE  # torch checks the device before grad
    if "grad" in kinds:
        return RAISES_REQUIRES_GRAD
    if "abort" in kinds:
        return RAISES_ABORT
    if "buffer" in kinds:
        return RAISES_BUFFER
    if "stride" in kinds:
        return RAISES_ARRAY_LAYOUT  # torch checks the array before any device is involved
    for kind in sorted(kinds & RAISING_EVERYWHERE):
        return RAISES_BY_KIND[kind]
    return None


def raising_claims(fixture: Fixture, leg: DeviceLeg) -> dict[int, Expectation]:
    return {line: expected for line, kinds in fixture.kinds.items() if (expected := expected_raise(kinds, leg))}


def lines_of_kind(fixture: Fixture, kind: str) -> list[int]:
    return sorted(line for line, kinds in fixture.kinds.items() if kind in kinds)


def variants_needed(fixture: Fixture, leg: DeviceLeg, fix: FixOutcome | None) -> set[str]:
    """Which executions :func:`judge` will need besides the original."""
    needed = set()
    if fixture.claims and fix is not None and fix.changed:
        needed.add("fixed")
    if leg.has_data and any(kinds & {"grad", "device", "stride"} for kinds in fixture.kinds.values()) and raising_claims(fixture, leg):
        needed.add("reference")
    if leg.has_data and lines_of_kind(fixture, "data"):
        needed.add("write_skipped")
    return needed


def skip_statements(source: str, lines: list[int]) -> str | None:
    """The source with the one-line statements on ``lines`` replaced by `pass` (None if impossible)."""
    physical = source.splitlines(keepends=True)
    for line in lines:
        text = physical[line - 1]
        body = text.lstrip(" \t")
        indent = text[: len(text) - len(body)]
        physical[line - 1] = f"{indent}pass\n"
    candidate = "".join(physical)
    try:
        compile(candidate, "<skipped>", "exec")
    except SyntaxError:
        return None
    return candidate


def judge(fixture: Fixture, leg: DeviceLeg, fix: FixOutcome | None, runs: Runs) -> Row:
    """The verdict for one fixture on one device, from its runs."""
    raising = raising_claims(fixture, leg)
    row = Row(fixture.name, str(fixture.path), leg.label, PASSED, _claimed_text(fixture, leg, raising), "")
    original = runs.original
    if not _judge_original(row, fixture, leg, raising, original):
        return row
    if fixture.claims and all(kinds <= RAISING_EVERYWHERE for kinds in fixture.kinds.values()):
        _judge_fixed_runs(row, fix, runs)
    elif fixture.claims:
        _judge_fixed(row, fixture, leg, fix, runs, bool(raising))
    return row


def _judge_fixed_runs(row: Row, fix: FixOutcome | None, runs: Runs) -> None:
    """DET107/DET109: the original raised; the fixed version must run through."""
    problem = fix.problem() if fix is not None else "no fix computed"
    if problem:
        row.status, row.fixed = FAILED, f"FAILED: {problem}"
        return
    fixed = runs.fixed
    if fixed is None or not fixed.ran_cleanly:
        row.status, row.fixed = FAILED, f"FAILED: {fixed.describe() if fixed else 'the fixed version was not run'}"
        return
    row.fixed = "runs"


def _judge_original(row: Row, fixture: Fixture, leg: DeviceLeg, raising: dict[int, Expectation], run: RunResult) -> bool:
    """Fill in the original run's verdict; False when the row is settled (failed or skipped)."""
    if leg.is_stand_in and _stopped_for_lack_of_data(run) and not any(e.matches(run) for e in raising.values()):
        row.status, row.observed = SKIPPED, f"meta holds no data: {run.describe()}"
        row.line = run.exception.line if run.exception else None
        return False
    if raising:
        line = run.exception.line if run.exception else None
        expected = raising.get(line) if line is not None else None
        if expected is None or not expected.matches(run):
            row.status, row.observed = FAILED, run.describe()
            row.line = line if line in raising else min(raising)
            return False
        row.observed = run.describe()
        row.line = line
        unreached = sorted(set(raising) - {line})
        if unreached:
            row.observed += f" (lines {', '.join(map(str, unreached))} not reached)"
    elif not run.ran_cleanly:
        row.status, row.observed = FAILED, run.describe()
        row.line = run.exception.line if run.exception else None
        return False
    else:
        row.observed = "ran cleanly"
    unexercised = sorted(line for line in fixture.claims if line not in run.executed_lines and line not in raising)
    if unexercised and run.ran_cleanly:
        row.status, row.line = FAILED, unexercised[0]
        row.observed = f"line {unexercised[0]} never ran, so its claim was not exercised"
        return False
    if unexercised:
        row.observed += f" (lines {', '.join(map(str, unexercised))} not reached)"
    notes = []
    for line in lines_of_kind(fixture, "move"):
        verdict, note = _device_move_verdict(run, line, leg)
        notes.append(note)
        if not verdict:
            row.status, row.line = FAILED, line
    if lines_of_kind(fixture, "data"):
        notes.append(".data ran silently")
    if leg.name == "cpu" and any("device" in kinds and "grad" not in kinds for kinds in fixture.kinds.values()):
        notes.append("the flagged conversion ran on cpu")
    note = "; ".join(n for n in notes if n)
    if note:
        row.observed = note if row.observed == "ran cleanly" else f"{row.observed}; {note}"
    return row.status == PASSED


def _device_move_verdict(run: RunResult, line: int, leg: DeviceLeg) -> tuple[bool, str]:
    """DET102 at ``line``: was the copy recorded (GPU), or was the move a no-op (CPU)?"""
    moves = [move for move in run.moves if move["line"] == line]
    if not moves:
        return False, f"no .cpu()/.to() call seen at line {line}"
    copies = [move for move in moves if not move["same"]]
    recorded = [move for move in copies if move["grad_fn"]]
    if leg.name == "cpu":
        if not copies:
            return True, f"no effect on cpu: .{moves[0]['method']}() returned the tensor itself"
        if recorded:
            return True, f"copy recorded even on cpu ({recorded[0]['grad_fn']})"
        return True, "copied on cpu, nothing recorded"
    if recorded:
        move = recorded[0]
        return True, f".{move['method']}() copy from {move['input_device']} recorded ({move['grad_fn']})"
    if not copies:
        return False, f".{moves[0]['method']}() at line {line} returned the tensor itself (it was already on {moves[0]['device']})"
    return False, f".{copies[0]['method']}() at line {line} copied, but recorded no grad_fn"


def _judge_fixed(row: Row, fixture: Fixture, leg: DeviceLeg, fix: FixOutcome | None, runs: Runs, original_raised: bool) -> None:
    problem = fix.problem() if fix is not None else "no fix computed"
    if problem:
        row.status, row.fixed = FAILED, f"FAILED: {problem}"
        return
    assert fix is not None
    advice = fix.advice_only()
    if advice:
        row.fixed = advice
        if lines_of_kind(fixture, "alias") and leg.has_data:
            row.status, row.observed = SKIPPED, f"{row.observed}; DET105 is shown against its copying fix, and there is none"
        return
    fixed = runs.fixed
    if fixed is None:
        row.status, row.fixed = FAILED, "FAILED: the fixed version was not run"
        return
    if leg.is_stand_in and _stopped_for_lack_of_data(fixed):
        row.fixed = f"not run through on meta ({_no_data_note(fixed)})"
        return
    if not fixed.ran_cleanly:
        if lines_of_kind(fixture, "data") and fixed.exception and INPLACE_MODIFIED.search(fixed.exception.message):
            _judge_hidden_write(row, fixture, runs)
            return
        row.status, row.fixed = FAILED, f"FAILED: {fixed.describe()}"
        return
    notes = ["runs"]
    if leg.has_data and lines_of_kind(fixture, "alias"):
        _judge_alias(row, leg, runs.original, fixed)
        return
    if leg.has_data:
        if original_raised:
            reference = runs.reference
            if reference is None or not reference.ran_cleanly:
                row.status = FAILED
                row.fixed = f"FAILED: the reference run (.numpy(force=True)) {reference.describe() if reference else 'was not run'}"
                return
            baseline_run, baseline = reference, (
                "the reference (torch handed a contiguous copy)" if lines_of_kind(fixture, "stride")
                else "the reference (.numpy(force=True))")
        else:
            baseline_run, baseline = runs.original, "the original"
        found = mapping_differences(baseline_run.values, fixed.values)
        if not fixture.lines_claiming("DET106"):
            # DET106's fix moves the conversion out of the library into the fixture's own code,
            # so only the values are comparable there, not the list of `.numpy()` calls.
            found = conversion_differences(baseline_run.conversions, fixed.conversions) + found
        if found:
            row.status, row.fixed = FAILED, f"FAILED: values differ from {baseline}: {'; '.join(found[:3])}"
            return
        notes.append(f"same values as {baseline}")
    if lines_of_kind(fixture, "move") and leg.has_data:
        still = [move for move in fixed.moves if not move["same"] and move["grad_fn"]]
        if still:
            row.status, row.fixed = FAILED, f"FAILED: a copy is still recorded at line {still[0]['line']} ({still[0]['grad_fn']})"
            return
        if leg.name != "cpu":
            notes.append("no copy recorded")
    row.fixed = ", ".join(notes)


def _judge_alias(row: Row, leg: DeviceLeg, original: RunResult, fixed: RunResult) -> None:
    """DET105: the fix copies where the alias is made; the original differs from it only on the CPU."""
    found = mapping_differences(original.values, fixed.values)
    if leg.name == "cpu":
        if not found:
            row.status = FAILED
            row.observed += "; the write did not reach the other side: same values as with the copying fix"
            return
        row.observed += f"; the write reached the other side ({found[0]} with the copying fix)"
        row.fixed = "runs; with the copy the other side keeps its values"
        return
    if found:
        row.status = FAILED
        row.observed += f"; on {leg.name} the write still reached the other side ({found[0]})"
        return
    row.observed += f"; on {leg.name} the conversion copied: nothing shared"
    row.fixed = "runs, same values as the original"


def _judge_hidden_write(row: Row, fixture: Fixture, runs: Runs) -> None:
    """DET103's classic case: the fix raises where `.data` ran; the `.data` gradient must be wrong."""
    assert runs.fixed is not None and runs.fixed.exception is not None
    raised = f"raises autograd's in-place error at line {runs.fixed.exception.line}"
    skipped = runs.write_skipped
    if skipped is None or not skipped.ran_cleanly:
        why = skipped.describe() if skipped is not None else "could not be built"
        row.status, row.fixed = FAILED, f"FAILED: {raised}, but the run with the write skipped {why}"
        return
    data_grads, true_grads = gradients(runs.original.values), gradients(skipped.values)
    differing = [name for name in sorted(true_grads) if differences(true_grads[name], data_grads.get(name), name)]
    if not differing:
        row.status = FAILED
        row.fixed = f"FAILED: {raised}, yet the .data run's gradients equal those of the recorded graph"
        return
    name = differing[0]
    row.observed += (
        f"; {name} = {_data_preview(data_grads.get(name))}, but the graph autograd recorded gives {_data_preview(true_grads[name])}"
    )
    row.fixed = raised + " (the hidden write is now caught)"


def _stopped_for_lack_of_data(run: RunResult) -> bool:
    return run.outcome == "raised" and run.exception is not None and bool(META_NO_DATA.search(run.exception.message)) and not DEVICE_TYPE.search(run.exception.message)


def _no_data_note(run: RunResult) -> str:
    assert run.exception is not None
    return f"{run.exception.type} at line {run.exception.line}: meta tensors hold no data"


def _data_preview(picture: Any) -> str:
    if not isinstance(picture, dict) or picture.get("data") is None:
        return "?"
    return preview(picture["data"])


def _claimed_text(fixture: Fixture, leg: DeviceLeg, raising: dict[int, Expectation]) -> str:
    if not fixture.claims:
        return "runs cleanly"
    parts = []
    for line, kinds in sorted(fixture.kinds.items()):
        expected = raising.get(line)
        if expected is not None:
            inside = " (inside the library call)" if "DET106" in fixture.claims.get(line, ()) else ""
            parts.append(f"{expected.text} at line {line}{inside}")
        if "move" in kinds:
            parts.append(f"line {line}: no effect on cpu" if leg.name == "cpu" else f"line {line}: the copy is recorded (grad_fn)")
        if "data" in kinds:
            parts.append(f"line {line}: .data runs silently")
        if "device" in kinds and leg.name == "cpu" and "grad" not in kinds:
            parts.append(f"line {line} runs on cpu")
        if "alias" in kinds:
            where = "the write also changes the other side" if leg.name == "cpu" else "the conversion copies: nothing shared"
            parts.append(f"line {line}: {where}")
    return "; ".join(parts)


def _pairs(pairs: set[tuple[int, str]]) -> str:
    return ", ".join(f"{code} at line {line}" for line, code in sorted(pairs)) or "no diagnostics"
