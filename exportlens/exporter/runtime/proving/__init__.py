"""Proving and serving: whether a fix's program, or the module's, gives eager's results at
every corner of the declared box (torch side)."""
