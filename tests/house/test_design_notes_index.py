"""DESIGN.md's Notes index lists every `Note [Title]` that the code writes or cites, and names no Note that the
code does not have. A citation may shorten a long title with a trailing "..." (`Note [The emulator reaches ...]`)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ("codegen", "runtime", "templates", "tests", "bench")
SUFFIXES = {".py", ".j2", ".cuh", ".h", ".cu", ".cpp", ".c"}
NOTE = re.compile(r"Note \[([^\]]{1,160})\]")
TITLE = re.compile(r"\[([^\]]{1,160})\]")
INDEX = "## Notes, in reading order"


def _normal(title: str) -> str:
    """One line: a title wrapped over comment lines (`#`, `//`, ` *`) joined with single spaces."""
    return " ".join(re.sub(r"\n\s*(?:#|//|\*)?\s*", " ", title).split())


def code_notes(root: Path = ROOT) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for top in SOURCES:
        for path in sorted((root / top).rglob("*")):
            if path.suffix not in SUFFIXES or not path.is_file() or "__pycache__" in path.parts:
                continue
            if path.resolve() == Path(__file__).resolve():  # this file's samples are no Notes
                continue
            for m in NOTE.finditer(path.read_text(errors="replace")):
                found.setdefault(_normal(m.group(1)), set()).add(path.relative_to(root).as_posix())
    return found


def indexed_notes(design: str) -> set[str]:
    assert INDEX in design, f"DESIGN.md has no '{INDEX}' section"
    return {_normal(m.group(1)) for m in TITLE.finditer(design[design.index(INDEX):])}


def missing_from_index(code: dict[str, set[str]], listed: set[str]) -> list[str]:
    missing = []
    for title, files in sorted(code.items()):
        if title.endswith("...") and any(t.startswith(title[:-3].rstrip()) for t in listed):
            continue
        if title not in listed:
            missing.append(f"Note [{title}] ({', '.join(sorted(files))})")
    return missing


def test_every_note_of_the_code_is_in_the_index() -> None:
    code = code_notes()
    assert len(code) > 50  # the walk found the Notes
    missing = missing_from_index(code, indexed_notes((ROOT / "DESIGN.md").read_text()))
    assert missing == [], "add these to DESIGN.md's Notes index"


def test_the_index_names_only_notes_of_the_code() -> None:
    assert sorted(indexed_notes((ROOT / "DESIGN.md").read_text()) - set(code_notes())) == []


def test_wrapped_and_shortened_titles(tmp_path: Path) -> None:
    (tmp_path / "runtime").mkdir()
    (tmp_path / "runtime" / "a.py").write_text("# Note [Two\n# words]\nx = 1  # Note [Long title ...]\n")
    (tmp_path / "runtime" / "b.cuh").write_text("// see Note [Third one]\n")
    code = code_notes(tmp_path)
    assert set(code) == {"Two words", "Long title ...", "Third one"}
    listed = indexed_notes(f"{INDEX}\n- [Two\n  words], [Long title of it] (runtime/a.py)\n")
    assert missing_from_index(code, listed) == ["Note [Third one] (runtime/b.cuh)"]
