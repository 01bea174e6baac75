"""Plain data every layer shares: the report, diagnostic codes, options. Standard library only."""
