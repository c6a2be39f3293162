"""DESIGN.md's Notes index lists every `Note [Title]` that the code writes or cites, names no Note that the
code does not have, and each file it names for a Note holds that Note, one of them writing it. A Note is
written where `Note [Title]` ends its line or is followed by `:`; elsewhere it is cited. A citation may
shorten a long title with a trailing "..." (`Note [The emulator reaches ...]`)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ("codegen", "runtime", "templates", "tests", "bench")
SUFFIXES = {".py", ".j2", ".cuh", ".h", ".cu", ".cpp", ".c"}
NOTE = re.compile(r"Note \[([^\]]{1,160})\]")
WRITTEN = re.compile(r"Note \[([^\]]{1,160})\](?::|[ \t]*(?:-+[ \t]*)?$)", re.MULTILINE)
TITLE = re.compile(r"\[([^\]]{1,160})\]")
# In the index, a group of titles is followed by the files that hold them: `[A], [B] (dir/a.py, dir/b.py)`.
TITLE_OR_FILES = re.compile(r"\[([^\]]{1,160})\]|\(([^()\[\]]*/[^()\[\]]*)\)")
INDEX = "## Notes, in reading order"


def _normal(title: str) -> str:
    """One line: a title wrapped over comment lines (`#`, `//`, ` *`) joined with single spaces."""
    return " ".join(re.sub(r"\n\s*(?:#|//|\*)?\s*", " ", title).split())


def code_notes(root: Path = ROOT, pattern: re.Pattern[str] = NOTE) -> dict[str, set[str]]:
    """Title -> the files that hold it (with `WRITTEN`: the files that write it)."""
    found: dict[str, set[str]] = {}
    for top in SOURCES:
        for path in sorted((root / top).rglob("*")):
            if path.suffix not in SUFFIXES or not path.is_file() or "__pycache__" in path.parts:
                continue
            if path.resolve() == Path(__file__).resolve():  # this file's samples are no Notes
                continue
            for m in pattern.finditer(path.read_text(errors="replace")):
                found.setdefault(_normal(m.group(1)), set()).add(path.relative_to(root).as_posix())
    return found


def indexed_notes(design: str) -> set[str]:
    assert INDEX in design, f"DESIGN.md has no '{INDEX}' section"
    return {_normal(m.group(1)) for m in TITLE.finditer(design[design.index(INDEX):])}


def files_of_index(design: str) -> dict[str, list[str]]:
    """Title -> the files the index names for it (those in the parentheses after its group of titles)."""
    files: dict[str, list[str]] = {}
    group: list[str] = []
    for m in TITLE_OR_FILES.finditer(design[design.index(INDEX):]):
        if m.group(1) is not None:
            group.append(_normal(m.group(1)))
            continue
        for title in group:
            files.setdefault(title, []).extend(" ".join(f.split()) for f in m.group(2).split(","))
        group = []
    return files


def wrong_files(code: dict[str, set[str]], named: dict[str, list[str]]) -> list[str]:
    """`title: path` for each file the index names for a Note that the file (or, for `dir/`, no file under
    it) does not hold."""
    wrong = []
    for title, paths in sorted(named.items()):
        holders = code.get(title, set())
        for path in paths:
            if not any(h == path or (path.endswith("/") and h.startswith(path)) for h in holders):
                wrong.append(f"{title}: {path}")
    return wrong


def not_written_where_named(written: dict[str, set[str]], named: dict[str, list[str]]) -> list[str]:
    """Notes of the index none of whose named files writes them."""
    return [f"{title}: {', '.join(paths)}" for title, paths in sorted(named.items())
            if not any(w == p or (p.endswith("/") and w.startswith(p)) for p in paths for w in written.get(title, ()))]


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


def test_each_file_named_in_the_index_holds_its_note() -> None:
    named = files_of_index((ROOT / "DESIGN.md").read_text())
    assert len(named) > 50  # the parse found the groups
    assert wrong_files(code_notes(), named) == [], "DESIGN.md's Notes index names a file without the Note"


def test_the_index_names_where_each_note_is_written() -> None:
    named = files_of_index((ROOT / "DESIGN.md").read_text())
    assert not_written_where_named(code_notes(pattern=WRITTEN), named) == []


def test_the_index_lists_each_note_once() -> None:
    design = (ROOT / "DESIGN.md").read_text()
    titles = [_normal(m.group(1)) for m in TITLE.finditer(design[design.index(INDEX):])]
    assert sorted({t for t in titles if titles.count(t) > 1}) == []


def test_every_cited_note_is_written() -> None:
    written = code_notes(pattern=WRITTEN)
    cited = [t for t in code_notes() if not t.endswith("...")]
    assert [t for t in cited if t not in written] == [], "a Note is cited but written nowhere"


def test_wrapped_and_shortened_titles(tmp_path: Path) -> None:
    (tmp_path / "runtime").mkdir()
    (tmp_path / "runtime" / "a.py").write_text("# Note [Two\n# words]\nx = 1  # Note [Long title ...]\n")
    (tmp_path / "runtime" / "b.cuh").write_text("// see Note [Third one]\n")
    code = code_notes(tmp_path)
    assert set(code) == {"Two words", "Long title ...", "Third one"}
    listed = indexed_notes(f"{INDEX}\n- [Two\n  words], [Long title of it] (runtime/a.py)\n")
    assert missing_from_index(code, listed) == ["Note [Third one] (runtime/b.cuh)"]


def test_files_are_checked_per_group(tmp_path: Path) -> None:
    (tmp_path / "runtime" / "cuda").mkdir(parents=True)
    (tmp_path / "runtime" / "a.py").write_text("# Note [One]\n# Note [Two]\n")
    (tmp_path / "runtime" / "cuda" / "b.py").write_text("# Note [Three]\n")
    code = code_notes(tmp_path)
    named = files_of_index(f"{INDEX}\nEvery Note (codegen/, runtime/) is here.\n- [One], [Two]\n  (runtime/a.py);"
                           " [Three] (runtime/cuda/), [Four] (runtime/a.py,\n  runtime/cuda/b.py)\n")
    assert named == {"One": ["runtime/a.py"], "Two": ["runtime/a.py"], "Three": ["runtime/cuda/"],
                     "Four": ["runtime/a.py", "runtime/cuda/b.py"]}
    assert wrong_files(code, named) == ["Four: runtime/a.py", "Four: runtime/cuda/b.py"]
    assert wrong_files(code, {"Three": ["runtime/a.py"]}) == ["Three: runtime/a.py"]


def test_written_versus_cited(tmp_path: Path) -> None:
    (tmp_path / "runtime").mkdir()
    (tmp_path / "runtime" / "a.py").write_text("# Note [One]: why\n# ---- Note [Two] ----\n# see Note [Three].\n")
    (tmp_path / "runtime" / "b.py").write_text("# as (Note [One]) says\n# Note [Three]\n")
    written = code_notes(tmp_path, WRITTEN)
    assert written == {"One": {"runtime/a.py"}, "Two": {"runtime/a.py"}, "Three": {"runtime/b.py"}}
    named = {"One": ["runtime/b.py"], "Two": ["runtime/b.py", "runtime/a.py"], "Three": ["runtime/"]}
    assert not_written_where_named(written, named) == ["One: runtime/b.py"]
