"""A user program as a campaign case (docs/own-programs.md)."""
