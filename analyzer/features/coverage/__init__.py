"""The dtype coverage matrix per backend and operation: `model` (statuses, sites, dispatches,
cells, the matrix), `matches` (built from records alone), `callgraph` (calls and macro invocations
by name, from code facts) and `operations` (built from an extraction, rows by backend operation)."""
