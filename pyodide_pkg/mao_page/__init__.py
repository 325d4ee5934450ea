"""Mao Embed page runtime: the Python that runs inside the business page (Pyodide).

Only ``mao_page.bridge.browser`` touches ``js`` / ``pyodide.ffi``; ``mao_page.protocol`` is shared
with the backend and imports nothing browser-specific.

The folders follow a call through the page (docs/architecture.md "Module map"): ``session``
takes it off the socket, ``snapshot`` and ``read`` answer the read tools, ``actions`` runs the
action tools, ``supervision`` is the user's say over all of it, ``dom`` is what the runtime
knows about the document, ``bridge`` is the way to the DOM, ``protocol`` the wire format.
"""

__version__ = "0.1.0"
