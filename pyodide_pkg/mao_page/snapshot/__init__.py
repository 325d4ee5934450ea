"""page_inspect: which elements an agent sees (one element model), their text form, the
snapshots that keep their refs, and how a ref goes stale (``refs``)."""
