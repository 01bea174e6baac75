"""The torch side: build inputs, export, read torch's failures into findings and fixes, and
describe a success. Imported only inside worker processes."""
