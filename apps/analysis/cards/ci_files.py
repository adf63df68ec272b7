"""The files CI tools read, by the name their download ends with (docs/audit.md, "In CI"):
the pages and the API serve them through here, ``judge_audit`` writes the same texts. Light
to import (the URL conf reads ``CI_FILES``); the builders are imported when a file is asked."""

from __future__ import annotations

from apps.judging.models.audit import AuditSubject, JudgeAudit

#: The download's ending → its content type.
CI_FILES = {"junit.xml": "application/xml", "promptfoo.json": "application/json"}


def ci_file_url_name(ending: str, *, card: bool = False) -> str:
    """ "audit-junit", "audit-card-promptfoo"..."""
    return ("audit-card-" if card else "audit-") + ending.split(".", 1)[0]


def ci_file(
    audit: JudgeAudit, ending: str, *, subject: AuditSubject | None = None
) -> tuple[str, str, str]:
    """(text, content type, file name) of the audit's verdicts, or one subject's."""
    from apps.analysis.cards.junit import audit_junit_text
    from apps.analysis.cards.promptfoo_results import audit_promptfoo_text

    build = audit_junit_text if ending == "junit.xml" else audit_promptfoo_text
    name = f"audit-{audit.pk}" + (f"-card-{subject.pk}" if subject else "") + f"-{ending}"
    return build(audit, subject=subject), CI_FILES[ending], name
