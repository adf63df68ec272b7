"""Each rater's agreement with the others (leave-one-out plurality)."""

from apps.analysis.stats.agreement import leave_one_out_agreement


def test_hand_computed_case():
    rows = [
        ("u1", "a", "valid"),
        ("u1", "b", "valid"),
        ("u1", "c", "invalid"),
        ("u2", "a", "valid"),
        ("u2", "b", "invalid"),
        ("u3", "a", "valid"),  # nobody else: not compared
    ]
    result = leave_one_out_agreement(rows)
    # a: u1 others {valid, invalid} tie -> valid among tied: hit; u2 other invalid: miss -> 1/2
    # b: u1 others {valid, invalid} tie, valid among tied: hit; u2 other valid: miss -> 1/2
    # c: u1 others {valid, valid}: miss -> 0/1
    assert result == {"a": (0.5, 2), "b": (0.5, 2), "c": (0.0, 1)}
