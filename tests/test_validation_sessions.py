"""A validation never overwrites an earlier one's runs: each gets its own directory."""
from __future__ import annotations

from pathlib import Path

import pytest

import validation.run as vrun


def test_each_validation_gets_a_new_directory_beside_the_earlier_ones(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vrun, "OUT", tmp_path)
    first = vrun.new_session()
    (first / "00-saarto-http10-all").mkdir()
    second = vrun.new_session()
    assert first != second
    assert (first / "00-saarto-http10-all").is_dir()
    assert (second / "logs").is_dir() and first.parent == second.parent == tmp_path / "runs"
