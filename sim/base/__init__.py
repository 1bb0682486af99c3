"""The ground every layer stands on: the one writer (`files`), the input bounds (`limits`),
the errors a user is shown (`errors`), the memory bound (`memory`) and the imports that spare
`importlib.metadata` (`lean_import`). A module here imports nothing else of `sim`."""
