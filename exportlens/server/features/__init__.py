"""One module per LSP feature: each turns session state into lsprotocol types."""
