"""page_screenshot in real Chromium (SPEC X1-X3, P5, E3): the SDK UI is absent,
sensitive and private fields are masked, what cannot be drawn is listed, size and byte cap
hold, failures are screenshot_failed and leave observation working, nothing is stored."""

from __future__ import annotations

import base64
import io
from collections.abc import Iterator

import numpy as np
import pytest
from mao_embed.testing import PageServer
from PIL import Image
from screenshot_helpers import decode, reference

# A colour nothing else on these pages uses: the SDK host painted with it must leave no pixel.
SDK_COLOUR = (255, 0, 254)
SDK_PAINTED = """<style>mao-embed-host { display:block !important;
  background: rgb(255,0,254) !important;
  width: 320px !important; height: 220px !important; }</style>"""

SENSITIVE_FORM = """
<style>body{font:15px sans-serif;margin:20px}
  input{font:28px monospace;width:520px;height:46px} label{display:block;margin:12px 0}</style>
<label>Name <input id="name" value="Grace Hopper"></label>
<label>Card number <input id="card" autocomplete="cc-number" value="4111 1111 1111 1111"></label>
<label>Password <input id="pw" type="password" value="hunter2hunter2"></label>
<label>One-time code <input id="otp" autocomplete="one-time-code" value="908172"></label>
<label>Account note <input id="note" data-mao-private value="WWWW MMMM WWWW"></label>
<div id="balance" data-mao-ignore
  style="font:32px sans-serif;padding:10px;background:#ffd">Balance: 98,765.43</div>
"""
SENSITIVE_IDS = ("card", "pw", "otp")
OWNER_MARKED_IDS = ("note", "balance")


@pytest.fixture(scope="module")
def other_origin() -> Iterator[PageServer]:
    server = PageServer().start()
    server.add(
        "/pic.svg",
        '<svg xmlns="http://www.w3.org/2000/svg" width="80" height="60"><rect width="80" '
        'height="60" fill="#0a0"/></svg>',
        {"content-type": "image/svg+xml"},
    )
    server.add("/frame.html", "<!doctype html><p>Another origin</p>")
    yield server
    server.stop()


def _shot(embedded, **args):
    result = embedded.call("page_screenshot", **args)
    assert result["success"], result
    return result["result"]


def _rect_of(page, element_id: str) -> dict[str, float]:
    return page.evaluate(
        "(id) => { const r = document.getElementById(id).getBoundingClientRect(); return {x: r.x, "
        "y: r.y, width: r.width, height: r.height}; }",
        element_id,
    )


def _covers(region: dict[str, float], rect: dict[str, float], slack: float = 1.0) -> bool:
    return (
        region["x"] <= rect["x"] + slack
        and region["y"] <= rect["y"] + slack
        and region["x"] + region["width"] >= rect["x"] + rect["width"] - slack
        and region["y"] + region["height"] >= rect["y"] + rect["height"] - slack
    )


def _pixels(image: np.ndarray, rect: dict[str, float], inset: int = 2) -> np.ndarray:
    x0, y0 = int(rect["x"]) + inset, int(rect["y"]) + inset
    x1, y1 = int(rect["x"] + rect["width"]) - inset, int(rect["y"] + rect["height"]) - inset
    return image[y0:y1, x0:x1]


def test_the_sdk_panel_contributes_no_pixels(mao_embed):
    # SPEC X1, U2: the SDK host and its shadow DOM are absent from the image, not hidden.
    embedded = mao_embed("<h1>Orders</h1><p>Nothing to see here.</p>", head=SDK_PAINTED)
    page = embedded.page
    page.evaluate("() => { document.querySelector('mao-embed-host').style.visibility = 'visible' }")
    chromium = np.asarray(Image.open(io.BytesIO(page.screenshot())).convert("RGB"))
    painted = np.all(np.abs(chromium.astype(int) - SDK_COLOUR) <= 8, axis=-1).sum()
    assert painted >= 300 * 200, (
        "the test's SDK colour should be visible in Chromium's own screenshot"
    )
    image = decode(_shot(embedded, format="png"))
    near = np.all(np.abs(image.astype(int) - SDK_COLOUR) <= 40, axis=-1).sum()
    assert near == 0
    # Absent, not an invisible spacer: where the panel was, the page shows through.
    assert np.allclose(image[-120:-40, -200:-40], reference(page)[-120:-40, -200:-40], atol=2)


def test_sensitive_and_owner_marked_fields_are_masked_and_their_values_unrecoverable(mao_embed):
    # SPEC X3, P5: every sensitive field's rect is covered by a solid box; page-owner marks too.
    embedded = mao_embed(SENSITIVE_FORM)
    page = embedded.page
    shot = _shot(embedded, format="png")
    image = decode(shot)
    chromium = reference(page)
    regions = shot["maskedRegions"]
    reasons = {}
    for element_id in SENSITIVE_IDS + OWNER_MARKED_IDS:
        rect = _rect_of(page, element_id)
        covering = [r for r in regions if _covers(r["rect"], rect)]
        assert covering, (element_id, rect, regions)
        reasons[element_id] = covering[0]["reason"]
        under = _pixels(image, rect)
        # One solid colour under the mask: no glyph of the value survives.
        assert under.size and (under == under[0, 0]).all(), element_id
        # ...where Chromium's own screenshot shows the value (the field is not empty).
        assert _pixels(chromium, rect).std() > 10, element_id
    assert reasons == {
        "card": "sensitive",
        "pw": "sensitive",
        "otp": "sensitive",
        "note": "private",
        "balance": "not_collectable",
    }
    # The ordinary field is drawn as it is.
    name = _rect_of(page, "name")
    assert not any(_covers(r["rect"], name) for r in regions)
    assert np.abs(_pixels(image, name).astype(int) - _pixels(chromium, name).astype(int)).mean() < 3


def test_regions_it_cannot_draw_are_listed_with_their_rects(mao_embed, other_origin):
    # Honest coverage: cross-origin frames, tainting images, tainted canvases.
    body = f"""
    <style>body{{margin:20px}} iframe,img,canvas{{margin:8px;vertical-align:top}}</style>
    <iframe id="xframe" src="{other_origin.origin}/frame.html"
      style="width:200px;height:100px"></iframe>
    <iframe id="sandboxed" sandbox srcdoc="<p>opaque origin</p>"
      style="width:160px;height:90px"></iframe>
    <img id="ximg" src="{other_origin.origin}/pic.svg" width="80" height="60">
    <canvas id="tainted" width="120" height="80"></canvas>
    <canvas id="clean" width="120" height="80"></canvas>
    <script>
      const pic = new Image();
      pic.onload = () => {{
        document.getElementById('tainted').getContext('2d').drawImage(pic, 0, 0);
        document.body.dataset.drawn = '1';
      }};
      pic.src = "{other_origin.origin}/pic.svg";
      const clean = document.getElementById('clean').getContext('2d');
      clean.fillStyle = '#36c'; clean.fillRect(0, 0, 120, 80);
    </script>
    """
    embedded = mao_embed(body)
    page = embedded.page
    page.wait_for_function(
        "() => document.body.dataset.drawn === '1' && document.getElementById('ximg').complete"
    )
    shot = _shot(embedded)
    listed = {}
    for region in shot["unrenderedRegions"]:
        listed.setdefault(region["kind"], []).append(region["rect"])
    expected = {
        "xframe": "cross_origin_frame",
        "sandboxed": "cross_origin_frame",
        "ximg": "cross_origin_image",
        "tainted": "tainted_canvas",
    }
    for element_id, kind in expected.items():
        rect = _rect_of(page, element_id)
        assert any(_covers(r, rect) and _covers(rect, r) for r in listed.get(kind, [])), (
            element_id,
            kind,
            listed,
        )
    clean = _rect_of(page, "clean")
    assert not any(_covers(r, clean) for rects in listed.values() for r in rects)
    assert sum(len(v) for v in listed.values()) == 4
    # The clean canvas is copied: its blue block is in the image. (Where exactly may move by
    # a few pixels: the stand-ins of the surfaces on its line are boxes, not the originals.)
    image = decode(_shot(embedded, format="png"))
    blue = np.all(np.abs(image.astype(int) - (0x33, 0x66, 0xCC)) <= 2, axis=-1).sum()
    assert blue >= 0.95 * 120 * 80


def test_a_refused_export_is_screenshot_failed_and_observation_keeps_working(mao_embed):
    # SPEC X2: what a tainted canvas does on export (SecurityError) becomes screenshot_failed
    # with the reason; it never breaks DOM observation. The page makes every canvas export
    # refuse the way Chromium refuses a tainted one.
    refuse = """<script>HTMLCanvasElement.prototype.toDataURL = function () {
      throw new DOMException("Failed to execute 'toDataURL' on 'HTMLCanvasElement': "
        + "Tainted canvases may not be exported.", "SecurityError"); };</script>"""
    embedded = mao_embed("<button>Pay</button><p>Text</p>", head=refuse)
    result = embedded.call("page_screenshot")
    assert result["success"] is False
    assert result["error"]["code"] == "screenshot_failed"
    assert "Tainted canvases may not be exported" in result["error"]["message"]
    assert result["error"]["details"]["reason"] in ("export_refused", "render_failed")
    snapshot = embedded.inspect()
    assert [e["label"] for e in snapshot["elements"]] == ["Pay"]


def test_output_size_format_and_metadata(mao_embed):
    # Output: longest side capped by maxWidth, format honoured, geometry reported.
    rows = "".join(
        f"<p style='margin:0;padding:10px;background:hsl({i * 40},60%,85%)'>Line {i}</p>"
        for i in range(80)
    )
    embedded = mao_embed(rows)
    embedded.page.evaluate("() => window.scrollTo(0, 700)")
    shot = _shot(embedded, format="jpeg", maxWidth=640)
    assert (shot["format"], shot["mimeType"], shot["width"], shot["height"], shot["scale"]) == (
        "jpeg",
        "image/jpeg",
        640,
        400,
        0.5,
    )
    assert decode(shot).shape == (400, 640, 3)
    assert shot["viewport"]["scrollY"] == 700 and shot["covers"] == {
        "x": 0,
        "y": 700,
        "width": 1280,
        "height": 800,
    }
    assert shot["bytes"] == len(base64.b64decode(shot["data"]))
    default = _shot(embedded)
    assert (default["format"], default["width"], default["height"]) == ("webp", 1280, 800)
    assert default["bytes"] <= 1_000_000


def test_the_byte_cap_lowers_quality_then_scale_until_the_image_fits(mao_embed):
    # Default cap ~1 MB. Full-viewport noise cannot be compressed: PNG must shrink.
    noise = """<canvas id="n" width="1280" height="800" style="display:block"></canvas><script>
      const c = document.getElementById('n').getContext('2d'); const img = c.createImageData(1280,
        800);
      for (let i = 0; i < img.data.length; i++) {
        img.data[i] = i % 4 === 3 ? 255 : (Math.random() * 256) | 0;
      }
      c.putImageData(img, 0, 0);</script>"""
    embedded = mao_embed(noise, head="<style>body{margin:0}</style>")
    shot = _shot(embedded, format="png")
    assert shot["bytes"] <= 1_000_000
    assert shot["scale"] < 1.0 and shot["width"] == round(1280 * shot["scale"])
    lossy = _shot(embedded, format="webp")
    assert lossy["bytes"] <= 1_000_000 and lossy["quality"] is not None


def test_annotate_draws_the_latest_snapshots_refs_into_the_image_not_the_page(mao_embed):
    # Annotated screenshots: labels in the image, aligned with the refs' rects.
    embedded = mao_embed(
        "<style>button{margin:30px;font-size:20px}</style><button id='a'>Approve</button><button "
        "id='b'>Reject</button>"
    )
    page = embedded.page
    snapshot = embedded.inspect()
    nodes_before = page.evaluate("() => document.querySelectorAll('*').length")
    result = embedded.call("page_screenshot", annotate=True, format="png")
    assert result["success"], result
    shot = result["result"]
    assert result["snapshotId"] == snapshot["snapshotId"]
    by_id = {a["elementId"]: a["rect"] for a in shot["annotations"]}
    assert set(by_id) == {e["elementId"] for e in snapshot["elements"]}
    for element in snapshot["elements"]:
        assert _covers(by_id[element["elementId"]], element["rect"], slack=1.5)
    plain = decode(_shot(embedded, format="png"))
    annotated = decode(shot)
    for rect in by_id.values():
        box = (
            slice(max(int(rect["y"]) - 14, 0), int(rect["y"] + rect["height"])),
            slice(int(rect["x"]), int(rect["x"] + rect["width"])),
        )
        assert np.abs(annotated[box].astype(int) - plain[box].astype(int)).max() > 100
    assert page.evaluate("() => document.querySelectorAll('*').length") == nodes_before


def test_the_library_loads_on_the_first_screenshot_not_at_start_up(mao_embed):
    # It must not slow start-up; it is served by our backend (SPEC E3).
    embedded = mao_embed("<p>Hello</p>")
    loaded = (
        "() => performance.getEntriesByType('resource').map((e) => e.name)"
        ".filter((n) => n.endsWith('/snapdom.mjs'))"
    )
    assert embedded.page.evaluate(loaded) == []
    _shot(embedded)
    urls = embedded.page.evaluate(loaded)
    assert len(urls) == 1 and urls[0].startswith(embedded.backend.url + "/sdk/")


STORAGE_PROBE = """<script>
  window.__storage = { writes: 0, idb: 0, channels: 0, created: new Set(), revoked: 0 };
  for (const name of ['setItem', 'removeItem', 'clear']) {
    const original = Storage.prototype[name];
    Storage.prototype[name] = function (...args) { window.__storage.writes += 1;
      return original.apply(this, args); };
  }
  const open = IDBFactory.prototype.open;
  IDBFactory.prototype.open = function (...args) { window.__storage.idb += 1;
    return open.apply(this, args); };
  const Channel = window.BroadcastChannel;
  window.BroadcastChannel = function (...args) { window.__storage.channels += 1;
    return new Channel(...args); };
  const create = URL.createObjectURL, revoke = URL.revokeObjectURL;
  URL.createObjectURL = (o) => { const u = create(o); window.__storage.created.add(u); return u; };
  URL.revokeObjectURL = (u) => { window.__storage.created.delete(u); window.__storage.revoked += 1;
    return revoke(u); };
</script>"""


def test_nothing_is_stored_and_no_object_url_is_left_behind(mao_embed):
    # SPEC X3: never written to localStorage, sessionStorage, IndexedDB or BroadcastChannel.
    embedded = mao_embed(SENSITIVE_FORM, head=STORAGE_PROBE)
    page = embedded.page
    page.evaluate(
        "() => { const s = window.__storage; s.writes = s.idb = s.channels = s.revoked = 0; "
        "s.created.clear(); }"
    )
    before = page.evaluate("() => [localStorage.length, sessionStorage.length]")
    _shot(embedded)
    _shot(embedded, format="png", annotate=True)
    probe = page.evaluate(
        "() => { const s = window.__storage; return [s.writes, s.idb, s.channels, s.created.size]; "
        "}"
    )
    assert probe == [0, 0, 0, 0]
    assert page.evaluate("() => [localStorage.length, sessionStorage.length]") == before


def _csp(backend, extra: str = "") -> str:
    return (
        f"script-src 'self' 'unsafe-inline' 'wasm-unsafe-eval' {backend.url}; "
        f"connect-src {backend.url} ws://127.0.0.1:{backend.port}; {extra}"
    )


def test_screenshots_work_under_the_documented_csp(mao_embed, mao_backend):
    # README "Content-Security-Policy": the library is a module from the backend (script-src).
    embedded = mao_embed(
        "<h1>Strict page</h1>", headers={"Content-Security-Policy": _csp(mao_backend)}
    )
    shot = _shot(embedded, format="png")
    assert decode(shot)[:100].min() < 100  # the heading's dark pixels are there


def test_a_csp_blocking_data_images_gives_a_readable_screenshot_failed(mao_embed, mao_backend):
    # The library rasterises through a data: SVG image; img-src without data: blocks that.
    embedded = mao_embed(
        "<h1>Strict page</h1>",
        headers={"Content-Security-Policy": _csp(mao_backend, "img-src 'self'")},
    )
    result = embedded.call("page_screenshot")
    assert result["success"] is False and result["error"]["code"] == "screenshot_failed"
    assert "img-src" in result["error"]["message"]
    assert embedded.call("page_inspect")["success"]


SCROLLED_FORM = """
<style>body{font:15px sans-serif;margin:0} input{width:300px;height:30px;display:block}</style>
<span id="pw-label" hidden>Password</span>
<label for="code">验证码</label>
<div style="position:absolute;top:0;left:0;width:50px;height:10px;overflow:hidden">
  <input id="fixed" type="password" value="fixedsecret" style="position:fixed;top:300px;left:700px">
</div>
<div style="height:2000px"></div>
<div><p style="margin:0">CVV</p><div style="height:400px"></div><input id="nearby"
  value="123"></div>
<input id="labelled" aria-labelledby="pw-label" value="hunter2">
<input id="code" value="908172">
<span>Name</span><input id="plain" value="Grace Hopper">
<iframe id="frame" style="width:400px;height:120px;border:0"
  srcdoc="<input type=password value=framesecret>"></iframe>
<div style="height:3000px"></div>
<input id="below" type="password" value="farbelow">
"""


def test_masks_come_from_a_viewport_walk_yet_keep_labels_fixed_fields_and_frames(mao_embed):
    # The mask scan reads only what intersects the viewport, but a field's name sources
    # outside it (a hidden aria-labelledby target, a far label[for], nearby text) still make
    # it sensitive, and a fixed field inside a container scrolled out of view is still drawn.
    embedded = mao_embed(SCROLLED_FORM)
    page = embedded.page
    page.wait_for_function(
        "() => document.getElementById('frame').contentDocument?.querySelector('input')"
    )
    page.evaluate("() => document.getElementById('nearby').scrollIntoView({block: 'start'})")
    shot = _shot(embedded, format="png")
    regions = [r["rect"] for r in shot["maskedRegions"]]
    in_view = page.evaluate(
        "(ids) => ids.map((id) => { const r = document.getElementById(id).getBoundingClientRect();"
        " return r.bottom > 0 && r.top < innerHeight; })",
        ["labelled", "code", "nearby", "fixed", "frame", "plain", "below"],
    )
    assert in_view == [True, True, True, True, True, True, False], (
        "the fixture should scroll these into view"
    )
    for element_id in ("labelled", "code", "nearby", "fixed"):
        rect = _rect_of(page, element_id)
        assert any(_covers(region, rect) for region in regions), (element_id, rect, regions)
    frame = _rect_of(page, "frame")
    assert any(_covers(frame, region, slack=2) and region["width"] > 100 for region in regions), (
        frame,
        regions,
    )
    assert not any(_covers(region, _rect_of(page, "plain")) for region in regions)
    assert len(regions) == 5, regions
