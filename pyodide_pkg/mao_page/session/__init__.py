"""A call's way from the backend's socket to the tool that runs it: the WebSocket client,
the once-only dispatcher and the tool router."""
