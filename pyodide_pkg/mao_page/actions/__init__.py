"""Page actions (SPEC A1-A6): one module per action family, run by the batch runner.

- ``batch``: the runner (ordered steps, stop rules, step results) and its dispatch table
  keyed by the protocol's action classes;
- ``actionability``: visible / enabled / editable / stable / hit-test decisions;
- ``settle``: settling after a write, the dialog guard; ``changes``: observe and diffs;
- ``click``, ``hover``, ``focus``, ``fill``, ``select``, ``check``, ``scroll``, ``keyboard``,
  ``wait``: the actions.

Like a careful person: act only on what a snapshot showed, only when it can really be acted
on, with the event sequences frameworks listen to, then wait for the page to settle and prove
what changed. Coordinates are computed here, never accepted from the agent.
"""

from .batch import DISPATCH, ActionSpec, Authorizer, BatchRunner, StepListener, allow_everything
from .context import ActingListener, ActionContext, Target
from .settle import SettlePolicy

__all__ = [
    "DISPATCH",
    "ActingListener",
    "ActionContext",
    "ActionSpec",
    "Authorizer",
    "BatchRunner",
    "SettlePolicy",
    "StepListener",
    "Target",
    "allow_everything",
]
