"""The page's side of the backend: the ``/ws/sdk`` WebSocket (``sdk_socket``: origin check,
hello and token, framing, size and rate limits) and its heartbeat (``heartbeat``)."""
