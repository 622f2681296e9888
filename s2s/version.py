"""The package's version: one place, read by setup.cfg, the CLI and ledger records."""

__version__ = "0.1.0"
