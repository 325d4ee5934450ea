"""The page's way to the DOM. ``browser`` is the only module of the package that imports
``js`` / ``pyodide.ffi``; ``page`` is the interface the rest of the runtime programs
against (a fake implements it on CPython)."""
