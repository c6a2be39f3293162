"""opgen's code generator: YAML operator schemas -> the `generated` package."""
