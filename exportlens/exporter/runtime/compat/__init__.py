"""Every place exportlens relies on torch beyond its documented API, in one package.

``versions``: which torch is installed and the range exportlens supports (below it, a
module is refused with EL506, never exported with findings that may be on wrong lines).
``internals``: private modules, attributes, patched functions and exception types.
``messages``: the texts of torch's errors that exportlens reads, as tables of the forms
each torch writes.

Each entry says the torch versions it was checked on and what exportlens does where it
is missing: a finding with less in it (no line, no fix), never a wrong line or EL901.
No other module names a private torch attribute or matches torch's text
(tests/test_torch_compat.py checks).
"""
