"""What the worked example is: its settings (`switches`, the knobs in `knobs/`), what can happen
to it (the fault kinds in `faults/`, a fault `schedule`), the named `cases` and the engines'
`profiles`. The engine runs this model; nothing here imports the engine."""
