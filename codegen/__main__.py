"""`python -m codegen ...` is the `opgen` command."""

from codegen.cli import main

main()
