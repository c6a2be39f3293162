"""The one Jinja environment every template of the generator is rendered in (templates/, templates/cuda/)."""

from __future__ import annotations

import functools
from pathlib import Path

import jinja2

from codegen import disk_cache, inline


def environment(root: Path) -> jinja2.Environment:
    """The environment of the project at `root`: its templates/, strict about undefined names."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(root / "templates")),
        undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
        autoescape=False, bytecode_cache=_template_cache(),
    )
    env.globals["inline"] = inline.jinja_inline(root)
    env.globals["inline_expr"] = functools.partial(inline.inline_expr, root)
    return env


def _template_cache() -> jinja2.BytecodeCache | None:
    """Compiled templates kept across runs (keyed by template name and source checksum, so an edited
    template is recompiled; Note [Generator caches]): compiling them is a large part of a no-op
    `generate`. None if no cache dir."""
    directory = disk_cache.cache_dir("jinja")
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return jinja2.FileSystemBytecodeCache(str(directory))
