"""The one door from YAML text to generated source: one function per target.

Note [Text into code only through one door]
Every string that comes from the YAML files and lands in a generated file goes through exactly one of:
  - `python_str`: a Python string literal (every character that is not printable ASCII escaped, so no
    line break, NUL or quote of the text can end it);
  - `python_value`: a Python literal for a schema default (None, bool, int, float, str, list), where
    non-finite floats are spelled `float('inf')`, `float('-inf')`, `float('nan')` (a bare `inf` is a name);
  - `cxx_number`: a C++ numeric literal (finite only);
  - `comment_text`: text for a `#` or `//` comment: printable ASCII only, no backslash (which would splice
    the next line into a `//` comment), no `*/` or `/*`, no `??` (a trigraph in older C++); everything else
    is written as `<U+XXXX>`, so the comment can never end before its line does.
Identifiers (op names, argument names, dtype names, dotted kernel paths) are checked when the YAML is
loaded (ASCII identifiers, codegen/native.py and codegen/names.py) and go into code as tokens. Pointwise
specs and derivative formulas are rendered from their syntax trees (codegen/kernel_spec.py,
codegen/gen_autograd.py), never from their text.
"""

from __future__ import annotations

import math

from codegen.errors import OpgenError

# Symbolic defaults of schemas (`memory_format=contiguous_format`, `reduction=Mean`) and their Python source
# in generated code; a symbol not listed here is refused when the YAML is loaded.
SYMBOL_DEFAULTS: dict[str, str] = {
    "contiguous_format": "'contiguous_format'", "preserve_format": "'preserve_format'",
    "Mean": "'mean'", "Sum": "'sum'", "None": "'none'",
    "long": "_dtypes.int64", "int": "_dtypes.int32", "float": "_dtypes.float32", "double": "_dtypes.float64",
    "bool": "_dtypes.bool_", "half": "_dtypes.float16",
}

_PRINTABLE = frozenset(chr(c) for c in range(0x20, 0x7F))
_PY_ESCAPES = {"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def python_str(text: str, quote: str | None = None) -> str:
    """`text` as a Python string literal that evaluates to `text` exactly: printable ASCII as itself, every
    other character escaped. `quote` is `'` or `"`; by default the one `repr` would choose."""
    if quote is None:
        quote = '"' if "'" in text and '"' not in text else "'"
    out = [quote]
    for ch in text:
        if ch in _PY_ESCAPES:
            out.append(_PY_ESCAPES[ch])
        elif ch == quote:
            out.append("\\" + ch)
        elif ch in _PRINTABLE:
            out.append(ch)
        else:
            code = ord(ch)
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")
    out.append(quote)
    return "".join(out)


def python_number(value: float) -> str:
    """A Python int or float literal; non-finite floats as `float('inf')` etc., which need no import."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"not a number: {value!r}")
    if isinstance(value, float) and not math.isfinite(value):
        return f"float('{value}')"
    return repr(value)


def python_value(value: object) -> str:
    """A Python literal of a default value: None, bool, int, float, str, or a tuple of these."""
    if value is None or isinstance(value, bool):
        return repr(value)
    if isinstance(value, int | float):
        return python_number(value)
    if isinstance(value, str):
        return python_str(str(value))
    if isinstance(value, list | tuple):
        items = [python_value(v) for v in value]
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    raise TypeError(f"no Python literal for {value!r}")


def cxx_number(value: float) -> str:
    """A C++ literal of a finite number or bool (an int too large for int64 is refused)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        if not -(2**63) <= value < 2**63:
            raise OpgenError(f"integer constant {value} does not fit in int64")
        return repr(value)
    if isinstance(value, float) and math.isfinite(value):
        return repr(value)
    raise OpgenError(f"no C++ literal for {value!r}")


def comment_text(text: str) -> str:
    """`text` made safe for one line of a `#` (Python) or `//` (C++) comment: see the Note above."""
    out = []
    for i, ch in enumerate(text):
        prev = text[i - 1] if i else ""
        nxt = text[i + 1] if i + 1 < len(text) else ""
        unsafe = (ch not in _PRINTABLE or ch == "\\" or (ch == "/" and "*" in (prev, nxt))
                  or (ch == "?" and prev == "?"))
        out.append(f"<U+{ord(ch):04X}>" if unsafe else ch)
    return "".join(out)
