"""Finding modules: which files a scan reads, their outlines, nn.Module classes and their
bases across files, import closures (ast; no torch, no spec reading)."""
