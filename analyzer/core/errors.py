"""Errors the user can act on: the CLI prints them as one line and exits 2."""


class UserError(Exception):
    """Bad input or an environment problem; the message says what is wrong and how to fix it."""


class MissingObject(UserError):
    """A git object the repository lacks (a shallow, partial or snapshot clone): some commands
    have another way that needs fewer objects."""


class CheckFailed(Exception):
    """A check the user asked for did not pass (exit 1), e.g. `diff --fail-on` or `validate`."""
