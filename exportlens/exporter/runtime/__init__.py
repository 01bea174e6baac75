"""The torch side: build inputs, export, read torch's failures into findings and fixes, and
describe a success. The CLI and the server reach it only through worker processes; tests
and benchmarks import it directly."""
