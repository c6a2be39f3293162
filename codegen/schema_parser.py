"""The scanner of PyTorch's function-schema language: text -> the frozen dataclasses of codegen/model.py.

The public entry points are `parse_schema`, `parse_operator_name`, `parse_type`, `parse_annotation`,
`parse_argument`, `parse_return`, `parse_arguments`, `default_value` and `clear_caches`. This module imports
codegen/model.py; the model imports nothing of it (no import circle).

A small hand-written scanner (no regular expressions). See Note [Parse caches] in codegen/model.py.
"""

from __future__ import annotations

import os

from codegen.errors import did_you_mean
from codegen.model import (
    BASE_TYPE_NAMES,
    Annotation,
    Argument,
    Arguments,
    BaseType,
    FunctionSchema,
    ListType,
    OperatorName,
    OptionalType,
    Return,
    Symbol,
    Type,
    annotated,
    bad_name_char,
    is_name,
    schema_error,
)

# `__iXX__` dunders that are in-place forms of `__XX__` (Python's augmented assignments).
_AUGMENTED = frozenset(
    {"add", "sub", "mul", "matmul", "truediv", "floordiv", "div", "mod", "pow", "lshift", "rshift", "and",
     "xor", "or"}
)  # fmt: skip
_DIGITS = frozenset("0123456789")
_ESCAPES = {"\\": "\\", '"': '"', "'": "'", "n": "\n", "t": "\t", "r": "\r", "0": "\0"}
_KEYWORD_VALUES: dict[str, object] = {"None": None, "True": True, "False": False}
_FLOAT_WORDS = {"inf": float("inf"), "-inf": float("-inf"), "nan": float("nan")}


def parse_operator_name(s: str) -> OperatorName:
    return _scan_operator_name(s, 0, len(s))


def parse_type(s: str) -> Type:
    t = _TYPE_CACHE.get(s)
    if t is None:
        t = _scan_type(s, 0, len(s), -1, -1, False)
        _TYPE_CACHE[s] = t
    return t


def parse_annotation(s: str) -> Annotation:
    return _scan_annotation(s, 0, len(s))


def parse_argument(s: str) -> Argument:
    arg, end = _scan_argument(s, 0)
    if end != len(s):
        raise schema_error(s, end, f"unexpected text after argument '{arg.name}'")
    return arg


def parse_return(s: str) -> Return:
    ret, end = _scan_return(s, 0)
    if end != len(s):
        raise schema_error(s, end, "unexpected text after the return")
    return ret


def parse_arguments(s: str) -> Arguments:
    return _scan_arguments(s, 0, True)[0]


def parse_schema(s: str) -> FunctionSchema:
    """Parse `s`; the result always prints back as `s` (checked, as torchgen does)."""
    schema = _scan_schema(s)
    text = str(schema)
    if text != s:  # a safety net: the scanner should never get here
        raise schema_error(
            s,
            len(os.path.commonprefix([text, s])),
            f"schema is not in canonical form (it prints as {text!r})",
        )
    return schema


def default_value(arg: Argument) -> object:
    """`arg`'s default as a Python value: None, bool, int, float, str, `Symbol` or a list of these."""
    if arg.default is None:
        return None
    return _default_value(arg.default)


# The scanner. Each `_scan_*` reads from `s` at an index and raises SchemaParseError on `s` itself, so
# columns are right whether `s` is a whole schema or a fragment given to a `parse()`.

_TYPE_CACHE: dict[str, Type] = {}
_ANNOTATION_CACHE: dict[str, Annotation] = {}
_DEFAULT_CACHE: set[str] = set()
_RETURNS_CACHE: dict[str, tuple[Return, ...]] = {}


def clear_caches() -> None:
    """Forget every cached parse (see Note [Parse caches])."""
    _TYPE_CACHE.clear()
    _ANNOTATION_CACHE.clear()
    _DEFAULT_CACHE.clear()
    _RETURNS_CACHE.clear()


def _scan_operator_name(s: str, lo: int, hi: int) -> OperatorName:
    text = s[lo:hi]
    full, dot, overload = text.partition(".")
    if not is_name(full):
        i = bad_name_char(full)
        if i == len(full):
            raise schema_error(s, lo + i, "expected an operator name")
        raise schema_error(s, lo + i, f"unexpected character '{full[i]}' in operator name")
    if dot and not is_name(overload):
        i = bad_name_char(overload)
        pos = lo + len(full) + 1 + i
        if i == len(overload) and i == 0:
            raise schema_error(s, pos, "expected an overload name after '.'")
        raise schema_error(s, pos, f"unexpected character '{s[pos]}' in overload name")
    if len(full) > 4 and full.startswith("__") and full.endswith("__"):
        inplace = full[2] == "i" and full[3:-2] in _AUGMENTED
        return OperatorName(full, inplace, True, overload)
    if full.endswith("_") and len(full) > 1:
        return OperatorName(full[:-1], True, False, overload)
    return OperatorName(full, False, False, overload)


def _scan_type(s: str, lo: int, hi: int, ann_lo: int, ann_hi: int, in_argument: bool) -> Type:
    """Parse `s[lo:hi]` as a type; an alias annotation `s[ann_lo:ann_hi]` (parentheses included), if any,
    must directly follow the base name and is skipped."""
    k = lo
    while k < hi and (s[k].isalnum() or s[k] == "_") and s[k].isascii():
        k += 1
    if k == lo:
        raise schema_error(s, lo, "expected a type")
    name = s[lo:k]
    if name not in BASE_TYPE_NAMES:
        raise schema_error(s, lo, f"unknown type '{name}'{did_you_mean(name, BASE_TYPE_NAMES)}")
    if ann_lo >= 0:
        if k != ann_lo:
            raise schema_error(s, k, f"unexpected character '{s[k]}' before the alias annotation")
        k = ann_hi
    t: Type = BaseType(name)
    while k < hi:
        c = s[k]
        if c == "?":
            t = OptionalType(t)
            k += 1
        elif c == "[":
            close = s.find("]", k, hi)
            size = s[k + 1 : close] if close >= 0 else ""
            if size and not (size.isdigit() and size.isascii() and str(int(size)) == size):
                raise schema_error(s, k + 1, f"invalid list size '{size}'")
            if close < 0:
                raise schema_error(s, hi, "expected ']' to close the list type")
            t = ListType(t, int(size) if size else None)
            k = close + 1
        elif in_argument and c in ",)":
            raise schema_error(s, k, f"expected an argument name after type '{s[lo:k]}'")
        else:
            raise schema_error(s, k, f"unexpected character '{c}' in type")
    return t


def _scan_alias_set(s: str, k: int, hi: int) -> tuple[tuple[str, ...], int]:
    names = []
    while True:
        if k < hi and s[k] == "*":
            end = k + 1
        else:
            end = k
            while end < hi and (s[end].isalnum() or s[end] == "_") and s[end].isascii():
                end += 1
            if end == k or s[k].isdigit():
                raise schema_error(s, k, "expected an alias name")
        names.append(s[k:end])
        if end < hi and s[end] == "|":
            k = end + 1
            continue
        return tuple(names), end


def _scan_annotation(s: str, lo: int, hi: int) -> Annotation:
    """Parse the annotation text `s[lo:hi]` (without its parentheses)."""
    before, k = _scan_alias_set(s, lo, hi)
    is_write = k < hi and s[k] == "!"
    if is_write:
        k += 1
    after: tuple[str, ...] = ()
    if s.startswith(" -> ", k) and k + 4 <= hi:
        after, k = _scan_alias_set(s, k + 4, hi)
    if k != hi:
        raise schema_error(s, k, "expected ')' to close the alias annotation")
    return Annotation(before, is_write, after)


def _annotation_at(s: str, par: int) -> tuple[Annotation, int]:
    """The annotation whose '(' is at `par`, and the index of its ')'."""
    rp = s.find(")", par)
    if rp < 0:
        raise schema_error(s, len(s), "expected ')' to close the alias annotation")
    text = s[par + 1 : rp]
    ann = _ANNOTATION_CACHE.get(text)
    if ann is None:
        ann = _scan_annotation(s, par + 1, rp)
        _ANNOTATION_CACHE[text] = ann
    return ann, rp


def _scan_argument(s: str, p: int) -> tuple[Argument, int]:
    """Parse one argument starting at `p`; return it and the index just after it."""
    n = len(s)
    sp = s.find(" ", p)
    if sp < 0:
        sp = n
    par = s.find("(", p, sp)
    ann = None
    if par >= 0:
        ann, rp = _annotation_at(s, par)
        sp = s.find(" ", rp)
        if sp < 0:
            sp = n
        type_text = s[p:par] + "(" + s[rp + 1 : sp]  # "(" marks where the annotation was
    else:
        rp = -1
        type_text = s[p:sp]
    t = _TYPE_CACHE.get(type_text)
    if t is None:
        t = _scan_type(s, p, sp, par, rp + 1, True)
        _TYPE_CACHE[type_text] = t
    if ann is not None and t.base_name() != "Tensor":
        raise schema_error(s, par, f"alias annotation on non-tensor type '{t}'")
    if sp >= n:
        raise schema_error(s, n, f"expected an argument name after type '{s[p:n]}'")
    q = sp + 1
    comma = s.find(",", q)
    if comma < 0:
        comma = n
    close = s.find(")", q, comma)
    if close < 0:
        close = comma
    eq = s.find("=", q, close)
    end = close if eq < 0 else eq
    name = s[q:end]
    if not (name.isidentifier() and name.isascii()):
        i = bad_name_char(name)
        if i == 0:
            raise schema_error(s, q, "expected an argument name")
        raise schema_error(s, q + i, f"expected ',' or ')' after argument '{name[:i]}'")
    if eq < 0:
        return Argument(name, t, None, ann), end
    d = eq + 1
    c = s[d] if d < n else ""
    if c == '"' or c == "'" or c == "[":
        end = _skip_literal(s, d)
    else:
        end = close
    default = s[d:end]
    if default not in _DEFAULT_CACHE:
        _check_default(s, d, end)
        _DEFAULT_CACHE.add(default)
    return Argument(name, t, default, ann), end


def _skip_literal(s: str, d: int) -> int:
    """Index just after the string or list literal starting at `d`."""
    c = s[d]
    if c == "[":
        k = d + 1
        while k < len(s) and s[k] != "]":
            k = _skip_literal(s, k) if s[k] in "\"'" else k + 1
        if k >= len(s):
            raise schema_error(s, len(s), "expected ']' to close the list default")
        return k + 1
    k = d + 1
    while k < len(s):
        ch = s[k]
        if ch == c:
            return k + 1
        k += 2 if ch == "\\" else 1
    raise schema_error(s, d, "unterminated string in default value")


def _check_default(s: str, lo: int, hi: int) -> None:
    """Check that `s[lo:hi]` is a default literal: a scalar or a list of scalars."""
    if lo == hi:
        raise schema_error(s, lo, "expected a default value after '='")
    if s[lo] != "[":
        _check_scalar(s, lo, hi)
        return
    k = lo + 1
    last = hi - 1  # the ']'
    while k < last:
        end = _skip_literal(s, k) if s[k] in "\"'" else s.find(",", k, last)
        if end < 0:
            end = last
        _check_scalar(s, k, end)
        if end < last:
            if s[end] != ",":
                raise schema_error(s, end, "expected ',' or ']' in the list default")
            k = end + 1
            if s.startswith(" ", k):
                k += 1
            if k == last:
                raise schema_error(s, k, "expected a list element after ','")
        else:
            k = end


def _check_scalar(s: str, lo: int, hi: int) -> None:
    if lo == hi:
        raise schema_error(s, lo, "expected a list element")
    text = s[lo:hi]
    c = text[0]
    if c == '"' or c == "'":
        for i, ch in enumerate(text):
            if not ch.isprintable():  # a raw line break, NUL, U+2028 ...: write it as an escape ('\\n')
                raise schema_error(s, lo + i, f"raw control character U+{ord(ch):04X} in a string default; "
                                       "write an escape such as \\n")
        _unescape(text, s, lo)
        return
    if is_name(text) or text in _FLOAT_WORDS:
        return
    try:
        float(text)
    except ValueError:
        raise schema_error(s, lo, f"invalid default value '{text}'") from None
    if "_" in text or not text.isascii() or text.strip() != text:
        raise schema_error(s, lo, f"invalid default value '{text}'")


def _unescape(text: str, s: str = "", lo: int = 0) -> str:
    """The value of a quoted string literal (quotes included in `text`)."""
    body = text[1:-1]
    if "\\" not in body:
        return body
    out = []
    k = 0
    while k < len(body):
        ch = body[k]
        if ch == "\\":
            esc = _ESCAPES.get(body[k + 1 : k + 2])
            if esc is None:
                raise schema_error(s or text, lo + 1 + k, f"unknown escape sequence '{body[k : k + 2]}'")
            out.append(esc)
            k += 2
        else:
            out.append(ch)
            k += 1
    return "".join(out)


def _default_value(text: str) -> object:
    if text in _KEYWORD_VALUES:
        return _KEYWORD_VALUES[text]
    c = text[0]
    if c == "[":
        inner = text[1:-1].strip()
        if not inner:
            return []
        return [_default_value(part.strip()) for part in _split_list(inner)]
    if c == '"' or c == "'":
        return _unescape(text)
    if text in _FLOAT_WORDS:
        return _FLOAT_WORDS[text]
    if is_name(text):
        return Symbol(text)
    try:
        return int(text)
    except ValueError:
        return float(text)


def _split_list(inner: str) -> list[str]:
    parts = []
    k = 0
    start = 0
    while k < len(inner):
        if inner[k] in "\"'":
            k = _skip_literal(inner, k)
            continue
        if inner[k] == ",":
            parts.append(inner[start:k])
            start = k + 1
        k += 1
    parts.append(inner[start:])
    return parts


def _scan_arguments(s: str, p: int, standalone: bool) -> tuple[Arguments, int]:
    """Parse an argument list from `p` up to its ')' (or the end of `s` when `standalone`)."""
    n = len(s)
    positional: list[Argument] = []
    kwarg_only: list[Argument] = []
    out: list[Argument] = []
    acc = positional
    names: set[str] = set()
    after_default = None
    if (p == n) if standalone else s.startswith(")", p):
        return Arguments((), (), ()), p
    while True:
        if p < n and s[p] == "*":
            if acc is not positional:
                raise schema_error(s, p, "'*' may appear only once")
            acc = kwarg_only
            end = p + 1
            if end >= n or s[end] != ",":
                raise schema_error(s, end, "expected a keyword-only argument after '*'")
        else:
            arg, end = _scan_argument(s, p)
            name = arg.name
            ann = arg.annotation
            if name in names:
                raise schema_error(s, p + len(annotated(arg.type, ann)) + 1, f"duplicate argument name '{name}'")
            names.add(name)
            if acc is positional:
                if arg.default is not None:
                    after_default = name
                elif after_default is not None:
                    message = f"positional argument '{name}' needs a default: it follows '{after_default}'"
                    raise schema_error(s, p, message)
            elif ann is not None and ann.is_write:
                if arg.default is not None:
                    eq = p + len(annotated(arg.type, ann)) + 1 + len(name)
                    raise schema_error(s, eq, f"out argument '{name}' cannot have a default")
                acc = out
            elif acc is out:
                raise schema_error(s, p, f"keyword-only argument '{name}' follows the out arguments")
            acc.append(arg)
        if end < n and s[end] == ",":
            if not s.startswith(" ", end + 1):
                raise schema_error(s, end + 1, "expected a space after ','")
            p = end + 2
            continue
        if standalone:
            if end == n:
                break
            raise schema_error(s, end, "expected ', ' between arguments")
        if end < n and s[end] == ")":
            break
        if end >= n:
            raise schema_error(s, end, "expected ')' to close the argument list")
        raise schema_error(s, end, "expected ',' or ')' after the argument")
    return Arguments(tuple(positional), tuple(kwarg_only), tuple(out)), end


def _scan_return(s: str, p: int) -> tuple[Return, int]:
    """Parse one return from `p`; return it and the index just after it."""
    n = len(s)
    k = p
    while k < n and (s[k].isalnum() or s[k] == "_") and s[k].isascii():
        k += 1
    ann = None
    par = -1
    rp = -1
    if k < n and s[k] == "(":
        par = k
        ann, rp = _annotation_at(s, par)
        k = rp + 1
    while k < n and s[k] not in " ,)":
        k += 1
    t = _scan_type(s, p, k, par, rp + 1, False)
    if ann is not None and t.base_name() != "Tensor":
        raise schema_error(s, par, f"alias annotation on non-tensor type '{t}'")
    if k < n and s[k] == " ":
        q = k + 1
        end = q
        while end < n and (s[end].isalnum() or s[end] == "_") and s[end].isascii():
            end += 1
        if end == q or s[q].isdigit():
            raise schema_error(s, q, "expected a return name")
        return Return(s[q:end], t, ann), end
    return Return(None, t, ann), k


def _scan_returns(s: str, p: int) -> tuple[Return, ...]:
    """Parse the returns, which run from `p` to the end of `s`."""
    n = len(s)
    if p >= n:
        raise schema_error(s, p, "expected a return type")
    if s[p] != "(":
        ret, end = _scan_return(s, p)
        if end != n:
            raise schema_error(s, end, "unexpected text after the returns")
        return (ret,)
    if s.startswith(")", p + 1):
        if p + 2 != n:
            raise schema_error(s, p + 2, "unexpected text after the returns")
        return ()
    returns = []
    k = p + 1
    while True:
        ret, end = _scan_return(s, k)
        returns.append(ret)
        if end >= n:
            raise schema_error(s, end, "expected ')' to close the return list")
        if s[end] == ")":
            break
        if s[end] != ",":
            raise schema_error(s, end, "expected ',' or ')' after the return")
        if not s.startswith(" ", end + 1):
            raise schema_error(s, end + 1, "expected a space after ','")
        k = end + 2
    if end + 1 != n:
        raise schema_error(s, end + 1, "unexpected text after the returns")
    if len(returns) == 1:
        raise schema_error(s, p, "a single return is written without parentheses")
    return tuple(returns)


def _scan_schema(s: str) -> FunctionSchema:
    lp = s.find("(")
    name = _scan_operator_name(s, 0, len(s) if lp < 0 else lp)
    if lp < 0:
        raise schema_error(s, len(s), "expected '(' to open the argument list")
    arguments, rp = _scan_arguments(s, lp + 1, False)
    if not s.startswith(" -> ", rp + 1):
        raise schema_error(s, rp + 1, "expected ' -> ' after the argument list")
    p = rp + 5
    key = s[p:]
    returns = _RETURNS_CACHE.get(key)
    if returns is None:
        returns = _scan_returns(s, p)
        _RETURNS_CACHE[key] = returns
    return FunctionSchema(name, arguments, returns)
