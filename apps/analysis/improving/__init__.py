"""Improving a judge (docs/improve.md): candidate strategies tried on a training half of the
texts, the best confirmed against the current strategy on the held-out half.

``plan`` records an improvement (the split, the candidates, their planned runs, the
estimate), starts, cancels and adopts it; ``measure`` reads a run on one half (blind spots,
agreement with people); ``advance`` moves a running improvement on as its runs finish (the
worker task ``improvement.advance`` calls it until it is done).
"""
