"""fastsvm.heap: free pages in the middle of the C heap go back to the system."""
import sys

import numpy as np
import pytest

from fastsvm.heap import release_free_memory


def _rss_bytes():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc_trim")
def test_freed_blocks_amid_live_ones_are_returned():
    # 64 KB blocks (below glibc's mmap threshold: they come from the heap), every other one freed:
    # the holes cannot be trimmed from the heap's top, only given back page by page
    blocks = [np.ones(8192) for _ in range(2000)]          # 128 MB
    del blocks[::2]
    before = _rss_bytes()
    release_free_memory()
    assert before - _rss_bytes() > 32 << 20
    assert all(b[0] == 1.0 and b[-1] == 1.0 for b in blocks)   # the live blocks are intact
