"""Score an engine's diagnostics dump against hand labels: precision, recall, and what is unlabelled.

Usage:
    python benchmarks/review/score.py PRECISION.csv FLAGGED.json [FLAGGED.json ...]
        [--recall RECALL.csv] [--caller-code DET111]

FLAGGED.json is `benchmarks/review/flagged.py`'s dump ({path: [[line, column, code], ...]}, paths
as given to it, e.g. /work/corpus21/owner+name/...). Labels name a repository (`owner+name`) and a
path inside it, so a dump matches whatever directory the corpus was unpacked in.

Precision per rule: the dump's diagnostics that carry a label, TRUE / (TRUE + FALSE); EXTERNAL
labels (a caller-dependent diagnostic with no caller in the project) are counted apart. A
diagnostic matches a label on (repo, path, line, code, column), or on (repo, path, line, code)
when that line's labels for the code agree, so a shift of column after an engine change does not
orphan a label. Diagnostics with no label are listed: after an engine change, label only those.

Recall per expected code: a recall row with hazard `yes` counts as found when the dump has a
diagnostic of its expected code on its line (or of --caller-code, the code a caller-dependent
diagnostic may move to). Rows with hazard `no` that are flagged are listed as new flags.
"""

from __future__ import annotations

import argparse
import csv
import json
from collections import Counter, defaultdict
from pathlib import Path

Key = tuple[str, str, int, str]


def split_repo(path: str, repos: set[str]) -> tuple[str, str] | None:
    """(repo, path inside it) for a dumped path, by the `owner+name/` directory in it."""
    parts = Path(path).parts
    for index, part in enumerate(parts):
        if part in repos:
            return part, "/".join(parts[index + 1 :])
    return None


def load_dump(paths: list[str], repos: set[str]) -> list[tuple[str, str, int, int, str]]:
    """Every diagnostic of the dumps as (repo, path, line, column, code), for labelled repos only."""
    found = []
    for dump in paths:
        for path, diagnostics in json.loads(Path(dump).read_text()).items():
            where = split_repo(path, repos)
            if where is None:
                continue
            for line, column, code in diagnostics:
                found.append((where[0], where[1], int(line), int(column), code))
    return found


def precision_labels(path: str) -> tuple[dict[tuple[str, str, int, str, int], str], dict[Key, set[str]]]:
    """Labels by exact position and, per line and code, the set of labels given there."""
    exact: dict[tuple[str, str, int, str, int], str] = {}
    by_line: dict[Key, set[str]] = defaultdict(set)
    with open(path, newline="") as handle:
        for row in csv.DictReader(handle):
            label = row["label"].strip().upper()
            key = (row["repo"], row["path"], int(row["line"]), row["code"])
            exact[(*key, int(row.get("column") or -1))] = label
            by_line[key].add(label)
    return exact, by_line


def label_of(diagnostic: tuple[str, str, int, int, str], exact: dict, by_line: dict) -> str | None:
    repo, path, line, column, code = diagnostic
    if (repo, path, line, code, column) in exact:
        return exact[(repo, path, line, code, column)]
    labels = by_line.get((repo, path, line, code), set())
    return next(iter(labels)) if len(labels) == 1 else None


def score_precision(found: list, exact: dict, by_line: dict) -> list[tuple[str, str, int, int, str]]:
    """Print precision per rule; return the diagnostics that have no label."""
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    unlabelled = []
    for diagnostic in found:
        label = label_of(diagnostic, exact, by_line)
        if label is None:
            unlabelled.append(diagnostic)
        counts[diagnostic[4]][label or "UNLABELLED"] += 1
    print("precision (labelled diagnostics of this dump)")
    print(f"  {'rule':8} {'true':>5} {'false':>5} {'extern':>6} {'unlab':>5}  precision")
    for code in sorted(counts):
        c = counts[code]
        judged = c["TRUE"] + c["FALSE"]
        value = f"{c['TRUE'] / judged:.1%}" if judged else "-"
        print(f"  {code:8} {c['TRUE']:5} {c['FALSE']:5} {c['EXTERNAL']:6} {c['UNLABELLED']:5}  {value}")
    return unlabelled


def score_recall(path: str, found: list, caller_code: str, exact: dict) -> None:
    """Print recall per code and the `no`-hazard sites that are now flagged.

    The hazards are the TRUE precision labels (hazards some engine flagged; one that a later
    engine drops counts as missed) plus the recall rows with hazard `yes` (hazards missed before).
    """
    flagged: dict[tuple[str, str, int], set[str]] = defaultdict(set)
    for repo, file, line, _column, code in found:
        flagged[(repo, file, line)].add(code)
    hits: dict[str, Counter[str]] = defaultdict(Counter)
    true_sites = {(repo, file, line, code) for (repo, file, line, code, _), label in exact.items() if label == "TRUE"}
    for (repo, file, line, code, _column), label in exact.items():
        if label == "TRUE":
            hit = flagged.get((repo, file, line), set()) & {code, caller_code}
            hits[code]["found" if hit else "missed"] += 1
    with open(path, newline="") as handle:
        rows = list(csv.DictReader(handle))
    hazard_lines = {(r["repo"], r["path"], int(r["line"])) for r in rows if r["hazard"].strip().lower() == "yes"}
    new_flags = []
    for row in rows:
        where = (row["repo"], row["path"], int(row["line"]))
        codes = flagged.get(where, set())
        if row["hazard"].strip().lower() == "yes":
            expected = row["expected_code"]
            if (*where, expected) in true_sites:
                continue  # the same hazard, labelled again once an engine flagged it: count it once
            hits[expected]["found" if codes & {expected, caller_code} else "missed"] += 1
        elif codes and where not in hazard_lines:  # a line with a hazard row may be flagged for it
            new_flags.append((*where, sorted(codes)))
    print("recall (TRUE precision labels + recall rows with hazard yes)")
    for code in sorted(hits):
        c = hits[code]
        total = c["found"] + c["missed"]
        print(f"  {code:8} found {c['found']:3} of {total:3}  {c['found'] / total:.1%}")
    print(f"flagged sites labelled hazard=no: {len(new_flags)} (lines with several sites may be legit)")
    for entry in new_flags:
        print("  ", *entry)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("labels", help="precision labels CSV")
    parser.add_argument("flagged", nargs="+", help="flagged.py dumps")
    parser.add_argument("--recall", help="recall labels CSV")
    parser.add_argument("--caller-code", default="DET111", help="code that also counts as a recall hit")
    args = parser.parse_args()
    exact, by_line = precision_labels(args.labels)
    repos = {key[0] for key in by_line}
    if args.recall:
        with open(args.recall, newline="") as handle:
            repos |= {row["repo"] for row in csv.DictReader(handle)}
    found = load_dump(args.flagged, repos)
    unlabelled = score_precision(found, exact, by_line)
    if args.recall:
        score_recall(args.recall, found, args.caller_code, exact)
    print(f"unlabelled diagnostics: {len(unlabelled)}")
    for repo, path, line, column, code in sorted(unlabelled):
        print(f"  {repo},{path},{line},{column},{code}")


if __name__ == "__main__":
    main()
