"""The SDK driven from Selenium + chromedriver, as teams with Selenium suites would."""

from __future__ import annotations

import shutil

import pytest
from browser_helpers import ref
from mao_embed.testing import CHROMIUM_ARGS, chromium_path, embed_snippet, page_html

pytestmark = pytest.mark.selenium

CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"


@pytest.fixture
def selenium_driver():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = chromium_path()
    for arg in CHROMIUM_ARGS:
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_script_timeout(90)
    yield driver
    driver.quit()


def test_selenium_page_fill_updates_the_field(selenium_driver, mao_pages, mao_backend, mao_agent):
    token = mao_backend.issue_token("selenium-user", "test-agent", origin=mao_pages.origin)
    snippet = embed_snippet(
        mao_backend.url, agent_id="test-agent", user_id="selenium-user", token=token
    )
    url = mao_pages.add(
        "/selenium.html", page_html('<label>City <input id="city"></label>', snippet)
    )
    before = {s["sessionId"] for s in mao_agent.sessions()}

    selenium_driver.get(url)
    # SPEC E6: the page shows the launcher; the user opens the panel, which boots the runtime.
    host = selenium_driver.find_element("css selector", "mao-embed-host")
    host.shadow_root.find_element("css selector", "button.open").click()
    ready = selenium_driver.execute_async_script(
        "const done = arguments[arguments.length - 1]; "
        "MaoChat.ready.then((info) => done(info.trigger), (e) => done(String(e)));"
    )
    assert ready == "panel"
    session = mao_agent.wait_for_session(url=url, exclude=before)
    # As the user: grant full access in the SDK panel (open shadow root) with a real click.
    host.shadow_root.find_element("css selector", "[role=radio][data-level=full]").click()

    inspected = mao_agent.call(session["sessionId"], "page_inspect")
    assert inspected["success"], inspected
    filled = mao_agent.call(
        session["sessionId"], "page_fill", {**ref(inspected["result"], "City"), "value": "Hangzhou"}
    )
    assert filled["success"], filled
    assert selenium_driver.find_element("id", "city").get_attribute("value") == "Hangzhou"
