"""Diffs stored ahead of the first showing (apps/corpus/diffs.py), and a stored diff that no
longer matches its text computed again."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from apps.corpus import diffs
from apps.corpus.diff import DIFF_VERSION, diff_payload
from apps.corpus.diffs import diffs_store
from apps.corpus.models import Dataset, ImportJob, Perturbation
from tests.factories import DatasetFactory, PerturbationFactory

pytestmark = pytest.mark.django_db


def _texts(dataset, n):
    return [
        PerturbationFactory(
            item__dataset=dataset,
            item__original=f"The council met on day {i} and closed the library.",
            text=f"The council met on day {i} and did not close the library.",
        )
        for i in range(n)
    ]


def test_every_text_without_a_diff_gets_its_own_in_batches(monkeypatch):
    monkeypatch.setattr(diffs, "BATCH", 2)
    dataset, other = DatasetFactory(), DatasetFactory()
    texts = _texts(dataset, 5)
    elsewhere = _texts(other, 1)[0]
    Perturbation.objects.update(diff={})
    current = texts[0]
    Perturbation.objects.filter(pk=current.pk).update(
        diff=diff_payload(current.item.original, current.text)
    )
    old = texts[1]
    Perturbation.objects.filter(pk=old.pk).update(diff={"version": DIFF_VERSION - 1, "ops": []})

    assert diffs_store(dataset_id=dataset.pk) == 4  # not the one already stored
    for text in texts:
        stored = Perturbation.objects.get(pk=text.pk).diff
        assert stored == diff_payload(text.item.original, text.text)
    assert Perturbation.objects.get(pk=elsewhere.pk).diff == {}  # another dataset's text
    assert diffs_store(dataset_id=dataset.pk) == 0  # nothing left to do


def test_a_stored_diff_is_served_without_a_statement(django_assert_num_queries):
    text = _texts(DatasetFactory(), 1)[0]
    Perturbation.objects.update(diff={})
    diffs_store(dataset_id=text.item.dataset_id)
    loaded = Perturbation.objects.select_related("item").get(pk=text.pk)
    with django_assert_num_queries(0):
        ops = loaded.diff_ops()
    assert [op["op"] for op in ops] == ["equal", "replace", "equal"]


def test_a_diff_stored_for_an_earlier_text_is_computed_again(django_assert_num_queries):
    # the worker read the text, the researcher edited it, then the worker stored its diff
    text = _texts(DatasetFactory(), 1)[0]
    stale = diff_payload(text.item.original, text.text)
    text.revise(text="The council met and opened the library.")
    Perturbation.objects.filter(pk=text.pk).update(diff=stale)
    loaded = Perturbation.objects.select_related("item").get(pk=text.pk)
    with django_assert_num_queries(1):  # computed and stored again
        ops = loaded.diff_ops()
    assert "".join(op["b"] for op in ops) == "The council met and opened the library."
    assert Perturbation.objects.get(pk=text.pk).diff == diff_payload(
        text.item.original, "The council met and opened the library."
    )


PAIRS = (
    b"id,original,kind,perturbed\n"
    b"a1,The council closed the library.,negation,The council did not close the library.\n"
)


def test_an_upload_queues_its_texts_diffs_for_the_worker(
    client, researcher, catalog, monkeypatch, django_capture_on_commit_callbacks
):
    from workers.tasks.imports import store_diffs

    queued = []
    monkeypatch.setattr(store_diffs, "delay", queued.append)
    client.force_login(researcher)
    with django_capture_on_commit_callbacks(execute=True):
        upload = SimpleUploadedFile("pairs.csv", PAIRS)
        client.post("/imports/new/", {"file": upload, "dataset": "pairs"})
    assert queued == [Dataset.objects.get(owner=researcher, name="pairs").pk]


def test_an_unreachable_broker_leaves_the_import_and_the_diff_to_the_first_look(
    client, researcher, catalog, monkeypatch, django_capture_on_commit_callbacks, caplog
):
    from workers.tasks.imports import store_diffs

    def down(*_):
        raise ConnectionError("broker down")

    monkeypatch.setattr(store_diffs, "delay", down)
    client.force_login(researcher)
    with django_capture_on_commit_callbacks(execute=True):
        upload = SimpleUploadedFile("pairs.csv", PAIRS)
        response = client.post("/imports/new/", {"file": upload, "dataset": "pairs"}, follow=True)
    assert response.status_code == 200 and b"1 perturbations imported" in response.content
    assert ImportJob.objects.get().status == "done"
    assert "could not queue the diffs" in caplog.text
    text = Perturbation.objects.select_related("item").get()
    assert text.diff == {}  # not stored ahead; computed on the first look
    assert [op["op"] for op in text.diff_ops()] == ["equal", "replace", "equal"]
    assert Perturbation.objects.get().diff == diff_payload(text.item.original, text.text)


def test_an_import_ends_with_its_next_steps(
    client, researcher, catalog, django_capture_on_commit_callbacks
):
    from apps.corpus.models import Dataset

    client.force_login(researcher)
    with django_capture_on_commit_callbacks(execute=True):
        upload = SimpleUploadedFile("pairs.csv", PAIRS)
        page = client.post("/imports/new/", {"file": upload, "dataset": "pairs"}, follow=True)
    dataset = Dataset.objects.get(name="pairs")
    body = page.content.decode()
    assert f'href="/datasets/{dataset.pk}/">Open the dataset' in body
    assert f'href="/generate/?dataset={dataset.pk}">Perturb it' in body
    assert f'href="/studies/new/?dataset={dataset.pk}">Set up a study with it' in body
    form = client.get(f"/studies/new/?dataset={dataset.pk}").content.decode()
    box = f'name="datasets" value="{dataset.pk}"'  # not another field's value="1" on SQLite
    assert box in form and "checked" in form.split(box)[1][:60]
