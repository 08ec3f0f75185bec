"""What a person does in the playground beyond one pipeline, in a real headless
Chromium by Playwright: a watermark from a long URL and from an upload, presets, an
output's placeholders, a dry run's predicted failure, a scenes edit's chapters, and the
/docs page.

Usage: playground_tasks.py SCENARIO BASE_URL TOKEN [ARG...]
  overlay PHOTO LOGO LONG_URL MISSING_URL   placeholders PHOTO   failure CLIP   chapters CLIP
  presets   docs
Prints one JSON line of what it saw; any failed expectation raises.
"""

import json
import os
import sys

from playwright.sync_api import expect, sync_playwright

scenario, base, token, *args = sys.argv[1:]
chromium = os.environ.get("MEDIAEDIT_TEST_CHROMIUM", "/usr/bin/chromium")
expect.set_options(timeout=60_000)
seen = {}


def shot(page, name):
    """A screenshot to MEDIAEDIT_SCREENSHOTS, when it names a folder."""
    folder = os.environ.get("MEDIAEDIT_SCREENSHOTS")
    if folder:
        page.screenshot(path=os.path.join(folder, name), full_page=True)


def open_page(browser):
    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.add_init_script(f"localStorage.setItem('mediaedit.token', {json.dumps(token)})")
    page.goto(base + "/")
    expect(page.locator("body")).to_have_attribute("data-ready", "true")
    expect(page.locator("#token-state")).to_have_text("Connected")
    return page, errors


def upload_source(page, path):
    with page.expect_file_chooser() as chooser:
        page.click("#dropzone")
    chooser.value.set_files(path)
    expect(page.locator(".source-meta").last).to_contain_text("uploaded")


def add_command(page, name):
    page.select_option("#command-picker", name)
    page.click("#add-command")


def run_to_done(page):
    """Runs the pipeline; the id of the edit it made once that edit is done (not the
    id of an edit shown before, which may be done already)."""
    shown = page.locator("#edit-status + code.edit-id")
    before = shown.inner_text() if shown.count() else None
    expect(page.locator("#run")).to_be_enabled()
    page.click("#run")
    if before is not None:
        expect(shown).not_to_have_text(before)
    expect(page.locator("#edit-status")).to_have_text("done")
    return shown.inner_text()


def overlay(page):
    photo, logo, long_url, missing_url = args
    upload_source(page, photo)
    add_command(page, "watermark")
    field = page.locator("#option-overlay")
    seen["overlay_hint"] = page.locator(".option.file .hint").inner_text()
    # An overlay the edit could not fetch is a predicted failure.
    field.fill(missing_url)
    expect(page.locator("#plan .error-box")).to_contain_text("source_http_error")
    expect(page.locator("#run")).to_be_disabled()
    seen["missing_overlay"] = page.locator("#plan .error-box").inner_text()
    # A URL of any length is kept whole, in the field and in the request.
    field.fill(long_url)
    seen["field_after_typing"] = field.input_value()
    expect(page.locator("#plan")).to_contain_text("Dry run")
    seen["curl_has_url"] = long_url in page.locator("#request-text").inner_text()
    seen["url_edit"] = run_to_done(page)
    # A file uploaded for the option is the option's value, not another source.
    with page.expect_file_chooser() as chooser:
        page.click("#option-overlay-upload-button")
    chooser.value.set_files(logo)
    page.wait_for_function("() => document.getElementById('option-overlay').value.includes('/v1/uploads/')")
    seen["logo_src"] = field.input_value()
    seen["sources"] = page.locator(".source").count()
    seen["picked_label"] = page.locator("#option-overlay-upload option:checked").inner_text()
    # Chosen from the session's uploads after typing something else.
    field.fill("https://example.com/other.png")
    page.select_option("#option-overlay-upload", label=os.path.basename(logo))
    seen["field_after_pick"] = field.input_value()
    seen["upload_choices"] = page.locator("#option-overlay-upload option").all_inner_texts()
    shot(page, "playground-overlay.png")
    expect(page.locator("#plan")).to_contain_text("Dry run")
    seen["upload_edit"] = run_to_done(page)


def placeholders(page):
    upload_source(page, args[0])
    add_command(page, "image-to-webp")
    expect(page.locator("#plan")).to_contain_text("Dry run")
    # The output's preview is held back, so the placeholders are seen while it loads.
    held = []
    page.route("**/v1/files/**", lambda route: held.append(route))
    page.click("#run")
    expect(page.locator("#edit-status")).to_have_text("done")
    seen["edit"] = page.locator("#edit-status + code.edit-id").inner_text()
    canvas = page.locator("#outputs canvas.blurhash")
    expect(canvas).to_be_visible()
    expect(canvas).to_have_attribute("data-painted", "true")
    seen["image_pending"] = page.locator("#outputs img.pending").count()
    seen["blurhash"] = canvas.get_attribute("data-blurhash")
    seen["canvas"] = canvas.evaluate("c => Array.from(c.getContext('2d').getImageData(0, 0, c.width, c.height).data)")
    swatch = page.locator("#outputs .swatch")
    expect(swatch).to_be_visible()
    seen["swatch_colour"] = swatch.evaluate("s => getComputedStyle(s).backgroundColor")
    seen["swatch_box"] = swatch.evaluate("s => [s.offsetWidth, s.offsetHeight]")
    seen["colour_text"] = page.locator("#outputs .dominant-value").inner_text()
    for route in held:
        route.continue_()
    page.unroute("**/v1/files/**")
    expect(page.locator("#outputs img:not(.pending)")).to_have_count(1)
    shot(page, "playground-placeholders.png")


def failure(page):
    upload_source(page, args[0])
    add_command(page, "trim-video")
    page.fill("#option-start", "20")
    box = page.locator("#plan .error-box")
    expect(box).to_contain_text("invalid_parameter")
    expect(page.locator("#run")).to_be_disabled()
    seen["failure"] = box.inner_text()
    seen["run_hint"] = page.locator("#run-hint").inner_text()
    seen["code_in_failure"] = page.locator("#plan .error-box .error-detail code").count()
    # Fixed, it may run.
    page.fill("#option-start", "1")
    expect(page.locator("#plan")).to_contain_text("Dry run")
    expect(page.locator("#run")).to_be_enabled()
    # A storyboard is predicted as its sheet and its VTT.
    page.click("button[aria-label='Remove trim-video']")
    add_command(page, "video-storyboard")
    expect(page.locator("#plan")).to_contain_text("VTT")
    seen["storyboard_plan"] = page.locator("#plan li").inner_text()


def chapters(page):
    upload_source(page, args[0])
    add_command(page, "video-scenes")
    run_to_done(page)
    items = page.locator("#outputs .chapters .chapter")
    expect(items.first).to_be_visible()
    seen["chapters"] = items.all_inner_texts()
    seen["tracks"] = page.locator("#outputs video track[kind='chapters']").count()
    # The track's cues are the chapters, once the video has loaded it.
    page.wait_for_function("() => { const v = document.querySelector('#outputs .chapters-preview video');"
                           " return v && v.textTracks.length && v.textTracks[0].cues && v.textTracks[0].cues.length; }")
    seen["track_cues"] = page.evaluate("document.querySelector('#outputs .chapters-preview video').textTracks[0].cues.length")
    # A chapter pressed seeks the video to its start.
    items.nth(2).click()
    seen["seeked_to"] = page.evaluate("document.querySelector('#outputs .chapters-preview video').currentTime")
    seen["third_start"] = float(items.nth(2).get_attribute("data-start"))
    shot(page, "playground-chapters.png")


def presets(page):
    add_command(page, "resize-image")
    page.fill("#option-scale", "0.5")
    page.select_option("#option-format", "png")
    page.fill("#preset-name", "half-png")
    page.click("#save-preset")
    item = page.locator("#preset-list li[data-preset='half-png']")
    expect(item).to_contain_text("resize-image")
    seen["listed"] = item.inner_text()
    shot(page, "playground-presets.png")
    seen["stored"] = page.request.get(base + "/v1/presets", headers={"Authorization": "Bearer " + token}).json()
    # Emptied, then filled again from the preset.
    page.click("button[aria-label='Remove resize-image']")
    expect(page.locator(".step")).to_have_count(0)
    page.click("button[aria-label='Apply preset half-png']")
    seen["steps_applied"] = page.locator(".step-name code").all_inner_texts()
    seen["scale_applied"] = page.input_value("#option-scale")
    seen["format_applied"] = page.input_value("#option-format")
    page.click("button[aria-label='Delete preset half-png']")
    expect(item).to_have_count(0)
    seen["after_delete"] = page.request.get(base + "/v1/presets", headers={"Authorization": "Bearer " + token}).json()


def docs(page):
    page.goto(base + "/docs")
    expect(page.locator("#operations details").first).to_be_visible()
    page.evaluate("() => document.querySelectorAll('details').forEach((d) => d.open = true)")
    shot(page, "docs.png")
    text = page.locator("body").inner_text()
    seen["backticks"] = text.count("`")
    seen["rust_paths"] = [line for line in text.splitlines() if "::" in line]
    seen["code_elements"] = page.locator("main code").count()
    seen["description_code"] = page.locator("#description code").all_inner_texts()
    seen["commands_enum"] = "resize-image" in text and "video-storyboard" in text


with sync_playwright() as p:
    browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
    page, script_errors = open_page(browser)
    {"overlay": overlay, "placeholders": placeholders, "failure": failure, "chapters": chapters, "presets": presets, "docs": docs}[scenario](page)
    seen["script_errors"] = script_errors
    browser.close()

print(json.dumps(seen))
