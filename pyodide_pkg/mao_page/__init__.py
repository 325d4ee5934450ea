"""Mao Embed page runtime: the Python that runs inside the business page (Pyodide).

Only ``mao_page.bridge`` touches ``js`` / ``pyodide.ffi``; ``mao_page.protocol`` is shared
with the backend and imports nothing browser-specific.
"""

__version__ = "0.1.0"
