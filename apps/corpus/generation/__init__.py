"""Making perturbations: a job (``jobs``) applies rule-based kinds locally (``rules``) and has
LLM-written kinds written by a model endpoint (``llm``), checks every output (``checks``),
merges duplicates (``storing``) and hands the results to their destinations
(``destinations``: e.g. a study's vetting queue)."""
