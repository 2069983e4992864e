"""Retrieval evaluation of ``vaultmem recall``: does a change of fusion weights help or hurt?

Data (JSONL, one object per line):

- ``questions.jsonl``: ``{"vault", "query", "answers": [vault-relative paths], "kind"}`` where kind
  is ``srd`` (the 13th Age SRD vault), ``kepano`` (Steph Ango's vault) or ``memory`` (memories of
  a fictional GM imported into the SRD vault); memory questions also carry an ``aspect`` (see
  :data:`~benchmarks.recall_eval.runner.ASPECTS`).
- ``memories.jsonl``: the memories, in the format ``vaultmem import`` reads, with decay histories
  relative to :data:`~benchmarks.recall_eval.runner.NOW` (some superseded by newer ones).

``python -m benchmarks.recall_eval`` prints recall@1/5/10 and MRR for keyword-only ranking and for
full fusion (see ``--help``). Metrics live in :mod:`.metrics`, setup and running in :mod:`.runner`,
the text report in :mod:`.report`.
"""
