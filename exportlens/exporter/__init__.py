"""The engine: spec -> export -> report, in six packages split by what they may import,
each only the ones before it (tests/test_boundaries.py; docs/architecture.md has the map).

- ``core``: the report, diagnostic codes, options, settings: the standard library only.
- ``find``: which files a scan reads, nn.Module classes and import closures (ast): no torch.
- ``spec``: pyproject tables, ``example_inputs()``, variants, suppressions and the plan: no torch.
- ``edit``: spec edits and the Python rewrites fixes propose (libcst, tomlkit): no torch.
  The language server imports ``core``, ``find``, ``spec`` and ``edit`` only.
- ``workers``: the process boundary: the pool (no torch) and the warm worker that
  imports torch and runs ``runtime`` in a fresh child per job.
- ``runtime``: the torch side: build inputs, export, read torch's failures into
  findings and fixes, summarize a success, lower. Imported only inside workers.
"""
