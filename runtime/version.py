"""opgen's version, as its installed distribution records it (`G.__version__`, `opgen --version`)."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("opgen")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0+unknown"
