"""Resident memory of this process for the benchmarks: benchlib.running's rss_and_peak and
reset_peak under their old module name, for the tests that import them from here (a module, not
a script)."""
from benchlib.running import reset_peak, rss_and_peak

__all__ = ["reset_peak", "rss_and_peak"]
