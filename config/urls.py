"""Root URLs: pages, the admin, the REST API under /api/v1/ (with its docs), and /healthz."""

from importlib.util import find_spec

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from apps.accounts.permissions import AllowAny, IsAuthenticated, allow
from config import api_docs
from config.health import healthz

# Each app's pages live in apps/<app>/urls.py. Logging in and accepting an invitation (its
# token is the check) are open to anyone; the admin checks staff itself.
public = allow(AllowAny)
PAGE_APPS = ("annotation", "corpus", "catalog", "judging", "analysis")
handler500 = "config.errors.server_error"  # an outage is a 503 (config/errors.py)

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    path("accounts/login/", public(auth_views.LoginView.as_view()), name="login"),
    path(
        "accounts/logout/",
        allow(IsAuthenticated)(auth_views.LogoutView.as_view()),
        name="logout",
    ),
    path(
        "accounts/invite/<uidb64>/<token>/",
        public(
            auth_views.PasswordResetConfirmView.as_view(
                template_name="registration/invite_accept.html",
                post_reset_login=True,
                post_reset_login_backend="apps.accounts.backends.UserBackend",
                success_url="/",
            )
        ),
        name="invite-accept",
    ),
    path("admin/", admin.site.urls),
    path("api/v1/", api_docs.ApiRootView.as_view(), name="api-root"),
    path("api/v1/docs/", api_docs.swagger_ui, name="api-docs"),
    path("api/v1/redoc/", api_docs.redoc, name="api-redoc"),
    path("api/v1/schema/", api_docs.SchemaView.as_view(), name="api-schema"),
    path("api/v1/", include("config.api_urls")),
    *[path("", include(f"apps.{app}.urls")) for app in PAGE_APPS if find_spec(f"apps.{app}.urls")],
]
