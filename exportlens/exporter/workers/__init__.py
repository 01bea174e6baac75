"""The process boundary: the pool (no torch) and the warm worker, which imports torch and
runs ``runtime`` in a fresh child per job."""
