"""The user's side of a task: the state machine and confirmations, authorization levels,
risk of an action, sensitive fields, and the panel's texts."""
