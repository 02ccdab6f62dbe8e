"""Conversation utilities, each runnable on its own. ``intent`` (what a turn is), ``followup`` (a
follow-up as a standalone question), ``vague`` (when to ask back), ``schema_answer`` and ``general``
(answers without SQL), ``sentence`` (answers in sentences, checked against the result) and
``answer_rules`` (the answer and its derivation written by rules, without the LLM)."""
