"""kimi-cli sessions (``~/.kimi/sessions/<project>/<session>/context.jsonl``): see
:mod:`.plugin`; :mod:`.discover` finds them, :mod:`.checkpoints` pairs a
``_checkpoint`` record with the message before it, :mod:`.roles` names its tools
and bookkeeping."""
