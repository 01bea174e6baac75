"""exportlens: tells you, while you edit, whether your nn.Modules export with torch.export."""

__version__ = "0.1.0"
