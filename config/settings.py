"""Discern settings: every value comes from the environment (or a `.env` file).

The embedded default needs no configuration: SQLite under `var/`, a Celery broker on the
filesystem and a secret key it makes and keeps in `var/secret_key`. `DATABASE_URL` and
`REDIS_URL` switch to PostgreSQL and Redis; a deployment with `DATABASE_URL` must then set
`DJANGO_SECRET_KEY` (or `DJANGO_DEBUG=true` on a developer's machine). The README lists every
variable.
"""

from datetime import timedelta
from pathlib import Path

import environ
from django.core.exceptions import ImproperlyConfigured

from config.local_secret import local_secret_key

BASE_DIR = Path(__file__).resolve().parent.parent
env = environ.Env()
environ.Env.read_env(BASE_DIR / ".env", overwrite=False)

VAR_DIR = Path(env.str("DISCERN_VAR_DIR", default=str(BASE_DIR / "var")))
VAR_DIR.mkdir(parents=True, exist_ok=True)

DEBUG = env.bool("DJANGO_DEBUG", default=False)
EMBEDDED = not env.str("DATABASE_URL", default="")  # SQLite under var/, one machine
SECRET_KEY = env.str("DJANGO_SECRET_KEY", default="")
if not SECRET_KEY:
    if not (EMBEDDED or DEBUG):
        raise ImproperlyConfigured(
            "DJANGO_SECRET_KEY is not set. A deployment with DATABASE_URL needs it "
            "(the embedded default, without DATABASE_URL, keeps its own in var/secret_key)."
        )
    SECRET_KEY = local_secret_key(VAR_DIR)
ALLOWED_HOSTS = env.list("DJANGO_ALLOWED_HOSTS", default=["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS = env.list("DJANGO_CSRF_TRUSTED_ORIGINS", default=[])

# HTTPS in production (docs/deployment.md): all off by default, so `make demo` runs on http.
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = env.bool("DJANGO_SECURE_COOKIES", default=False)
SECURE_SSL_REDIRECT = env.bool("DJANGO_SECURE_SSL_REDIRECT", default=False)
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]  # load balancers probe over plain http
SECURE_HSTS_SECONDS = env.int("DJANGO_SECURE_HSTS_SECONDS", default=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("DJANGO_SECURE_HSTS_INCLUDE_SUBDOMAINS", default=False)
SECURE_HSTS_PRELOAD = env.bool("DJANGO_SECURE_HSTS_PRELOAD", default=False)
if env.bool("DJANGO_SECURE_PROXY_SSL_HEADER", default=False):
    # Only behind a proxy that sets X-Forwarded-Proto itself and strips it from clients.
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "axes",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_htmx",
    "template_partials",
    "apps.accounts",
    "apps.catalog",
    "apps.endpoints",
    "apps.corpus",
    "apps.annotation",
    "apps.judging",
    "apps.analysis",
]

MIDDLEWARE = [
    "config.upload_limit.UploadLimitMiddleware",  # first: before anything reads the body
    "config.odd_input.OddInputMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.auth.middleware.LoginRequiredMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "axes.middleware.AxesMiddleware",  # last: it answers a locked-out login
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    }
]

DATABASES = {
    "default": env.db_url("DATABASE_URL", default=f"sqlite:///{VAR_DIR / 'discern.sqlite3'}")
}
DATABASES["default"]["ATOMIC_REQUESTS"] = False
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # WAL and a busy timeout let the web process and the worker share the file.
    DATABASES["default"]["OPTIONS"] = {
        "timeout": 20,
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        "transaction_mode": "IMMEDIATE",
    }
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # Statements are prepared only where asked: the hot paths' plain SQL (docs/annotation.md,
    # "Speed"), planned once a connection (a generic plan); the ORM's never are.
    pg_options = DATABASES["default"].setdefault("OPTIONS", {})
    pg_options.setdefault("prepare_threshold", 2**31 - 1)
    generic = "-c plan_cache_mode=force_generic_plan"
    pg_options["options"] = f"{pg_options.get('options', '')} {generic}".strip()
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_USER_MODEL = "accounts.User"
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",  # refuses a locked-out user before the password check
    "apps.accounts.backends.UserBackend",  # ModelBackend, the signed-in user read in one statement
]
# Login throttling (django-axes), for the login page and POST /api/v1/auth/token/: after
# AXES_FAILURE_LIMIT wrong passwords for one user name from one address, every attempt (even
# the right password) is refused for DISCERN_LOGIN_COOLOFF_MINUTES.
AXES_FAILURE_LIMIT = env.int("DISCERN_LOGIN_FAILURE_LIMIT", default=10)
AXES_COOLOFF_TIME = timedelta(minutes=env.int("DISCERN_LOGIN_COOLOFF_MINUTES", default=15))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
# The client address: REMOTE_ADDR, or behind N proxies the one they add to X-Forwarded-For.
PROXY_COUNT = env.int("DISCERN_PROXY_COUNT", default=0)
# Participant identities a recruitment link makes per client address and hour (then 429).
DISCERN_PANEL_JOINS_PER_HOUR = env.int("DISCERN_PANEL_JOINS_PER_HOUR", default=30)
AXES_IPWARE_PROXY_COUNT = PROXY_COUNT
AXES_IPWARE_META_PRECEDENCE_ORDER = (
    ["HTTP_X_FORWARDED_FOR", "REMOTE_ADDR"] if PROXY_COUNT else ["REMOTE_ADDR"]
)
AXES_VERBOSE = False
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
if env.bool("DISCERN_FAST_PASSWORD_HASHER", default=False):
    PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = VAR_DIR / "static"
STATIC_ROOT.mkdir(exist_ok=True)  # WhiteNoise warns on every request when it is missing
MEDIA_ROOT = VAR_DIR / "media"
# The largest request body, files included (config/upload_limit.py answers 413 above it).
DISCERN_MAX_UPLOAD_BYTES = env.int("DISCERN_MAX_UPLOAD_BYTES", default=200 * 1024 * 1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = DISCERN_MAX_UPLOAD_BYTES
FILE_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "apps.accounts.authentication.TokenAuthentication",
        "apps.accounts.authentication.SessionAuthentication",  # not participants
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.LimitOffsetPagination",
    "PAGE_SIZE": 100,
    "DEFAULT_THROTTLE_RATES": {"token": env.str("DISCERN_TOKEN_RATE", default="20/min")},
    "NUM_PROXIES": PROXY_COUNT,  # 0: the address is REMOTE_ADDR, X-Forwarded-For is ignored
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Discern API",
    "DESCRIPTION": "Perturb texts, annotate them, run judges and analyse their reliability.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAuthenticated"],
    # Swagger UI and Redoc from our own static files (drf-spectacular-sidecar), no CDN
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "ENUM_NAME_OVERRIDES": {
        "JobStatusEnum": "apps.corpus.models.JobStatus",
        "RunStatusEnum": "apps.judging.models.run.RunStatus",
        "StrategyFamilyEnum": "apps.judging.models.strategy.Family",
        "KindFamilyEnum": "apps.catalog.models.KindFamily",
        "MemberRoleEnum": "apps.accounts.models.Role",
        "SearchJudgeRoleEnum": "apps.judging.models.search.Role",
    },
}

# Celery: Redis when REDIS_URL is set, else kombu's filesystem transport under var/.
REDIS_URL = env.str("REDIS_URL", default="")
BROKER_DIR = VAR_DIR / "broker"
if REDIS_URL:
    CELERY_BROKER_URL = REDIS_URL
    # kombu's Redis transport, repaired so that losing the broker does not end the worker
    CELERY_BROKER_TRANSPORT = "workers.broker:Transport"
    CELERY_BROKER_TRANSPORT_OPTIONS: dict[str, object] = {
        "retry_on_timeout": True,
        "health_check_interval": 10,
    }
else:
    BROKER_DIR.mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_URL = "filesystem://localhost/"  # a host named: kombu warns without one
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(BROKER_DIR),
        "data_folder_out": str(BROKER_DIR),
        # kombu's exchange tables; its default is ./control in the working directory
        "control_folder": str(BROKER_DIR / "control"),
        "store_processed": False,
    }
# A broker that goes away is waited for, however long, at start and while running; the task
# that is running meanwhile carries on (workers.outages).
CELERY_BROKER_CONNECTION_RETRY = True
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BROKER_CONNECTION_MAX_RETRIES = None
CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS = False
CELERY_TASK_DEFAULT_QUEUE = env.str("DISCERN_QUEUE", default="discern")
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_IGNORE_RESULT = True

# Sessions: with Redis, read from it (Django's `cached_db`: written to both, read from Redis,
# the database when Redis has lost one), so a page's authentication is one statement (the
# user) as the API's; logging out deletes both. The embedded default keeps them in the
# database: a cache in each process's memory would let a session logged out in one process
# live on in another.
CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
# "shared": what every web process must see alike (limits per client address): Redis when
# there is one, else this process's memory (the embedded default runs one web process).
CACHES["shared"] = CACHES["default"]
if REDIS_URL:
    CACHES["sessions"] = {
        "BACKEND": "config.redis_cache.SessionRedisCache",  # Redis away: the database alone
        "LOCATION": REDIS_URL,
        "KEY_PREFIX": "discern",
    }
    CACHES["shared"] = CACHES["sessions"] | {"BACKEND": "config.redis_cache.KeptClientRedisCache"}
    SESSION_ENGINE = "django.contrib.sessions.backends.cached_db"
    SESSION_CACHE_ALIAS = "sessions"

# Imports: a field longer than this is rejected with an error naming file, row and field.
# The published data of the five papers, read in place by tests and benchmarks (never copied):
# they skip what needs it when the folder is absent.
DISCERN_PEERS_DIR = Path(
    env.str("DISCERN_PEERS_DIR", default=str(BASE_DIR.parent / "shared" / "peers"))
)
# Load the shipped catalog after every migrate (the test suite turns it off: tests load it).
DISCERN_LOAD_CATALOG = env.bool("DISCERN_LOAD_CATALOG", default=True)
DISCERN_MAX_FIELD_CHARS = env.int("DISCERN_MAX_FIELD_CHARS", default=1_000_000)
# Files above this many rows are imported by the worker, with a progress bar.
DISCERN_BACKGROUND_IMPORT_BYTES = env.int("DISCERN_BACKGROUND_IMPORT_BYTES", default=2_000_000)

# Uploaded zips (FBI-style folders): limits checked before and while unpacking.
DISCERN_ZIP_MAX_BYTES = env.int("DISCERN_ZIP_MAX_BYTES", default=500 * 1024 * 1024)
DISCERN_ZIP_MAX_MEMBERS = env.int("DISCERN_ZIP_MAX_MEMBERS", default=10_000)
DISCERN_ZIP_MAX_RATIO = env.int("DISCERN_ZIP_MAX_RATIO", default=100)

# Endpoints (LLM judges, generators) may name DISCERN_KEY_* variables as their API key,
# plus these (comma-separated).
DISCERN_KEY_VARIABLES = env.list("DISCERN_KEY_VARIABLES", default=[])

# Where model calls may go (apps/endpoints/egress.py, docs/endpoints.md): addresses inside the
# server's network are refused unless their kind (loopback, private, link-local, multicast,
# reserved) or network (10.1.2.0/24) is listed here, comma-separated. `make demo` and the test
# suite allow loopback, for local model servers.
DISCERN_EGRESS_ALLOW = env.list("DISCERN_EGRESS_ALLOW", default=[])

# A judge run, an adversarial search or an LLM generation that would send more HTTP requests to
# models than this asks to be confirmed first (a study may set its own:
# Study.confirm_above_requests).
DISCERN_CONFIRM_ABOVE_REQUESTS = env.int("DISCERN_CONFIRM_ABOVE_REQUESTS", default=500)

# Batch mode: seconds until a submitted batch is first looked at, doubling up to the maximum.
DISCERN_BATCH_POLL_S = env.float("DISCERN_BATCH_POLL_S", default=30.0)
DISCERN_BATCH_POLL_MAX_S = env.float("DISCERN_BATCH_POLL_MAX_S", default=600.0)

# Slow imports (numpy, scipy, matplotlib, nltk, the openai SDK...) are made where they are used,
# so that management commands start quickly; the web server (config/wsgi.py) and the worker
# (workers/celery.py) import these at start, before their first request or task
# (docs/deployment.md, Start-up).
DISCERN_PRELOAD = (
    "openai",
    "httpx2",
    "aiohttp",
    "sacrebleu",
    "rouge_score.rouge_scorer",
    "scipy.optimize",
    "apps.analysis.reports.human_agreement",
    "apps.analysis.reports.expert_weights",
    "apps.analysis.reports.judge_vs_human",
    "apps.analysis.reports.adversarial",
    "apps.analysis.reports.judge_reliability",
    "apps.analysis.reports.rater_quality",
    "apps.analysis.cards.comparison",
    "apps.analysis.cards.snapshots",
)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"quiet_refusals": {"()": "config.errors.QuietRefusals"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "filters": ["quiet_refusals"]}},
    "root": {"handlers": ["console"], "level": env.str("DJANGO_LOG_LEVEL", default="INFO")},
    # the openai client logs every request at INFO: too much in a worker making thousands
    "loggers": {name: {"level": "WARNING"} for name in ("httpx", "httpx2", "openai")},
}
