"""The admin's English/中文 switch in Chromium: the site had one, the admin only followed the
browser's Accept-Language, so an editor had to change the browser to read it in Chinese."""

import pytest

from tests.agent.admin.test_screenshots import SCREENSHOTS

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_the_switch_works_on_the_sign_in_page_and_after(live_server, showcase, browser):
    page = browser.new_page(viewport={"width": 1280, "height": 800}, locale="en-US")
    page.goto(f"{live_server.url}/admin/login/?next=/admin/")
    switch = page.locator("#header .dc-lang-switch")
    assert switch.locator("[aria-current=true]").text_content() == "English"

    switch.get_by_role("button", name="中文").click()
    page.wait_for_selector("label[for=id_username]:has-text('用户名')")
    assert "/admin/login/" in page.url  # the same page, in the other language
    page.fill("#id_username", "editor")
    page.fill("#id_password", "a-long-password")
    page.click("input[type=submit]")
    page.wait_for_url(f"{live_server.url}/admin/")
    assert page.locator("#site-name").text_content().strip() == "Docent 管理后台"
    page.screenshot(path=str(SCREENSHOTS / "admin-language-zh.png"))

    page.goto(f"{live_server.url}/admin/agent/conversation/dashboard/")
    page.locator("#header .dc-lang-switch").get_by_role("button", name="English").click()
    page.wait_for_selector("h1:has-text('Assistant dashboard')")
    assert page.url == f"{live_server.url}/admin/agent/conversation/dashboard/"
    page.close()


def test_on_a_phone_the_switch_fits_the_header(live_server, showcase, browser):
    page = browser.new_page(viewport={"width": 375, "height": 740}, locale="zh-CN")
    page.goto(f"{live_server.url}/admin/login/")
    page.locator("#header .dc-lang-switch").get_by_role("button", name="English").click()
    page.wait_for_selector("label[for=id_username]:has-text('Username')")

    assert page.locator("#header .dc-lang-switch").is_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= 375
    page.close()
