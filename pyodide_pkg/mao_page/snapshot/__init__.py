"""page_inspect: which elements an agent sees, their text form, and the snapshots that
keep their refs."""
