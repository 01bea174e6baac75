"""Lowering an exported program for its deployment targets, after its verdict (torch side): docs/targets.md."""
