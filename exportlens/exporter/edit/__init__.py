"""Editing the user's files: the spec's tables and the Python rewrites a fix proposes, each
keeping every byte it does not mean to change (libcst, tomlkit; no torch)."""
