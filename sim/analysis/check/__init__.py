"""The model checker (`sim check`): every fault schedule within a bound (`enumerator`), searched
breadth first over the engine's states (`search`), states merged by their canonical form
(`canon`), the check's units of work on one machine or a cluster (`check`, `cluster`)."""
