"""The playground at `/`, driven in a real headless Chromium by Playwright, as a person
would use it: token, a dropped file uploaded with progress, commands picked from what the
page offers, options, a dry run, the run followed live to `done`, the preview checked.

Usage: playground.py BASE_URL TOKEN JPEG_PATH SCREENSHOT_DIR
Screenshots of the main states are written to SCREENSHOT_DIR (docs/ keeps a copy).
Prints one JSON line of what it saw; any failed expectation raises.
"""

import json
import os
import sys

from playwright.sync_api import expect, sync_playwright

base, token, jpeg, shots = sys.argv[1:5]
chromium = os.environ.get("MEDIAEDIT_TEST_CHROMIUM", "/usr/bin/chromium")
expect.set_options(timeout=60_000)
seen = {}


def offered(page):
    return page.locator("#command-picker option").evaluate_all("os => os.map(o => o.value)")


def add_command(page, name):
    page.select_option("#command-picker", name)
    page.click("#add-command")


with sync_playwright() as p:
    browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
    context = browser.new_context(viewport={"width": 1280, "height": 860}, device_scale_factor=1)
    page = context.new_page()
    script_errors = []
    page.on("pageerror", lambda e: script_errors.append(str(e)))
    page.goto(base + "/")
    expect(page.locator("body")).to_have_attribute("data-ready", "true")
    # Nothing can run without a token, and the page says so.
    expect(page.locator("#run")).to_be_disabled()
    expect(page.locator("#run-hint")).to_contain_text("token")

    # The token, entered once, kept in the browser.
    page.fill("#token", token)
    page.press("#token", "Enter")
    expect(page.locator("#token-state")).to_have_text("Connected")
    seen["stored_token"] = page.evaluate("localStorage.getItem('mediaedit.token')") == token

    # The catalog offers every command before a source narrows it.
    seen["offered_without_source"] = sorted(offered(page))

    # A file chosen through the drop zone (the file picker behind it) is uploaded.
    with page.expect_file_chooser() as chooser:
        page.click("#dropzone")
    chooser.value.set_files(jpeg)
    expect(page.locator(".source-meta")).to_contain_text("uploaded")
    expect(page.locator(".source-meta")).to_contain_text("JPEG")
    seen["offered_for_jpeg"] = sorted(offered(page))

    # A pipeline, each step picked from what the one before makes.
    add_command(page, "resize-image")
    add_command(page, "image-to-video")
    seen["offered_after_video"] = sorted(offered(page))
    add_command(page, "video-to-gif")
    seen["steps"] = page.locator(".step-name code").all_inner_texts()

    # Options with their ranges: out of range is refused on the page itself...
    page.fill("#option-scale", "40")
    expect(page.locator("#option-scale")).to_have_attribute("aria-invalid", "true")
    expect(page.locator("#run")).to_be_disabled()
    page.fill("#option-scale", "0.5")
    expect(page.locator("#option-scale")).to_have_attribute("aria-invalid", "false")
    # `quality` takes a whole number or `auto` (offered as it is typed), nothing else.
    page.fill("#option-quality", "auto")
    expect(page.locator("#option-quality")).to_have_attribute("aria-invalid", "false")
    expect(page.locator("#option-quality-words option")).to_have_attribute("value", "auto")
    page.fill("#option-quality", "best")
    expect(page.locator("#option-quality")).to_have_attribute("aria-invalid", "true")
    page.fill("#option-quality", "")
    # ...and what only the service knows comes back as its errors[], shown by code.
    page.fill("#option-duration", "0.01")
    page.fill("#option-fps", "10")
    expect(page.locator("#plan .error-box")).to_contain_text("option_out_of_range")
    seen["server_error"] = page.locator("#plan .error-box").inner_text()
    page.screenshot(path=os.path.join(shots, "playground-error.png"), full_page=True)
    page.fill("#option-duration", "1")

    # The dry run predicts the outputs; the request is shown as curl.
    expect(page.locator("#plan")).to_contain_text("GIF 320×240")
    seen["curl"] = page.locator("#request-text").inner_text()
    page.screenshot(path=os.path.join(shots, "playground-compose.png"), full_page=True)

    # Run it and follow it live to `done`.
    page.click("#run")
    expect(page.locator("#edit-status")).to_have_text("done")
    preview = page.locator("#outputs img")
    expect(preview).to_have_count(1)
    preview.scroll_into_view_if_needed()
    page.wait_for_function("() => { const i = document.querySelector('#outputs img'); return i && i.complete && i.naturalWidth > 0; }")
    seen["preview"] = preview.evaluate("i => [i.naturalWidth, i.naturalHeight]")
    seen["download"] = page.locator("#outputs a").get_attribute("href")
    seen["caption"] = page.locator("#outputs figcaption").inner_text()
    expect(page.locator("#recent-list .badge").first).to_have_text("done")
    page.screenshot(path=os.path.join(shots, "playground-done.png"), full_page=True)

    # The token survives a reload.
    page.reload()
    expect(page.locator("#token-state")).to_have_text("Connected")
    seen["token_after_reload"] = page.input_value("#token") == token

    # Keyboard only: Tab reaches the drop zone, and Enter on the picker's Add button works.
    page.focus("#url-input")
    page.keyboard.type(base + "/v1/openapi.json")
    page.keyboard.press("Enter")
    expect(page.locator(".source")).to_have_count(1)
    seen["script_errors"] = script_errors
    browser.close()

print(json.dumps(seen))
