"""No two files of a crate's code import each other in a circle (`scripts/import-circles`)."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "import-circles"


def run(repo):
    return subprocess.run([sys.executable, str(SCRIPT), str(repo)], capture_output=True, text=True, timeout=120)


def test_no_crate_has_an_import_circle():
    done = run(ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip().endswith("0 circle(s)")


def test_the_check_finds_a_circle(tmp_path):
    src = tmp_path / "games" / "src"
    src.mkdir(parents=True)
    (src / "lib.rs").write_text("mod a;\nmod b;\n")
    (src / "a.rs").write_text("use crate::b::B;\npub struct A(B);\n")
    (src / "b.rs").write_text("use crate::a::A;\npub struct B(Box<A>);\n")
    done = run(tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "games/src/a.rs" in done.stdout and "games/src/b.rs" in done.stdout
