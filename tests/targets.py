"""The default target, as the tests that call the stages directly read their fixtures under it:
its profile and a run of it."""

from analyzer.profiles import DEFAULT, load
from analyzer.profiles.run import Run

BURN = load(DEFAULT)
RUN = Run(BURN)
