"""The one Jinja environment every template of the generator is rendered in (templates/, templates/cuda/)."""

from __future__ import annotations

import importlib.util
import marshal
import types
from pathlib import Path

import jinja2
from jinja2.bccache import Bucket

from codegen import disk_cache, runtime_reads
from runtime import verified_cache


def environment(root: Path) -> jinja2.Environment:
    """The environment of the project at `root`: its templates/, strict about undefined names."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(root / "templates")),
        undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
        autoescape=False, bytecode_cache=_template_cache(),
    )
    env.globals.update(runtime_reads.jinja_globals(root))  # Note [What the generator reads from the runtime]
    return env


class VerifiedBytecodeCache(jinja2.BytecodeCache):
    """Compiled templates kept across runs (Note [Generator caches]): compiling them is a large part of a
    no-op `generate` (0.15-0.2 s of it for the project's templates). Jinja's FileSystemBytecodeCache
    unpickles and unmarshals whatever file it finds; this one keys an entry by a digest of the template's
    name and file (`bucket.key`), its source (`bucket.checksum`), Jinja's version and Python's bytecode
    magic, reads it through runtime/verified_cache.py (Note [Caches that verify]) and unmarshals only a
    body that passed those checks, which only this class writes. Nothing is unpickled."""

    LABEL = "jinja"

    def __init__(self, directory: Path | None, root: Path | None = None) -> None:
        self.directory = directory
        self.root = root  # the top of the cache tree, checked too (Note [Caches that verify])

    def _name(self, bucket: Bucket) -> str:
        return disk_cache.digest("jinja bytecode", jinja2.__version__, importlib.util.MAGIC_NUMBER,
                                 _compile_options(bucket.environment), bucket.key, bucket.checksum)

    def load_bytecode(self, bucket: Bucket) -> None:
        body = verified_cache.read(self.directory, self._name(bucket), self.LABEL, root=self.root)
        if body is None:
            return
        try:
            code = marshal.loads(body)
        except (EOFError, ValueError, TypeError):
            return
        if isinstance(code, types.CodeType):
            bucket.code = code

    def dump_bytecode(self, bucket: Bucket) -> None:
        if bucket.code is not None:
            verified_cache.write(self.directory, self._name(bucket), marshal.dumps(bucket.code), self.LABEL,
                                 root=self.root)


def _compile_options(env: jinja2.Environment) -> str:
    """The settings of `env` that change the code a template compiles to (Jinja's own key leaves them out)."""
    return repr((env.block_start_string, env.block_end_string, env.variable_start_string,
                 env.variable_end_string, env.comment_start_string, env.comment_end_string,
                 env.line_statement_prefix, env.line_comment_prefix, env.trim_blocks, env.lstrip_blocks,
                 env.newline_sequence, env.keep_trailing_newline, env.autoescape, env.optimized,
                 sorted(env.extensions)))


def _template_cache() -> jinja2.BytecodeCache | None:
    """The compiled-template cache, or None without a cache directory."""
    directory = disk_cache.cache_dir("jinja")
    return None if directory is None else VerifiedBytecodeCache(directory, directory.parent)
