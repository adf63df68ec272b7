"""An audit's report cards as JUnit XML (docs/audit.md, "In CI"): a ``<testsuites>`` root,
one ``<testsuite>`` per audited judge and strategy, one ``<testcase>`` per verdict line (and,
against a saved card, one per figure tested), with ``<failure>``, ``<skipped>`` or ``<error>``
as ``outcomes`` decides. Judge names, labels and reasons are people's text: every attribute
and text goes through ``xml_text``, which drops what XML 1.0 cannot hold."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from datetime import UTC, datetime

from apps.analysis.cards.baseline import BaselineResult
from apps.analysis.cards.outcomes import (
    ERROR,
    FAILED,
    SKIPPED,
    AuditCases,
    Case,
    SubjectCases,
    audit_cases,
)
from apps.judging.models.audit import AuditSubject, JudgeAudit

CONTENT_TYPE = "application/xml"
#: Characters XML 1.0 cannot hold, even escaped: C0 controls but tab, newline and carriage
#: return; lone surrogates; U+FFFE and U+FFFF.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
#: The child element of a testcase for each outcome that is not a pass.
_MARK = {FAILED: "failure", SKIPPED: "skipped", ERROR: "error"}


def xml_text(value: object) -> str:
    """``value`` as text XML 1.0 can hold: each character it cannot becomes U+FFFD (escaping
    <, &, quotes is ElementTree's)."""
    return _NOT_XML.sub("\ufffd", "" if value is None else str(value))


def _element(
    parent: ET.Element | None, tag: str, attrs: Mapping[str, object], text: str = ""
) -> ET.Element:
    """A child of ``parent`` (the root when None), its attributes and text made XML-safe;
    attributes that are None are left out."""
    cleaned = {name: xml_text(value) for name, value in attrs.items() if value is not None}
    element = ET.Element(tag, cleaned) if parent is None else ET.SubElement(parent, tag, cleaned)
    if text:
        element.text = xml_text(text)
    return element


def _seconds(value: float | None) -> str | None:
    return None if value is None else f"{value:.3f}"


def _timestamp(moment: datetime) -> str:
    """JUnit's timestamp: ISO 8601 without a time zone, in UTC."""
    return moment.astimezone(UTC).replace(microsecond=0, tzinfo=None).isoformat()


def _counts(cases: AuditCases | SubjectCases, tests: int) -> dict[str, object]:
    return {
        "tests": tests,
        "failures": cases.count(FAILED),
        "errors": cases.count(ERROR),
        "skipped": cases.count(SKIPPED),
    }


def _properties(parent: ET.Element, values: dict[str, object]) -> None:
    shown = {name: value for name, value in values.items() if value not in (None, "")}
    if shown:
        properties = _element(parent, "properties", {})
        for name, value in shown.items():
            _element(properties, "property", {"name": name, "value": value})


def _testcase(suite: ET.Element, subject: SubjectCases, case: Case) -> None:
    part = case.part or "all_parts"
    classname = f"discern.{subject.slug}.{part}"
    testcase = _element(suite, "testcase", {"name": case.name, "classname": classname})
    words = {"figure": case.key, "scope": case.scope, "verdict": case.verdict}
    _properties(testcase, words | case.figures)
    mark = _MARK.get(case.outcome)
    if mark is not None:
        said = {"message": case.sentence, "type": case.verdict}
        _element(testcase, mark, said, case.sentence)


def junit_xml(cases: AuditCases) -> str:
    """The cases as a JUnit XML document."""
    name = f"Discern audit {cases.id}: {cases.label}"
    root = _element(
        None,
        "testsuites",
        {"name": name, **_counts(cases, cases.tests), "time": _seconds(cases.seconds)},
    )
    for subject in cases.subjects:
        suite = _element(
            root,
            "testsuite",
            {
                "name": subject.label,
                **_counts(subject, len(subject.cases)),
                "timestamp": _timestamp(cases.timestamp),
                "time": _seconds(subject.runs.seconds),
            },
        )
        _properties(
            suite,
            {
                "audit": cases.id,
                "audit_label": cases.label,
                "audit_status": cases.status,
                "audited": cases.where,
                "subject": subject.id,
                "judge": subject.judge,
                "strategy": subject.strategy,
            },
        )
        for case in subject.cases:
            _testcase(suite, subject, case)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def audit_junit_text(
    audit: JudgeAudit,
    *,
    subject: AuditSubject | None = None,
    gate: BaselineResult | None = None,
) -> str:
    """The audit's cards (one subject's, when given) as JUnit XML: what the pages' download,
    the API and ``judge_audit --junit`` write."""
    return junit_xml(audit_cases(audit, subject=subject, gate=gate))
