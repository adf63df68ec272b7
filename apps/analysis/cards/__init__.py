"""Report cards of audited judges and judges side by side (docs/cards.md).

- ``units``       each figure as values per unit (perturbation, pair, text, kind, call)
- ``lines``       the card's lines: a figure, its N, interval and evidence link
- ``card``        ``build_card(subject)``: one judge and strategy's card (a Report)
- ``comparison``  ``build_comparison(audit)``: subjects side by side, paired tests, Holm
- ``snapshots``   cards served from snapshots; ``audit_json(audit)`` for the page and CLI
- ``evidence``    a subject's parts and runs, and the links to the evidence
- ``outcomes``    each verdict line (and figure against a saved card) as a test outcome
- ``junit``, ``promptfoo_results``  those outcomes as JUnit XML, as promptfoo's results JSON
- ``ci_files``    the files CI tools read, by name, for the pages and the API
"""
