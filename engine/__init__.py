"""privbench engine: load specs, resolve calibrations, run seeded trials, store results, render reports."""
from __future__ import annotations

__version__ = "0.1.0"
