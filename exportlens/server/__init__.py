"""The LSP server: documents, the module index, scheduling exports, LSP mapping. No torch here.

User code never runs in this process: exports go to the worker pool
(``exportlens.exporter.pool``), and only report JSON comes back.
"""
