from django.contrib.auth.models import AnonymousUser
from rest_framework import serializers

from apps.catalog.models import Degree, Method, PerturbationKind
from apps.corpus.generation.destinations import destinations
from apps.corpus.importing.items import FORMATS
from apps.corpus.importing.repeats import DROP, REPEAT_POLICIES
from apps.corpus.models import (
    Dataset,
    GenerationJob,
    ImportJob,
    Perturbation,
    PerturbationVersion,
    SourceItem,
)
from apps.endpoints.models import Endpoint
from apps.endpoints.selectors import endpoints_for_user


class DatasetSerializer(serializers.ModelSerializer):
    task = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    item_count = serializers.IntegerField(read_only=True)

    class Meta:
        model = Dataset
        fields = [
            "id",
            "name",
            "description",
            "task",
            "item_count",
            "publisher_validated",
            "created_at",
        ]
        read_only_fields = ["publisher_validated"]


class PublisherValidatedSerializer(serializers.Serializer):
    publisher_validated = serializers.BooleanField()


class SourceItemSerializer(serializers.ModelSerializer):
    task = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    dataset = serializers.SlugRelatedField(slug_field="name", read_only=True)

    class Meta:
        model = SourceItem
        fields = ["id", "dataset", "external_id", "task", "source", "original", "metadata"]


class VersionSerializer(serializers.ModelSerializer):
    author = serializers.SlugRelatedField(slug_field="username", read_only=True)

    class Meta:
        model = PerturbationVersion
        fields = ["number", "text", "explanation", "author", "note", "created_at"]


class PerturbationSerializer(serializers.ModelSerializer):
    kind = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    versions = VersionSerializer(many=True, read_only=True)

    class Meta:
        model = Perturbation
        fields = [
            "id",
            "item",
            "kind",
            "external_id",
            "text",
            "explanation",
            "origin",
            "rule_name",
            "parameters",
            "seed",
            "generation",
            "flags",
            "versions",
            "created_at",
        ]


class ImportJobSerializer(serializers.ModelSerializer):
    percent = serializers.IntegerField(read_only=True)

    class Meta:
        model = ImportJob
        fields = [
            "id",
            "target",
            "dataset_name",
            "file_format",
            "original_name",
            "status",
            "rows_done",
            "rows_total",
            "percent",
            "errors",
            "summary",
            "created_at",
            "finished_at",
        ]
        read_only_fields = fields


class ImportRequestSerializer(serializers.Serializer):
    file = serializers.FileField()
    dataset = serializers.CharField(max_length=200)
    format = serializers.ChoiceField(choices=FORMATS, required=False, allow_blank=True)
    task = serializers.CharField(required=False, allow_blank=True, default="")
    repeats = serializers.ChoiceField(
        choices=REPEAT_POLICIES,
        default=DROP,
        help_text="FBI folders: drop (default) or keep rows of a degrading kind that copy a "
        "score-invariant row byte for byte.",
    )


class EndpointNameField(serializers.SlugRelatedField):
    """An endpoint by name among those the user can use (an LLM judge's endpoint bears the
    judge's name; a judge shared with them counts once they accept it).

    "owner/name" names one researcher's (e.g. ``alice/gpt judge``). A name alone that several
    share means one's own; with none of one's own, it is an error naming the owners."""

    default_error_messages = {
        **serializers.SlugRelatedField.default_error_messages,
        "ambiguous": "Several endpoints you can use are named {value}: {owners}. Write "
        "owner/name to choose one, e.g. {example}.",
    }

    def to_internal_value(self, data):
        value = str(data)
        endpoints = self.get_queryset().select_related("owner")
        owner, slash, name = value.partition("/")
        if slash and (chosen := endpoints.filter(owner__username=owner, name=name).first()):
            return chosen
        found = list(endpoints.filter(name=value))
        if not found:
            self.fail("does_not_exist", slug_name="name", value=value)
        request = self.context.get("request")
        own = [e for e in found if request is not None and e.owner_id == request.user.pk]
        if len(found) == 1 or own:
            return (own or found)[0]
        owners = sorted(e.owner.username if e.owner else "shipped" for e in found)
        example = next(f"{o}/{value}" for o in owners if o != "shipped")
        self.fail("ambiguous", value=value, owners=", ".join(owners), example=example)


class GenerationJobSerializer(serializers.ModelSerializer):
    """Start a generation (dataset, kinds, degree, seed) and follow its progress."""

    dataset = serializers.PrimaryKeyRelatedField(queryset=Dataset.objects.none())
    kinds = serializers.SlugRelatedField(
        slug_field="slug", many=True, queryset=PerturbationKind.objects.generable()
    )
    generator = EndpointNameField(
        slug_field="name",
        queryset=Endpoint.objects.none(),
        required=False,
        allow_null=True,
    )
    degree = serializers.ChoiceField(choices=Degree.choices, required=False, allow_blank=True)
    percent = serializers.IntegerField(read_only=True)
    dry_run = serializers.BooleanField(
        write_only=True,
        default=False,
        help_text="LLM kinds: answer with the estimate only; nothing is recorded or sent.",
    )
    confirm = serializers.BooleanField(
        write_only=True,
        default=False,
        help_text="LLM kinds: start a job whose HTTP requests exceed the study's limit.",
    )

    class Meta:
        model = GenerationJob
        fields = [
            "id",
            "dataset",
            "kinds",
            "item_ids",
            "degree",
            "seed",
            "use_kind_parameters",
            "generator",
            "temperature",
            "max_tokens",
            "dry_run",
            "confirm",
            "started",
            "status",
            "total",
            "done",
            "percent",
            "counts",
            "problems",
            "created_at",
            "finished_at",
        ]
        read_only_fields = [
            "started",
            "status",
            "total",
            "done",
            "counts",
            "problems",
            "finished_at",
        ]

    def __init__(self, *args, **kwargs):
        """Choices: the user's own datasets (from the view), the endpoints they can use, and
        for each destination (e.g. "study": a study's vetting queue, see
        generation/destinations.py) what they may send results to."""
        super().__init__(*args, **kwargs)
        if datasets := self.context.get("datasets"):
            self.fields["dataset"].queryset = datasets
        request = self.context.get("request")
        user = request.user if request is not None else AnonymousUser()
        self.fields["generator"].queryset = endpoints_for_user(user)
        for destination in destinations():
            self.fields[destination.name] = serializers.PrimaryKeyRelatedField(
                queryset=destination.choices(user),
                required=False,
                allow_null=True,
                help_text=destination.help_text,
            )

    def to_representation(self, instance):
        data = super().to_representation(instance)
        for destination in destinations():
            data[destination.name] = (instance.deliver_to or {}).get(destination.name)
        return data

    def job_options(self) -> dict:
        """The validated data as ``generation_job_start``'s options."""
        data = dict(self.validated_data)
        data.pop("dry_run", None)
        data.pop("confirm", None)
        chosen = {d.name: data.pop(d.name, None) for d in destinations()}
        data["deliver_to"] = {name: target.pk for name, target in chosen.items() if target}
        return data

    def validate(self, attrs):
        llm = [k.slug for k in attrs.get("kinds", []) if k.method == Method.LLM]
        if llm and not attrs.get("generator"):
            raise serializers.ValidationError(
                {"generator": f"LLM-written kinds ({', '.join(llm)}) need a generator."}
            )
        return attrs


class GenerationEstimateSerializer(serializers.Serializer):
    """What starting an LLM generation job would send (generation/estimate.py)."""

    model = serializers.CharField(help_text="The generator's model.")
    calls = serializers.IntegerField(help_text="Item × LLM-written kind pairs.")
    already_there = serializers.IntegerField(help_text="Pairs already written: no request.")
    http_calls = serializers.IntegerField()
    prompt_tokens = serializers.IntegerField(help_text="The prompts' characters / 4.")
    completion_tokens = serializers.IntegerField(help_text="max_tokens per request: at most.")
    completion_source = serializers.CharField()
    cost = serializers.CharField(allow_null=True, help_text="None: an endpoint has no prices.")
    limit = serializers.IntegerField(help_text="HTTP requests above which it needs confirm.")
    limit_of = serializers.CharField(help_text='Whose limit: "this study\'s" or "the" (server).')
    over_limit = serializers.BooleanField()
    left_out = serializers.ListField(child=serializers.DictField())
