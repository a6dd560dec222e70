"""The application layer: what a command does, above the pipeline, the features and the sinks
and below the cli, which parses the options and calls it."""
