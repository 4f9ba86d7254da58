"""Run the conformance cases (one subprocess, torch imported once): for each case folder, exec
its `main.py` with the folder importable, and report where it raised and what.

Usage: python runner.py CASES.json OUT.json, CASES.json a list of [name, folder]; OUT.json maps
each name to [exception type name or null, the line of main.py it was raised at or null].
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

os.environ.setdefault("MPLBACKEND", "Agg")


def run_case(folder: Path) -> list[object]:
    main = folder / "main.py"
    local_modules = [path.stem for path in folder.glob("*.py") if path.name != "main.py"]
    sys.path.insert(0, str(folder))
    try:
        code = compile(main.read_text(encoding="utf-8"), str(main), "exec")
        exec(code, {"__name__": "__main__"})  # noqa: S102
    except Exception as error:  # noqa: BLE001 (what raised is the result)
        line = None
        trace = error.__traceback__
        while trace is not None:
            if trace.tb_frame.f_code.co_filename == str(main):
                line = trace.tb_lineno
            trace = trace.tb_next
        return [type(error).__name__, line]
    finally:
        sys.path.remove(str(folder))
        for name in local_modules:
            sys.modules.pop(name, None)
        import matplotlib.pyplot as plt

        plt.close("all")
    return [None, None]


def main(cases_file: str, out_file: str) -> None:
    import warnings

    warnings.simplefilter("ignore")
    found = {name: run_case(Path(folder)) for name, folder in json.loads(Path(cases_file).read_text())}
    Path(out_file).write_text(json.dumps(found))


if __name__ == "__main__":
    main(*sys.argv[1:3])
