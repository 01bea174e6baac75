"""The LSP server: documents, the module index, scheduling exports, LSP mapping. No torch here.

User code never runs in this process: exports go to the worker pool
(``exportlens.exporter.workers.pool``), and only report JSON comes back.
"""
