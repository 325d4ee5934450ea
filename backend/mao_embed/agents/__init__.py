"""The agents' side of the backend: the HTTP API (``http_api``), the MCP endpoint
(``mcp_server``), the model loop behind the panel's chat (``chat_loop``), the tool list agents
see (``tools``) and the untrusted marking of every answer (``untrusted``)."""
