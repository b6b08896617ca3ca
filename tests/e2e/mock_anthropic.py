#!/usr/bin/env python3
"""The scripted mock of the Anthropic Messages API, under its older name:
runs ``tests/support/mock_models.py --api anthropic`` with these arguments
(``--script``, ``--record``, ``--port-file``, ``--exit-on-stdin-eof``,
``--verbose``).  The script format and the record are described there.
"""

import os
import runpy
import sys

MOCK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support", "mock_models.py")

if __name__ == "__main__":
    sys.argv[1:1] = ["--api", "anthropic"]
    runpy.run_path(MOCK, run_name="__main__")
