"""`generate` killed (SIGKILL) at random points: `generated/` is always exactly the old or the new tree, and
the next run cleans up (Note [Whole-tree swap], codegen/tree_swap.py)."""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from codegen import gen, tree_swap

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")


def project_copy(tmp: Path) -> Path:
    for name in ("native_functions.yaml", "derivatives.yaml"):
        shutil.copy(ROOT / name, tmp / name)
    for name in ("templates", "runtime", "generated"):
        shutil.copytree(ROOT / name, tmp / name, ignore=shutil.ignore_patterns("__pycache__"))
    return tmp


def snapshot(out_dir: Path) -> dict[str, str] | None:
    if not out_dir.is_dir():
        return None
    return {rel: p.read_text() for rel, p in sorted(tree_swap._existing(out_dir).items())}


def leftovers(root: Path) -> list[str]:
    return sorted(p.name for p in root.iterdir() if p.name.startswith("generated."))


def killed_write(root: Path, files: dict[str, str], delay: float, exchange: bool) -> None:
    """Fork a child that writes `files` into root/generated; SIGKILL it after `delay` seconds."""
    pid = os.fork()
    if pid == 0:  # the child: write and leave without running any of pytest's cleanup
        code = 0
        try:
            if not exchange:
                tree_swap._renameat2 = None
            gen.write_files(root, files)
        except BaseException:
            code = 1
        os._exit(code)
    time.sleep(delay)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)


def test_generate_killed_at_random_points_leaves_old_or_new_tree(tmp_path: Path) -> None:
    root = project_copy(tmp_path)
    out_dir = root / gen.GENERATED
    old = snapshot(out_dir)
    assert old
    # a new tree that differs from the old one in many files, with one file gone and one added
    new = {rel: text + "# changed\n" for i, (rel, text) in enumerate(old.items()) if i % 7}
    new["cuda/pointwise/extra_op.cu"] = "// a new file\n"
    start = time.perf_counter()
    gen.write_files(root, new)
    gen.write_files(root, old)
    span = (time.perf_counter() - start) / 2 * 1.3  # a kill time past the end of a whole write
    rng = random.Random(13)
    trees = {"old": old, "new": new}
    current = "old"
    outcomes = set()
    for trial in range(60):
        target = "new" if current == "old" else "old"
        exchange = trial % 3 != 0 and tree_swap._renameat2 is not None
        # random kill times, plus one at once and one well after a whole write, so that both outcomes occur
        # however fast or slow the forked writer runs on a loaded machine
        delay = 0.0 if trial == 0 else span * 20 if trial == 1 else rng.uniform(0, span)
        killed_write(root, trees[target], delay, exchange)
        if not exchange:  # two renames leave an instant without generated/: the next run restores it
            tree_swap.recover(out_dir)
        on_disk = snapshot(out_dir)
        assert on_disk in (trees[current], trees[target]), f"trial {trial}: a mixed or missing tree"
        current = "old" if on_disk == old else "new"
        outcomes.add(current == target)
    assert outcomes == {True, False}, "the kills never hit both before and after the swap"
    # the next run (the real command) recovers: no leftovers, generated/ fresh
    run = subprocess.run([sys.executable, "-m", "codegen", "generate", "--root", str(root)], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert snapshot(out_dir) == old
    assert leftovers(root) == []


def test_recover_removes_leftovers_and_restores_a_missing_tree(tmp_path: Path) -> None:
    out_dir = tmp_path / "generated"
    (tmp_path / "generated.new-999999999").mkdir()
    (tmp_path / "generated.new-999999999" / "_ops.py").write_text("half")
    old = tmp_path / "generated.old-999999998"
    old.mkdir()
    (old / "_ops.py").write_text("whole")
    done = tree_swap.recover(out_dir)
    assert (out_dir / "_ops.py").read_text() == "whole"
    assert leftovers(tmp_path) == []
    assert len(done) == 2


def test_unchanged_files_keep_their_mtime(tmp_path: Path) -> None:
    out_dir = tmp_path / "generated"
    assert tree_swap.write_tree(out_dir, {"a.py": "x = 1\n", "b.py": "y = 1\n"}) == ["a.py", "b.py"]
    before = (out_dir / "a.py").stat().st_mtime_ns
    time.sleep(0.01)
    assert tree_swap.write_tree(out_dir, {"a.py": "x = 1\n", "b.py": "y = 2\n", "c/d.py": ""}) == ["b.py", "c/d.py"]
    assert (out_dir / "a.py").stat().st_mtime_ns == before
    assert tree_swap.write_tree(out_dir, {"a.py": "x = 1\n"}) == ["b.py", "c/d.py"]
    assert sorted(tree_swap._existing(out_dir)) == ["a.py"]
    assert leftovers(tmp_path) == []


def test_a_failed_write_exits_2_and_leaves_the_old_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from codegen.cli import main
    root = project_copy(tmp_path)
    (root / "native_functions.yaml").write_text((root / "native_functions.yaml").read_text()
                                                + "\n- func: extra_op(Tensor self) -> Tensor\n  pointwise: self\n")
    (root / "derivatives.yaml").write_text((root / "derivatives.yaml").read_text()
                                           + "\n- name: extra_op(Tensor self) -> Tensor\n  self: grad\n")
    before = snapshot(root / gen.GENERATED)

    def full_disk(*_: object) -> None:
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(tree_swap, "_swap", full_disk)
    result = CliRunner().invoke(main, ["generate", "--root", str(root)])
    assert result.exit_code == 2, result.output
    assert "cannot write generated/" in result.output and "No space left" in result.output
    assert snapshot(root / gen.GENERATED) == before
    assert leftovers(root) == []
