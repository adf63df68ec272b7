"""Why a service refused: the views answer 403/409 with the message."""


class WorkRefused(Exception):
    """The user may not do this piece of work (it is not theirs, or not in the study)."""


class StaleJudgement(Exception):
    """The judgement changed since the form was shown (e.g. saved from another tab)."""


class KeyReused(Exception):
    """An idempotency key already used for another user's or another kind of judgement."""
