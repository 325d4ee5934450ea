"""Mao Embed backend: relays page tools between agents and the Python running in the page.

One module per concept:

- ``config``: ``ServerConfig`` and where secrets and state live
- ``tokens``: signed SDK tokens (SPEC B5)
- ``origins``: the page-origin allowlist
- ``relay``: sessions, request/response correlation, dedup, timeouts, resume (SPEC B2, W2-W4)
- ``sdk_socket``: the ``/ws/sdk`` endpoint (handshake, framing, heartbeat)
- ``sdk_files``: SDK assets under ``/sdk/`` (SPEC E3)
- ``tools``: the page tools as agents see them (SPEC B1)
- ``agent_api``: the agent HTTP API; ``mcp_server``: the MCP endpoint (SPEC B4)
- ``agent_loop``: the panel chat's agent loop on an OpenAI-compatible model (SPEC B3)
- ``audit``: the SQLite audit log (SPEC P6)
- ``app``: routes; ``server``: uvicorn, ``start_in_thread``; ``cli``: ``mao-embed``
- ``assets``, ``demo``, ``testing``, ``pytest_plugin``: asset build, scripted demo, test helpers
"""
