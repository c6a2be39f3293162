"""Generate accepts only what imports and means what it says: defaults (Note [Defaults that mean what they
say] in codegen/native.py) and dispatch targets (top-level functions, read from the module's source). Each
refusal here was accepted before, and failed at import or at call time (or called a non-function)."""

from __future__ import annotations

import math
import textwrap
from pathlib import Path

import pytest

from codegen.api_python import python_default
from codegen.errors import LoadError
from codegen.native import load_native_functions

ROOT = Path(__file__).resolve().parents[2]
NF = "native_functions.yaml"
KERNEL = "runtime.kernels.views.clone"


def load(text: str, root: Path = ROOT) -> list:
    return load_native_functions(root / NF, root=root, text=textwrap.dedent(text), file=NF)


def refusal(text: str, root: Path = ROOT) -> str:
    with pytest.raises(LoadError) as info:
        load(text, root)
    assert len(info.value.diagnostics) == 1, info.value.diagnostics
    return str(info.value.diagnostics[0])


def entry(args: str) -> str:
    return f'- func: "f(Tensor self, {args}) -> Tensor"\n  dispatch:\n    CPU: {KERNEL}\n'


@pytest.mark.parametrize("args, value", [
    ("float s=inf", math.inf), ("float s=-inf", -math.inf), ("float s=1e400", math.inf),
    ("float s=-1e400", -math.inf), ("Scalar s=inf", math.inf), ("float s=1e-400", 0.0),
    ("int s=9223372036854775807", 2**63 - 1), ("int s=-9223372036854775808", -(2**63)),
])
def test_numeric_defaults_render_as_the_number(args: str, value: float) -> None:
    """`inf` rendered as a bare name raised NameError when `generated` was imported."""
    arg = load(entry(args))[0].func.arguments.flat_all[1]
    rendered = python_default(arg)
    assert rendered is not None and eval(rendered, {"__builtins__": {"float": float}}) == value


def test_symbols_in_list_defaults_render_as_their_values() -> None:
    arg = load(entry("int[] s=[Mean, 2]"))[0].func.arguments.flat_all[1]
    assert python_default(arg) == "('mean', 2)"


def test_nan_default_renders_as_nan() -> None:
    arg = load(entry("float s=nan"))[0].func.arguments.flat_all[1]
    assert python_default(arg) == "float('nan')"
    assert math.isnan(eval("float('nan')"))


@pytest.mark.parametrize("args, message", [
    ("int s=9223372036854775808", "default 9223372036854775808 of argument 's' does not fit in int64"),
    ("int s=-9223372036854775809", "default -9223372036854775809 of argument 's' does not fit in int64"),
    ("int[] s=[1, 99999999999999999999]", "default 99999999999999999999 of argument 's' does not fit in int64"),
    ('Scalar s=\\"x\\"', "argument 's' of type Scalar has a string default; only str arguments may"),
    ('int s=\\"1\\"', "argument 's' of type int has a string default"),
    ('float? s=\\"1\\"', "argument 's' of type float? has a string default"),
    ('int[] s=[\\"1\\"]', "argument 's' of type int[] has a string default"),
    ("float s=Infinity", "default 'Infinity' of argument 's' is not a number, a string or one of the known symbols"),
    ("int s=foo", "default 'foo' of argument 's' is not a number"),
])
def test_defaults_that_cannot_mean_what_they_say_are_refused(args: str, message: str) -> None:
    assert refusal(entry(args)).startswith(f"{NF}:1: {message}")


@pytest.mark.parametrize("args", ['str s=\\"x\\"', 'str? s=\\"x\\"', 'str[] s=[\\"a\\", \\"b\\"]', "str? s=None",
                                  "int reduction=Mean", "MemoryFormat? m=contiguous_format"])
def test_defaults_of_their_own_type_are_accepted(args: str) -> None:
    assert load(entry(args))[0].name == "f"


# -- dispatch targets -----------------------------------------------------------------------------------
MODULE = '''\
import functools
from os import path as aliased
TABLE = {"a": 1}
VALUE = 3


def plain(x):
    return x


class Klass:
    pass


@functools.lru_cache
def decorated(x):
    return x


async def coroutine(x):
    return x


def reassigned(x):
    return x


reassigned = TABLE


def through_global(x):
    return x


def rebinder():
    global through_global
    through_global = None


if VALUE:
    def conditional(x):
        return x
'''


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pk").mkdir()
    (tmp_path / "pk" / "__init__.py").write_text("")
    (tmp_path / "pk" / "k.py").write_text(MODULE)
    return tmp_path


def dispatch(target: str) -> str:
    return f"- func: f(Tensor self) -> Tensor\n  dispatch:\n    CPU: pk.k.{target}\n"


@pytest.mark.parametrize("target, where", [
    ("TABLE", "pk/k.py:3 assigns it"), ("VALUE", "pk/k.py:4 assigns it"),
    ("aliased", "pk/k.py:2 binds it with an import"),
    ("functools", "pk/k.py:1 binds it with an import"), ("Klass", "pk/k.py:11 makes it a class"),
    ("decorated", "pk/k.py:16 decorates it"), ("coroutine", "pk/k.py:20 makes it an async def"),
    ("reassigned", "pk/k.py:28 assigns it"), ("through_global", "pk/k.py:36 rebinds it through global"),
    ("conditional", "pk/k.py:41 defines it inside a block"),
])
def test_dispatch_to_anything_but_a_plain_top_level_function_is_refused(project: Path, target: str,
                                                                         where: str) -> None:
    """A dict, a click command (decorated), a class, an alias ... were accepted and failed when called."""
    assert refusal(dispatch(target), project) == (
        f"{NF}:2: kernel 'pk.k.{target}' is not a plain top-level function: {where}")


def test_dispatch_to_a_plain_function_is_accepted(project: Path) -> None:
    assert load(dispatch("plain"), project)[0].dispatch == {"CPU": "pk.k.plain"}


def test_a_star_import_may_rebind_any_function(project: Path) -> None:
    module = project / "pk" / "k.py"
    module.write_text(module.read_text() + "from os.path import *\n")
    assert refusal(dispatch("plain"), project) == (
        f"{NF}:2: kernel 'pk.k.plain' is not a plain top-level function: pk/k.py:43 may rebind it with a star import")


@pytest.mark.parametrize("target, message", [
    ("codegen.cli.main", "is not a plain top-level function: codegen/cli.py"),
    ("_cpu.add_Tensor", "must start with a package of the project"),
    ("generated._ops.add", "must start with a package of the project"),
    ("runtime.kernels.views.cl\u0131one", "of ASCII identifiers"),
    ("runtime.kernels.class.clone", "of ASCII identifiers"),
])
def test_dispatch_paths_are_checked(target: str, message: str) -> None:
    text = f"- func: f(Tensor self) -> Tensor\n  dispatch:\n    CPU: {target}\n"
    assert message in refusal(text)
