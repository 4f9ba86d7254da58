"""`fix` replaces files atomically, which splits a hard link: it must say so, one line per file."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from flake8_detach.cli import main

SOURCE = "import torch\nw = torch.zeros(2, requires_grad=True)\na = w.data.clone().detach()\n"


def test_fixing_a_hard_linked_file_names_it_and_leaves_the_other_link_unchanged(tmp_path: Path, capsys):
    fixed, other = tmp_path / "a.py", tmp_path / "b.py"
    fixed.write_text(SOURCE)
    os.link(fixed, other)
    main(["fix", str(fixed)])
    out = capsys.readouterr().out
    assert f"{fixed}: note: was hard-linked; the other links keep the old text" in out
    assert fixed.read_text() != SOURCE
    assert other.read_text() == SOURCE


def test_a_file_with_one_link_gets_no_note(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    path = tmp_path / "a.py"
    path.write_text(SOURCE)
    main(["fix", str(path)])
    assert "hard-linked" not in capsys.readouterr().out
