"""The engine: spec -> export -> report.

Modules here are split by what may import torch: ``discover``, ``spec``,
``report``, ``codes`` and ``edits`` never do (the LSP server imports them);
``run``, ``explain``, ``locate``, ``shapes`` and ``fixes`` do, and are imported only
inside workers and the CLI.
"""
