"""The named scenarios (TOML files), installed as package data."""
