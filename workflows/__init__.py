"""The shipped workflows (TOML files), installed as package data."""
