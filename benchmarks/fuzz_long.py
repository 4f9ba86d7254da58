"""The fuzz of tests/test_fuzz.py, for much longer and with a fresh seed each run.

Usage: python benchmarks/fuzz_long.py [--mutations N] [--programs N] [--seed S]

The test suite runs a fixed, derandomized sample (1500 mutated fixtures, 15 hypothesmith
programs) so CI is deterministic and quick; this script runs many more examples with a seed
(printed, so a failure can be replayed with ``--seed``) and prints how the examples split
(refused, fixed, nothing to report). Exit 1, with Hypothesis's minimal failing input, when a
property fails: the checker raised something other than AnalysisError, or a fix did not parse,
was not idempotent, or changed a token or a line outside the fixed expressions.
"""

from __future__ import annotations

import argparse
import collections
import random
import sys
import time
from pathlib import Path

from hypothesis import HealthCheck, given, seed, settings

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

# The properties and strategies live with the bounded tests, imported after the path is set.
import test_fuzz


def run(name: str, strategy, examples: int, chosen_seed: int) -> collections.Counter[str]:
    outcomes: collections.Counter[str] = collections.Counter()

    @seed(chosen_seed)
    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
    )
    @given(strategy)
    def fuzz(source: str) -> None:
        outcomes[test_fuzz.check_everything(source)] += 1

    started = time.perf_counter()
    fuzz()
    elapsed = time.perf_counter() - started
    total = sum(outcomes.values())
    split = ", ".join(f"{kind}: {count}" for kind, count in outcomes.most_common())
    print(f"{name}: {total} examples in {elapsed:.0f} s ({split})", flush=True)
    return outcomes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mutations", type=int, default=20_000, help="mutated fixtures to try (default 20000)")
    parser.add_argument("--programs", type=int, default=300, help="hypothesmith programs to try (default 300)")
    parser.add_argument("--seed", type=int, default=None, help="replay a run (default: a random seed)")
    args = parser.parse_args()
    chosen_seed = args.seed if args.seed is not None else random.randrange(1 << 32)
    print(f"seed {chosen_seed}", flush=True)
    try:
        if args.mutations:
            run("mutated fixtures", test_fuzz.mutated_fixtures(), args.mutations, chosen_seed)
        if args.programs:
            run("hypothesmith programs", test_fuzz.generated_programs(), args.programs, chosen_seed)
    except AssertionError as error:
        print(f"FAILED (replay with --seed {chosen_seed}): {error}", file=sys.stderr)
        for note in getattr(error, "__notes__", ()):  # Hypothesis attaches the minimal input here
            print(note, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
