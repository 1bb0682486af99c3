"""The analyses: what is asked of many runs of the model (the sweep of the 864 combinations,
the profiles' sweep, random fault schedules drawn by `explore`, the worker pool they share),
and the model checker in `sim.analysis.check`."""
