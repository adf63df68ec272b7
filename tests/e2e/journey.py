"""The researcher's journey, walked in a real browser against any running Discern.

Log in, create a study, create accounts for two annotators and an expert, upload a file, add
it to the study, generate rule-based perturbations, vet, compare and vote as the other
people, run a metric judge, open every report and download every format. Every answer the
browser gets must be a success (2xx or a redirect), and no page it shows may be wider than the
window; `Journey.failures` lists the others.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from playwright.sync_api import Browser, Page, expect

from tests.conftest import ARTIFACTS
from tests.e2e.screens import overflow

REPOSITORY_NOTES = re.compile(r"docs/\w+\.md|methods §\d")

ITEMS = [
    {
        "id": f"j{n}",
        "source": "A council meeting about the new bridge.",
        "original": f"The council approved the bridge on day {n}. Work starts next spring, "
        "and the cost is shared by the two towns.",
    }
    for n in range(3)
]
WAIT = 90_000


def pick(page: Page, label: str) -> None:
    """Check a kind or criterion, opening its group first (groups start closed)."""
    box = page.get_by_label(label, exact=True)
    group = page.locator("details.check-group").filter(has=box)
    if group.get_attribute("open") is None:
        group.locator("summary").click()
    box.check()


@dataclass
class Journey:
    browser: Browser
    base: str
    researcher_password: str
    shots: str = "journey"
    failures: list[str] = field(default_factory=list)
    study_id: int = 0
    passwords: dict[str, str] = field(default_factory=dict)

    # --- plumbing ------------------------------------------------------------------------

    def new_page(self) -> Page:
        page = self.browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
        page.set_default_timeout(20_000)
        page.on("response", self._check)
        return page

    def _check(self, response) -> None:
        if response.status >= 400:
            self.failures.append(f"{response.status} {response.request.method} {response.url}")

    def shot(self, page: Page, name: str) -> None:
        """A screenshot; a page wider than the window is a failure (wide tables scroll in
        their own box), and so is text naming a file or section of the repository's docs, which
        a user of the site cannot open."""
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"{self.shots}-{name}.png"), full_page=True)
        wider = overflow(page)
        if wider > 0:
            self.failures.append(f"{name}: {page.url} is {wider} px wider than the window")
        for note in REPOSITORY_NOTES.findall(page.inner_text("body")):
            self.failures.append(f"{name}: {page.url} points to the repository's {note!r}")

    def log_in(self, page: Page, username: str, password: str) -> None:
        page.goto(f"{self.base}/accounts/login/")
        page.fill("input[name=username]", username)
        page.fill("input[name=password]", password)
        page.click("button[type=submit]")
        page.wait_for_url(f"{self.base}/")

    def download(self, page: Page, url: str) -> bytes:
        response = page.request.get(url if url.startswith("http") else self.base + url)
        if not response.ok:
            self.failures.append(f"{response.status} download {url}")
        return response.body()

    def study_url(self, rest: str = "") -> str:
        return f"{self.base}/studies/{self.study_id}/{rest}"

    # --- the journey ---------------------------------------------------------------------

    def walk(self) -> None:
        researcher = self.new_page()
        self.log_in(researcher, "researcher", self.researcher_password)
        self.create_study(researcher)
        self.create_accounts(researcher, ["j-ann1", "j-ann2"], "annotator")
        self.create_accounts(researcher, ["j-exp"], "expert")
        self.upload(researcher)
        self.generate(researcher)
        for name in ("j-ann1", "j-ann2"):
            self.vet_and_compare(name)
        self.vote("j-exp")
        self.judge(researcher)
        self.reports(researcher)
        self.raw_data(researcher)

    def create_study(self, page: Page) -> None:
        """Through the new-study steps; the review's counts are what the study then has."""
        page.click("#new-study")
        page.fill("input[name=name]", "Journey study")
        page.fill("textarea[name=description]", "Do metric judges notice spelling mistakes?")
        page.fill("textarea[name=guidelines]", "Judge only the change the kind describes.")
        self.shot(page, "study-new-data")
        self.next_step(page, "Perturbation kinds")
        pick(page, "Spelling mistake")
        self.shot(page, "study-new-kinds")
        self.next_step(page, "Criteria")
        pick(page, "Coherence — default")
        pick(page, "Fluency — default")
        self.shot(page, "study-new-criteria")
        self.next_step(page, "Human work")
        self.next_step(page, "People")
        self.next_step(page, "Review")
        self.shot(page, "study-new-review")
        review = {
            key: int(page.locator(f'#plan-preview td[data-count="{key}"]').inner_text())
            for key in ("perturbations", "vettings", "comparisons")
        }
        page.click("#study-form button[value=create]")
        page.wait_for_url("**/members/")
        self.study_id = int(re.search(r"/studies/(\d+)/", page.url).group(1))
        page.goto(self.study_url())
        expect(page.locator("#perturbation-count")).to_have_text(str(review["perturbations"]))
        expect(page.locator("#stage-vetting dd").nth(2)).to_have_text(str(review["vettings"]))
        planned = page.locator("#stage-comparisons dd").nth(3)
        expect(planned).to_have_text(str(review["comparisons"]))  # none before vetting

    def next_step(self, page: Page, title: str) -> None:
        page.click("#study-form p.actions button[value=next]")
        expect(page.locator("#step-title")).to_contain_text(title)

    def create_accounts(self, page: Page, names: list[str], role: str) -> None:
        page.goto(self.study_url("members/"))
        page.fill("#create-members textarea[name=names]", "\n".join(names))
        page.select_option("#create-members select[name=role]", role)
        page.check("#create-members input[name=access][value=password]")
        page.click("#create-members button[type=submit]")
        rows = page.locator("#new-accounts tbody tr")
        expect(rows).to_have_count(len(names))
        for n in range(len(names)):
            cells = rows.nth(n).locator("td")
            self.passwords[cells.nth(0).inner_text()] = cells.nth(2).inner_text().strip()
        self.shot(page, f"accounts-{role}")
        page.click("text=Back to the people")
        for name in names:
            expect(page.locator(f"#member-{name}")).to_be_visible()

    def upload(self, page: Page) -> None:
        page.goto(f"{self.base}/imports/new/")
        rows = "".join(json.dumps(item) + "\n" for item in ITEMS).encode()
        page.set_input_files(
            "input[name=file]",
            files=[{"name": "journey.jsonl", "mimeType": "application/json", "buffer": rows}],
        )
        page.fill("input[name=dataset]", "Journey data")
        page.select_option("select[name=task]", "summarization")
        page.click("main button[type=submit]")
        expect(page.locator(".status-done")).to_be_visible(timeout=WAIT)
        page.goto(self.study_url("edit/"))
        page.get_by_label("Journey data").check()
        page.click("text=Save the study")
        page.wait_for_url(self.study_url())

    def generate(self, page: Page) -> None:
        page.click("#stage-perturbations a.next")
        page.wait_for_url("**/generate/**")
        page.select_option("select[name=dataset]", label="Journey data")
        expect(page.locator("select[name=study] option:checked")).to_have_text("Journey study")
        pick(page, "Spelling mistake")
        self.shot(page, "generate")
        page.click("main button[type=submit]")
        expect(page.locator(".status-done")).to_be_visible(timeout=WAIT)
        page.goto(self.study_url())
        expect(page.locator("#stage-vetting dd").nth(2)).to_have_text("3")
        self.shot(page, "study-before-work")

    def _work(self, page: Page, key: str) -> int:
        done = 0
        while True:
            page.wait_for_selector('body[data-settled="1"]', state="attached")
            if page.locator("#no-work").count():
                return done
            count = int(page.locator("#my-count").inner_text())
            page.keyboard.press(key)
            expect(page.locator("#my-count")).to_have_text(str(count + 1))
            done += 1

    def vet_and_compare(self, name: str) -> None:
        page = self.new_page()
        self.log_in(page, name, self.passwords[name])
        page.goto(self.study_url())
        page.click("text=Vet perturbations")
        page.wait_for_url("**/vet/")
        self._work(page, "1")
        page.goto(self.study_url("compare/"))
        self._work(page, "a")
        self.shot(page, f"{name}-done")
        page.context.close()

    def vote(self, name: str) -> None:
        page = self.new_page()
        self.log_in(page, name, self.passwords[name])
        page.goto(self.study_url())
        page.click("text=Expert survey")
        page.wait_for_url("**/survey/")
        total = page.locator("form.card").count()
        assert total >= 1
        for n in range(total):
            page.keyboard.press("1")
            expect(page.locator("#answered")).to_have_text(str(n + 1))
            page.keyboard.press("j")
        page.context.close()

    def judge(self, page: Page) -> None:
        page.goto(self.study_url())
        page.click("#stage-judging a.next")
        page.select_option("select[name=judge]", label="BLEU")
        expect(page.locator("select[name=study] option:checked")).to_have_text("Journey study")
        page.fill("input[name=label]", "BLEU on the journey")
        page.click("text=Start the run")
        page.wait_for_url("**/judging/runs/*/")
        expect(page.locator("#run-status")).to_have_text("Done", timeout=WAIT)
        run_id = re.search(r"/runs/(\d+)/", page.url).group(1)
        for file_format in ("csv", "jsonl"):
            self.download(page, f"/judging/runs/{run_id}/calls.{file_format}")
        page.goto(self.study_url())
        self.shot(page, "study-after-work")

    def reports(self, page: Page) -> None:
        page.goto(self.study_url())
        page.click("#stage-reports a.next")
        links = page.locator("main a[href*='/reports/']")
        urls = {links.nth(n).get_attribute("href") for n in range(links.count())}
        pages = sorted(u for u in urls if not u.endswith(".html"))
        assert len(pages) >= 4, pages  # three study reports and one per judge run
        for url in pages:
            page.goto(self.base + url)
            expect(page.locator("#report h1")).to_be_visible(timeout=WAIT)
            self.shot(page, "report-" + re.sub(r"\W+", "-", url.split("/reports/")[1]).strip("-"))
            downloads = page.locator("#report a[href*='.csv'], #report a[href*='.json']")
            hrefs = {downloads.nth(n).get_attribute("href") for n in range(downloads.count())}
            assert hrefs, f"no downloads on {url}"
            for href in hrefs:
                self.download(page, href)
            name = url.split("/reports/")[1].split("/")[0]
            query = url.split("?", 1)[1] if "?" in url else ""
            api = f"/api/v1/studies/{self.study_id}/reports/{name}/" + (
                f"?{query}" if query else ""
            )
            self.download(page, api)
        self.download(page, self.study_url("reports/all.html"))

    def raw_data(self, page: Page) -> None:
        page.goto(self.study_url())
        links = page.locator("#raw-data a[download]")
        # seven tables, CSV and JSONL each (best-worst's two, the recruited participants too)
        assert links.count() == 14
        assert page.locator("#raw-data a[href$='data/best-worst-scores.csv']").count() == 1
        for n in range(links.count()):
            href = links.nth(n).get_attribute("href")
            body = self.download(page, href)
            assert body or href.endswith(".jsonl"), f"{href}: a CSV has at least its header"
        page.goto(f"{self.base}/datasets/")
        exports = page.locator("tr", has_text="Journey data").locator("a[href*='/export.']")
        assert exports.count() == 2
        for n in range(2):
            assert self.download(page, exports.nth(n).get_attribute("href"))
        judgements = self.download(page, self.study_url("data/judgements.jsonl"))
        kinds = {json.loads(line)["judgement"] for line in judgements.splitlines()}
        assert kinds >= {"vetting", "comparison", "expert-vote"}, kinds
