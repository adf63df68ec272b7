"""Who may use the analysis pages and endpoints (the policy is apps.accounts.permissions)."""

from typing import cast

from rest_framework.permissions import OperandHolder

from apps.accounts.permissions import IsAuthenticated, IsResearcher
from apps.annotation.permissions import IsStudyMember, IsStudyOwner, IsStudyResearcher

#: A study's reports: its researchers, owner or member (a researcher who joined as an expert
#: too). The study rule comes first: an outsider gets a 404, an annotator in it a 403.
READS_REPORTS = (IsStudyOwner | IsStudyMember) & IsResearcher
#: A study's raw data: its owner, or a member with the researcher role.
READS_RAW_DATA = cast(OperandHolder, IsStudyOwner | IsStudyResearcher)  # mypy: not a type union
#: An audit's report cards and comparison: anyone logged in may ask; the audit is found only
#: for its owner or with a valid share link (apps.analysis.selectors.audit_readable), else 404.
READS_AUDIT_CARDS = IsAuthenticated
#: Share links of an audit: researchers; the audit must be their own (audit_owned), else 404.
SHARES_AUDIT_CARDS = IsResearcher
