"""burn-errors: unsupported-dtype and unsupported-mode panics in burn, as error records."""

__version__ = "0.1.0"
