"""Every ```python block of README.md runs as written, in order, from a scratch folder
that links the repository's examples (so its runs land there). Blocks marked
`<!-- ray -->` need a Ray cluster: test_distributed.py runs them on its own."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def python_blocks(marker: str | None = None) -> list[tuple[int, str]]:
    """The README's python blocks (line, text): those preceded by `marker`, or with None
    those preceded by no marker."""
    blocks, current, previous = [], None, ""
    for number, line in enumerate((ROOT / "README.md").read_text().splitlines(), start=1):
        if current is not None:
            if line.startswith("```"):
                blocks.append(current)
                current = None
            else:
                current[2].append(line)
        elif line.strip() == "```python":
            mark = previous.strip() if previous.strip().startswith("<!--") else None
            current = (number, mark, [])
        if line.strip():
            previous = line
    want = None if marker is None else f"<!-- {marker} -->"
    return [(n, "\n".join(text)) for n, mark, text in blocks if mark == want]


def run_blocks(blocks: list[tuple[int, str]], folder: Path) -> None:
    (folder / "examples").symlink_to(ROOT / "examples")
    cwd = os.getcwd()
    os.chdir(folder)
    try:
        for line, text in blocks:
            try:
                exec(compile(text, f"README.md:{line}", "exec"), {"__name__": "__readme__"})
            except Exception as e:
                raise AssertionError(f"README.md line {line}: the block failed: {e!r}") from e
    finally:
        os.chdir(cwd)


def test_every_python_block_of_the_readme_runs(tmp_path):
    blocks = python_blocks()
    assert len(blocks) >= 2
    pytest.importorskip("pyspiel")
    run_blocks(blocks, tmp_path)
    assert (tmp_path / "runs" / "leduc_psro_python" / "report.json").is_file()
