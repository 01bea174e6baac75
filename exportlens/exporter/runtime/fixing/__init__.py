"""Building fixes: spec edits, ``torch._check`` lines and rewrites of the user's code, as text edits (torch side)."""
