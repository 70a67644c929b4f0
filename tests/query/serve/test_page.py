"""The evidence page in a real headless Chromium (Debian's ``chromium``, driven by Playwright through
``executable_path``; no browser is downloaded): type a question, wait for the answer, check the answer
against the raw dump, the mode, and a supporting evidence row with the statement's provenance."""

from __future__ import annotations

import os
import shutil

import pytest

from tests.query.serve.conftest import running

pytestmark = pytest.mark.slow

BROWSER_ENV = "HQA_CHROMIUM"
BELGIUM, AREA = "Q31", "P2046"


def chromium() -> str:
    """The browser: ``$HQA_CHROMIUM``, else ``chromium`` on the PATH (Debian's package)."""
    path = os.environ.get(BROWSER_ENV) or shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        pytest.skip(f"no Chromium: apt-get install chromium chromium-driver, or set {BROWSER_ENV}")
    return path


def test_the_page_answers_with_mode_and_provenance(make_app, raw_dump) -> None:
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright (the dev extra)")
    claims = [c for c in raw_dump[BELGIUM]["claims"][AREA] if c["rank"] != "deprecated"]
    statement_ids = {c["id"] for c in claims}
    areas = [float(c["mainsnak"]["datavalue"]["value"]["amount"]) for c in claims]
    served = running(make_app())
    url = next(served)
    try:
        with sync_api.sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=chromium(), headless=True)
            try:
                page = browser.new_page()
                page.goto(url)
                assert page.title() == "hqa — evidence"
                page.fill("#question", "What is the area of Belgium?")
                page.click("#submit")
                page.wait_for_selector("#result:not([hidden])", timeout=120_000)
                answer = float(page.text_content("#answer").replace(",", ""))
                assert any(abs(answer - area) <= 1e-6 * area for area in areas)
                assert page.text_content("#mode") == "kg-lookup"
                assert page.text_content("#version") == "index v1"
                supporting = page.locator("#evidence tr.supporting")
                assert supporting.count() >= 1
                assert supporting.first.locator("td.mark").text_content() == "✓"
                provenance = supporting.first.locator("td.provenance").text_content()
                assert any(f"statement {sid} ({AREA})" in provenance for sid in statement_ids), provenance
                assert "page 'Belgium'" in provenance
                steps = page.locator("#route li").all_text_contents()
                assert any(step.startswith("kg-lookup — answered") for step in steps)

                page.fill("#question", " ")  # a refused question shows the server's error, not a crash
                page.click("#submit")
                page.wait_for_selector("#status.error")
                assert page.text_content("#status").startswith("question_refused:")
            finally:
                browser.close()
    finally:
        served.close()
