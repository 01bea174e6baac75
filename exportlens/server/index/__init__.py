"""The server's module index (no torch): which nn.Module classes each file defines
(``module_index``), the workspace scan in a subprocess (``scanner``), rescans of open
files as they change (``rescans``), and the workspace folders each scan belongs to
(``folders``)."""
