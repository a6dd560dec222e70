"""burn-errors: unsupported-dtype, unsupported-mode and unsupported-operation panics in burn, as error records."""

__version__ = "0.1.0"
