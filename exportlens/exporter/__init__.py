"""The engine: spec -> export -> report, in four packages split by what they may import.

- ``core``: the report, diagnostic codes, options: the standard library only.
- ``static``: discovery (libcst), specs, shapes, plans, import closures, edits and
  scaffolds: no torch. The language server imports ``core`` and ``static`` only.
- ``workers``: the process boundary: the pool (no torch) and the warm worker that
  imports torch and runs ``runtime`` in a fresh child per job.
- ``runtime``: the torch side: build inputs, export, read torch's failures into
  findings and fixes, summarize a success. Imported only inside workers.
"""
