"""SQL that the model wrote: read it, describe it, tidy it, repair it, and choose among drafts.

- ``extract``: ``extract_sql``, the one statement in a model's reply;
- ``ast``: DuckDB's parser as JSON and the one walker every rule uses; ``edit``: text edits that
  leave string literals alone; ``reads``: what a SELECT reads, CTEs resolved by scope (every read check);
- ``format``: SQL laid out for reading;
- ``describe``: ``describe_sql``, the tables, conditions, grouping, order and limit in words, for the derivation;
- ``tidy``: ``RULES``, the clean-ups run on every query the model writes (``tidy_sql``), first of them
  ``habits`` (other dialects' functions and 0-based indexes rewritten into DuckDB);
- ``errors``: DuckDB's error messages parsed once, and the hints the model is given;
- ``drafts``: the one drafts service every node uses: drafts drawn from a prompt, a turn's query run with its
  limits (``run_query``), the free repairs applied (``repair``, ``run_repaired``), the vote (``choose``);
- ``repair``: ``REPAIRS``, free fixes for errors whose fix DuckDB names;
  ``join_repair``: the forgotten-join repair; ``facts``: what rules know of the schema;
- ``pivot``: a PIVOT that lists no values gets them (one statement, the same result);
- ``voting``: the result most resampled drafts agree on; ``compare``: ``results_match``, whether two
  results are the same answer (the voting's and the scorer's semantics);
- ``reference``: DuckDB's friendly SQL and functions a question needs, for the prompt; ``dialect``: wording
  hints (``question_hints``).
"""
