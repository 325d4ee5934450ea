"""Site tools (SPEC B8): the WebMCP tools the page declares, run for an agent under the user's
authorization (``runner``), with their arguments checked against the tool's schema first
(``schema``)."""
