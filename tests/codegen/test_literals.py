"""The one door from YAML text to generated code (Note [Text into code only through one door] in
codegen/literals.py): each function gives text that cannot end early in its target, for any input."""

from __future__ import annotations

import ast
import io
import math
import tokenize

import pytest
from hypothesis import given
from hypothesis import strategies as st

from codegen.errors import OpgenError
from codegen.literals import comment_text, cxx_number, python_number, python_str, python_value

# Every character that ends a line somewhere (Python, C++, str.splitlines, editors), NUL, quotes, comment
# enders, the C++ line splice and trigraph, a bidi override.
NASTY = ["\n", "\r", "\r\n", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029", "\x00",
         '"""', "'''", '"', "'", "\\", "*/", "/*", "??/", "\u202e", "#define X 1", "\ud800", "\U0001f600"]


def python_tokens(source: str) -> list[tokenize.TokenInfo]:
    return list(tokenize.generate_tokens(io.StringIO(source).readline))


@pytest.mark.parametrize("quote", [None, '"', "'"])
@pytest.mark.parametrize("text", NASTY + ["plain", "it's", 'say "x"', "both ' and \""])
def test_python_str_is_one_token_that_means_the_text(text: str, quote: str | None) -> None:
    literal = python_str(text, quote)
    assert all(" " <= c <= "~" for c in literal)  # printable ASCII: nothing can end a line or a file
    assert ast.literal_eval(literal) == text
    tokens = [t for t in python_tokens(f"x = {literal}\n") if t.type not in (tokenize.NEWLINE, tokenize.ENDMARKER)]
    assert [t.type for t in tokens] == [tokenize.NAME, tokenize.OP, tokenize.STRING]


def test_python_str_matches_repr_on_printable_ascii() -> None:
    """So generated code for ordinary YAML is what it was with repr()."""
    for text in ["add.Tensor", "it's", 'a "b"', "a 'b' \"c\"", "x\\y"]:
        assert python_str(text) == repr(text)


@given(st.text())
def test_python_str_round_trips_any_text(text: str) -> None:
    literal = python_str(text)
    assert all(" " <= c <= "~" for c in literal)
    assert ast.literal_eval(literal) == text


@pytest.mark.parametrize("value, literal", [
    (float("inf"), "float('inf')"), (float("-inf"), "float('-inf')"), (1e400, "float('inf')"),
    (1.5, "1.5"), (-0.0, "-0.0"), (2**70, str(2**70)), (1e-300, "1e-300"),
])
def test_python_number_means_what_it_says(value: float, literal: str) -> None:
    assert python_number(value) == literal
    assert eval(literal, {"__builtins__": {"float": float}}) == value


def test_python_number_nan() -> None:
    assert math.isnan(eval(python_number(float("nan")), {"__builtins__": {"float": float}}))


def test_python_value_of_defaults() -> None:
    assert python_value([1, float("inf"), "a\nb", None, True]) == "(1, float('inf'), 'a\\nb', None, True)"
    assert python_value(["x"]) == "('x',)"
    assert python_value([]) == "()"


def test_cxx_number_refuses_what_cxx_cannot_say() -> None:
    assert cxx_number(True) == "true"
    assert cxx_number(3) == "3"
    assert cxx_number(0.5) == "0.5"
    for bad in (float("inf"), float("nan"), 2**63, -(2**63) - 1):
        with pytest.raises(OpgenError):
            cxx_number(bad)


def _comment_is_inert(text: str) -> None:
    line = comment_text(text)
    assert all(" " <= c <= "~" for c in line), line
    assert "\\" not in line and "*/" not in line and "/*" not in line and "??" not in line
    # Python: the comment is one COMMENT token and the next line is still code
    tokens = python_tokens(f"# {line}\nx = 1\n")
    assert [t.type for t in tokens][:2] == [tokenize.COMMENT, tokenize.NL]
    assert [t.string for t in tokens if t.type == tokenize.NAME] == ["x"]


@pytest.mark.parametrize("text", NASTY)
def test_comment_text_cannot_end_a_comment(text: str) -> None:
    _comment_is_inert(f"before {text} after")
    _comment_is_inert(text)


@given(st.text())
def test_comment_text_of_any_text_is_one_inert_line(text: str) -> None:
    _comment_is_inert(text)


@pytest.mark.parametrize("text", NASTY + ["caf\u00e9 \u00d7 2", "plain doc"])
def test_docstrings_enter_generated_code_through_the_same_door(text: str) -> None:
    """A docstring (an entry's `doc:`, its schemas) is a literal of `python_str`: printable ASCII only."""
    from codegen.docstrings import literal

    assert literal(text) == python_str(text)
    assert all(" " <= c <= "~" for c in literal(text))
    assert ast.literal_eval(literal(text)) == text
