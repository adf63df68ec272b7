"""Adversarial search (AdvEval, docs/methods.md §6): a generator LLM proposes texts, a gold
and a victim judge score them, and the search keeps the texts the two disagree on most.

Modules: ``objective`` (S_fb, the 0-100 scale, the success rule: pure), ``trajectory`` and
``prompt`` (what the generator is shown, and reading its candidates: pure), ``generator`` (the
generator's calls), ``rule_candidates`` (the rule-based baseline), ``scoring`` (candidates'
scores from their judge calls), ``loop`` (one search worked to its end), ``finals`` (the
final texts as perturbations).
"""
