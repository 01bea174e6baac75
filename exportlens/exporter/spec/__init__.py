"""Reading export specs: pyproject tables with their positions, `example_inputs()`, variants,
shapes, suppressions and the plan of what to export (tomlkit, libcst; no torch)."""
