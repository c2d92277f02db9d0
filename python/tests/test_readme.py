"""Every ```python block of README.md and of the book's chapters (docs/src, in SUMMARY.md's
order) runs as written, in order, from a scratch folder that links the repository's
examples (so its runs land there). Blocks marked `<!-- ray -->` need a Ray cluster:
test_distributed.py runs them on its own."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from conftest import require

ROOT = Path(__file__).resolve().parents[2]


def pages() -> list[Path]:
    """README.md, then the book's chapters in SUMMARY.md's order."""
    summary = (ROOT / "docs" / "src" / "SUMMARY.md").read_text()
    chapters = [c for c in re.findall(r"\]\(([^)]*)\)", summary) if c]
    return [ROOT / "README.md"] + [ROOT / "docs" / "src" / c for c in chapters]


def python_blocks(marker: str | None = None) -> list[tuple[str, str]]:
    """The python blocks (where, text) of the README and the book: those preceded by
    `marker`, or with None those preceded by no marker."""
    blocks = []
    for page in pages():
        current, previous = None, ""
        name = page.relative_to(ROOT)
        for number, line in enumerate(page.read_text().splitlines(), start=1):
            if current is not None:
                if line.startswith("```"):
                    blocks.append(current)
                    current = None
                else:
                    current[2].append(line)
            elif line.strip() == "```python":
                mark = previous.strip() if previous.strip().startswith("<!--") else None
                current = (f"{name} line {number}", mark, [])
            if line.strip():
                previous = line
    want = None if marker is None else f"<!-- {marker} -->"
    return [(where, "\n".join(text)) for where, mark, text in blocks if mark == want]


def run_blocks(blocks: list[tuple[str, str]], folder: Path) -> None:
    (folder / "examples").symlink_to(ROOT / "examples")
    cwd = os.getcwd()
    os.chdir(folder)
    try:
        for where, text in blocks:
            try:
                exec(compile(text, where, "exec"), {"__name__": "__readme__"})
            except Exception as e:
                raise AssertionError(f"{where}: the block failed: {e!r}") from e
    finally:
        os.chdir(cwd)


def test_every_python_block_of_the_readme_runs(tmp_path):
    blocks = python_blocks()
    assert len(blocks) >= 2
    require("pyspiel")
    run_blocks(blocks, tmp_path)
    assert (tmp_path / "runs" / "leduc_psro_python" / "report.json").is_file()
