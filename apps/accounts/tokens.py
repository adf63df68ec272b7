"""`POST /api/v1/auth/token/`: a user's API token, throttled.

Two limits (docs/deployment.md): DRF's scoped throttle caps requests per address
(`DISCERN_TOKEN_RATE`, counted for every web process together: apps/accounts/rates.py), and
django-axes locks a user name at one address out after too many wrong passwords, as on the
login page.
"""

from __future__ import annotations

from django.conf import settings
from rest_framework import status
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.exceptions import ValidationError
from rest_framework.permissions import AllowAny
from rest_framework.response import Response

from apps.accounts.rates import SharedScopedRateThrottle


def locked_out_message() -> str:
    minutes = int(settings.AXES_COOLOFF_TIME.total_seconds() // 60)
    return (
        "Too many failed log-ins for this account from this address: try again in "
        f"{minutes} minutes, or ask an administrator to unlock it."
    )


class TokenView(ObtainAuthToken):
    permission_classes = [AllowAny]  # the username and password are the check
    throttle_classes = [SharedScopedRateThrottle]
    throttle_scope = "token"

    def post(self, request, *args, **kwargs):
        try:
            return super().post(request, *args, **kwargs)
        except ValidationError:
            # django-axes refused the credentials before checking them: say so, not "wrong"
            if getattr(request, "axes_locked_out", False):
                return Response(
                    {"detail": locked_out_message()}, status=status.HTTP_429_TOO_MANY_REQUESTS
                )
            raise
