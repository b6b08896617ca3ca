#!/usr/bin/env python3
"""The scripted mocks of the OpenAI Responses API and the Gemini API, under
their older name: runs ``tests/support/mock_models.py`` (which also serves
the Anthropic API) with these arguments (``--api openai|gemini`` ...).  The
script format and the record are described there.
"""

import os
import runpy

MOCK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support", "mock_models.py")

if __name__ == "__main__":
    runpy.run_path(MOCK, run_name="__main__")
