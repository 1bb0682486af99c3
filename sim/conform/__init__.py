"""`sim conform ENGINE`: the worked example on real engines, with real processes and signals,
beside `sim`'s prediction (docs/conform.md). Engines are optional dependencies: nothing here
imports one except the worker process (sim/conform/app.py, run as a script)."""
