"""The man page and the bash completion are generated from squall's argparse parsers
(scripts/cli-docs.py, `make man`): the committed files are what the parsers say now, man
renders the page with every subcommand and option, and bash completes subcommands and options
with the completion."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from testbed.cli import build_parser, subcommands

REPO = Path(__file__).resolve().parent.parent
MAN = REPO / "docs" / "man"


def test_the_committed_files_are_what_the_parsers_say(tmp_path: Path) -> None:
    r = subprocess.run([sys.executable, "scripts/cli-docs.py", "--out", str(tmp_path)],
                       cwd=REPO, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    for name in ("squall.1", "squall.bash-completion"):
        assert (tmp_path / name).read_text() == (MAN / name).read_text(), \
            f"docs/man/{name} is stale: run `make man`"


def test_man_shows_every_subcommand_and_option() -> None:
    if not shutil.which("man"):
        pytest.skip("man is not installed")
    page = subprocess.run(["man", "-l", str(MAN / "squall.1")], capture_output=True, text=True,
                          timeout=60, env={"MANWIDTH": "100", "PATH": "/usr/bin:/bin"}).stdout
    page = page.replace("\u2010", "-")             # some groff builds print a Unicode hyphen
    for name, sub in subcommands(build_parser()).items():
        assert f"\n   {name}\n" in page, name
        for action in sub._actions:
            for option in action.option_strings:
                assert option in page, (name, option)


def _complete(*words: str) -> list[str]:
    line = " ".join(f"'{w}'" for w in words)
    script = (f"source {MAN / 'squall.bash-completion'}; COMP_WORDS=({line}); "
              f"COMP_CWORD={len(words) - 1}; _squall; printf '%s\\n' \"${{COMPREPLY[@]}}\"")
    r = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    return r.stdout.split()


def test_bash_completes_subcommands_and_their_options() -> None:
    assert _complete("squall", "com") == ["compare"]
    assert set(_complete("squall", "")) >= {"run", "show", "report", "compare", "--version"}
    assert _complete("squall", "compare", "--v") == ["--version", "--vs"]
    assert "--title" in _complete("squall", "run", "--t")
