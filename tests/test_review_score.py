"""benchmarks/review/score.py: a relabelled engine dump is scored against hand labels.

The coordinator re-runs the final engine on the held-out repositories and labels only what
score.py lists as unlabelled, so matching, the recall hits (DET111 included) and that list must hold.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "review" / "score.py"
REPO = "owner+name"


def write_labels(tmp_path: Path) -> tuple[Path, Path]:
    precision = tmp_path / "precision.csv"
    precision.write_text(
        "repo,commit,path,line,column,code,label,reason\n"
        f"{REPO},c0,a.py,3,4,DET101,TRUE,grad output\n"
        f"{REPO},c0,a.py,5,4,DET101,FALSE,no grad\n"
        f"{REPO},c0,b.py,7,0,DET103,TRUE,parameter\n"
    )
    recall = tmp_path / "recall.csv"
    recall.write_text(
        "repo,path,line,kind,hazard,expected_code,reason,site\n"
        f"{REPO},c.py,10,numpy,yes,DET104,cuda buffer,x.numpy()\n"
        f"{REPO},c.py,11,numpy,yes,DET104,cuda buffer,y.numpy()\n"
        f"{REPO},c.py,12,np,no,,list,np.mean(l)\n"
        f"{REPO},b.py,7,data,yes,DET103,parameter (also a TRUE label: one hazard),p.data\n"
    )
    return precision, recall


def run_score(tmp_path: Path, dump: dict[str, list[list[object]]]) -> str:
    precision, recall = write_labels(tmp_path)
    flagged = tmp_path / "flagged.json"
    flagged.write_text(json.dumps(dump))
    result = subprocess.run(
        [sys.executable, str(SCRIPT), str(precision), str(flagged), "--recall", str(recall)],
        capture_output=True, text=True, check=True,
    )
    return result.stdout


def test_precision_recall_and_unlabelled(tmp_path: Path) -> None:
    root = f"/anywhere/{REPO}"
    out = run_score(tmp_path, {
        f"{root}/a.py": [[3, 9, "DET101"], [5, 4, "DET101"], [8, 1, "DET101"]],  # column shift on line 3
        f"{root}/b.py": [],  # the TRUE DET103 is no longer flagged
        f"{root}/c.py": [[10, 2, "DET111"], [12, 3, "DET106"]],
    })
    assert "DET101       1     1      0     1  50.0%" in out
    assert "DET103   found   0 of   1  0.0%" in out
    assert "DET104   found   1 of   2  50.0%" in out  # DET111 counts as the caller-dependent hit
    assert "flagged sites labelled hazard=no: 1" in out
    assert "unlabelled diagnostics: 3" in out
    assert f"{REPO},a.py,8,1,DET101" in out
    assert f"{REPO},c.py,10,2,DET111" in out
