"""The model a judge calls: a promptfoo grading provider or an Inspect AI model name, mapped
to an OpenAI-compatible endpoint (base URL, model, the NAME of its key variable) and the
sampling settings its strategy keeps. Other provider families are refused, field named."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from apps.judging.importing.mapping import ENDPOINT, ImportRefused, MappedField

OPENAI_BASE_URL = "https://api.openai.com/v1"
OLLAMA_BASE_URL = "http://localhost:11434/v1"
LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})
#: Sampling settings: where each lands (the strategy's own, or the endpoint's defaults).
SAMPLING = {
    "temperature": "strategy.temperature",
    "max_tokens": "strategy.max_tokens",
    "top_p": "endpoint.default_params",
    "seed": "endpoint.default_params",
    "stop": "endpoint.default_params",
}


@dataclass
class Model:
    """What a judge's model maps to: endpoint settings, strategy settings, and the rows."""

    endpoint: dict[str, Any] = field(default_factory=dict)
    strategy: dict[str, Any] = field(default_factory=dict)
    rows: list[MappedField] = field(default_factory=list)

    def set(self, source: str, target: str, value: Any, note: str = "") -> None:
        where, name = target.split(".", 1)
        if target == "endpoint.default_params":
            params = self.endpoint.setdefault("default_params", {})
            params[source.rsplit(".", 1)[-1]] = value
        else:
            (self.endpoint if where == ENDPOINT else self.strategy)[name] = value
        self.rows.append(MappedField(source, target, _shown(value), note))


def is_local(base_url: str) -> bool:
    host = (urlsplit(base_url).hostname or "").lower()
    return host in LOCAL_HOSTS or host.startswith("127.")


def promptfoo_model(provider: Any, where: str) -> Model:
    """A promptfoo grading provider (``openai:chat:MODEL`` or ``{id, config}``)."""
    if isinstance(provider, dict) and "id" not in provider and set(provider) == {"text"}:
        return promptfoo_model(provider["text"], f"{where}.text")
    config: Any = {}
    if isinstance(provider, dict):
        provider_id, config = provider.get("id"), provider.get("config") or {}
        where_id = f"{where}.id"
    else:
        provider_id, where_id = provider, where
    if not isinstance(provider_id, str) or not isinstance(config, dict):
        raise ImportRefused(
            [f"{where}: a provider is an id such as openai:chat:gpt-4o-mini, or {{id, config}}"]
        )
    model = Model()
    model.set(where_id, "endpoint.model", _openai_model_name(provider_id, where_id))
    model.rows.append(MappedField(where_id, "", provider_id, "an OpenAI-compatible provider"))
    _promptfoo_config(model, config, f"{where}.config")
    return model


def _openai_model_name(provider_id: str, where: str) -> str:
    """``openai:chat:MODEL`` or ``openai:MODEL`` → MODEL."""
    family, _, rest = provider_id.partition(":")
    if family != "openai" or not rest:
        raise ImportRefused(
            [
                f'{where}: "{provider_id}" is not an OpenAI-compatible provider Discern can '
                "call (it imports openai:chat:MODEL and openai:MODEL, with config.apiBaseUrl "
                "for other OpenAI-compatible servers)"
            ]
        )
    kind, _, name = rest.partition(":")
    if not name:
        kind, name = "chat", rest
    if kind != "chat":
        raise ImportRefused(
            [f'{where}: "{provider_id}" is not a chat model (Discern judges with chat completions)']
        )
    return name


def _promptfoo_config(model: Model, config: dict[str, Any], where: str) -> None:
    known = {"apiBaseUrl", "apiHost", "apiKeyEnvar", "apiKey", *SAMPLING}
    if unknown := sorted(set(config) - known):
        raise ImportRefused(
            [f"{where}.{name}: not a setting Discern can import" for name in unknown]
        )
    if "apiKey" in config:
        raise ImportRefused(
            [
                f"{where}.apiKey: a key written in the file is not imported: keys stay in "
                "environment variables; name one with apiKeyEnvar (DISCERN_KEY_...)"
            ]
        )
    if "apiBaseUrl" in config:
        model.set(f"{where}.apiBaseUrl", "endpoint.base_url", str(config["apiBaseUrl"]))
    elif "apiHost" in config:
        model.set(f"{where}.apiHost", "endpoint.base_url", f"https://{config['apiHost']}/v1")
    else:
        model.set(where, "endpoint.base_url", OPENAI_BASE_URL, "promptfoo's default: OpenAI")
    _key(model, config.get("apiKeyEnvar"), f"{where}.apiKeyEnvar")
    _sampling(model, config, where)


def inspect_model(description: dict[str, Any]) -> Model:
    """An Inspect AI model name (``openai/gpt-4o-mini``, ``vllm/...``, ``ollama/...``,
    ``openai-api/SERVICE/MODEL``) with the description's base_url and api_key_env."""
    name = description.get("model")
    if not isinstance(name, str) or "/" not in name:
        raise ImportRefused(["model: the grader model as Inspect names it, e.g. openai/gpt-4o"])
    family, _, rest = name.partition("/")
    if family == "openai-api":
        rest = rest.partition("/")[2]
    defaults = {"openai": OPENAI_BASE_URL, "ollama": OLLAMA_BASE_URL}
    if family not in ("openai", "openai-api", "vllm", "ollama") or not rest:
        raise ImportRefused(
            [
                f'model: "{name}" is not an OpenAI-compatible model Discern can call (it '
                "imports openai/, openai-api/SERVICE/, vllm/ and ollama/ models)"
            ]
        )
    model = Model()
    model.set("model", "endpoint.model", rest)
    base_url = description.get("base_url") or defaults.get(family)
    if not base_url:
        raise ImportRefused([f"base_url: {family}/ models need the server's address"])
    note = "" if description.get("base_url") else f"Inspect's default for {family}/"
    model.set("base_url", "endpoint.base_url", str(base_url), note)
    _key(model, description.get("api_key_env"), "api_key_env")
    _sampling(model, description, "")
    return model


def _key(model: Model, variable: Any, where: str) -> None:
    """The key variable's NAME (checked against the researcher's grants when saved); none is
    fine only for a server on this machine."""
    if variable:
        model.set(where, "endpoint.api_key_env", str(variable), "needs a grant to you")
    elif not is_local(model.endpoint["base_url"]):
        host = urlsplit(model.endpoint["base_url"]).hostname or model.endpoint["base_url"]
        raise ImportRefused(
            [
                f"{where}: {host} needs a key: name the environment variable holding it "
                "(DISCERN_KEY_..., granted to you)"
            ]
        )
    else:
        model.rows.append(MappedField(where, "endpoint.api_key_env", "", "none: a local server"))


def _sampling(model: Model, settings: dict[str, Any], where: str) -> None:
    for name, target in SAMPLING.items():
        if settings.get(name) is not None:
            model.set(f"{where}.{name}".lstrip("."), target, settings[name])


def _shown(value: Any) -> str:
    return value if isinstance(value, str) else repr(value)
