"""What a web page in the user's browser can do to a running fabric: nothing (root, chromium).

The fabric is the session's `ai_zone_small` (conftest's `fabric`); the
attacker is a page served by a local HTTP server of the test's own on
another port, opened in the same chromium, which also holds a logged-in
dashboard tab (the cookie is there to be abused). DNS rebinding is shown
as chromium itself would meet it: `--host-resolver-rules` maps the name
`attacker.example` to 127.0.0.1, so the page at
`http://attacker.example:PORT/` reaches the API's address under the
attacker's name (its Host header) — and is refused. The real dashboard,
opened from the URL `aizone up` printed, still changes the mode and fails
and restores a link (test_dashboard.py does that in full); here the
page's own write is checked to pass the same guard the attacks fail.
"""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from browser_support import CHROMIUM_ARGS, Fabric, chromium_path

from controller.client import ApiClient
from tests.provides import unavailable

pytestmark = pytest.mark.root

ATTACK = """<!doctype html><html><body>
<form id="f" method="POST" action="{api}api/v1/shutdown"></form>
<form id="m" method="POST" action="{api}api/v1/mode" enctype="text/plain">
  <input name='{{"mode": "pin", "x": "' value='"}}'></form>
<script>
window.results = {{}};
async function attempt(name, url, options) {{
  try {{
    const r = await fetch(url, options);
    window.results[name] = "read " + r.status + " " + (await r.text()).slice(0, 80);
  }} catch (e) {{ window.results[name] = "blocked " + e.name; }}
}}
window.run = async () => {{
  await attempt("status", "{api}api/v1/status", {{credentials: "include"}});
  await attempt("no-cors-shutdown", "{api}api/v1/shutdown",
                {{method: "POST", mode: "no-cors", credentials: "include"}});
  await attempt("cors-mode", "{api}api/v1/mode",
                {{method: "POST", credentials: "include", headers: {{"content-type":
                  "application/json", "x-aizone-request": "1"}}, body: '{{"mode": "pin"}}'}});
  return window.results;
}};
</script></body></html>"""


class _Site(http.server.BaseHTTPRequestHandler):
    page = b""

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        self.send_response(200)
        self.send_header("content-type", "text/html")
        self.end_headers()
        self.wfile.write(self.page)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def attacker(fabric: Fabric) -> Iterator[str]:
    """The attacker's site on another loopback port; its base URL."""
    _Site.page = ATTACK.format(api=fabric.base).encode()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Site)
    t = threading.Thread(target=server.serve_forever, daemon=True)
    t.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def rebinding_browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """chromium whose resolver maps attacker.example to 127.0.0.1 (what rebinding achieves)."""
    exe = chromium_path()
    if exe is None:
        unavailable("chromium", "chromium is not installed (make test installs Debian's `chromium`)")
    from playwright.sync_api import sync_playwright

    args = [*CHROMIUM_ARGS, "--no-sandbox",
            "--host-resolver-rules=MAP attacker.example 127.0.0.1"]
    with sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("rebind-profile")), executable_path=str(exe),
            headless=True, args=args, chromium_sandbox=False)
        try:
            yield context
        finally:
            context.close()


def _mode() -> str:
    with ApiClient() as c:
        return str(c.get("/status")["mode"])


@pytest.mark.parametrize(("site", "refused"), [("127.0.0.1", 403), ("attacker.example", 401)],
                         ids=["another-port-same-site", "another-site"])
def test_a_logged_in_browser_gives_a_foreign_page_nothing(fabric: Fabric, rebinding_browser: Any,
                                                           attacker: str, site: str,
                                                           refused: int) -> None:
    """Logged in on one tab, a page of another origin can read nothing and change nothing.

    From another port of 127.0.0.1 (same site: the browser sends the cookie)
    a form's change is 403 (no x-aizone-request, foreign Origin); from
    another site the strict cookie stays home: 401.
    """
    dash = rebinding_browser.new_page()
    dash.goto(fabric.url)  # the login: the cookie is set, the token leaves the address bar
    dash.wait_for_selector("#fabric .edge")
    assert "token=" not in dash.url
    assert any(c["name"] == "aizone-token" and c["httpOnly"] and c["sameSite"] == "Strict"
               for c in rebinding_browser.cookies())
    mode = _mode()
    evil = rebinding_browser.new_page()
    page = attacker.replace("127.0.0.1", site)
    evil.goto(page)
    results = evil.evaluate("window.run()")
    # Cross-origin reads are blocked by the browser (nothing answers CORS).
    assert results["status"].startswith("blocked"), results
    assert results["cors-mode"].startswith("blocked"), results
    for form in ("m", "f"):  # a mode change, then shutdown, as plain cross-origin forms
        evil.goto(page)
        with evil.expect_navigation() as nav:
            evil.evaluate(f"document.getElementById('{form}').submit()")
        assert nav.value is not None and nav.value.status == refused, form
    with ApiClient() as c:
        st = c.get("/status")
    assert st["phase"] == "up" and st["mode"] == mode
    evil.close()
    dash.close()


def test_dns_rebinding_reaches_the_address_but_not_the_api(fabric: Fabric,
                                                            rebinding_browser: Any) -> None:
    """http://attacker.example:PORT/ resolves to 127.0.0.1, and the API refuses that Host."""
    port = fabric.base.rstrip("/").rsplit(":", 1)[1]
    page = rebinding_browser.new_page()
    for path in ("api/v1/status", f"?token={fabric.url.split('token=')[1]}"):
        response = page.goto(f"http://attacker.example:{port}/{path}")
        assert response is not None and response.status == 403, path
        assert "does not serve Host" in page.content()
    page.close()


def test_the_dashboards_own_write_passes_the_guard(fabric: Fabric,
                                                   rebinding_browser: Any) -> None:
    """The page's api() (cookie + x-aizone-request, same origin) changes the mode, and back."""
    page = rebinding_browser.new_page()
    page.goto(fabric.url)
    page.wait_for_selector("#fabric .edge")
    before = _mode()
    other = "ecmp" if before != "ecmp" else "eecmp"
    status = page.evaluate("""async (mode) => {
        const r = await fetch("api/v1/mode", {method: "POST", headers: {"content-type":
            "application/json", "x-aizone-request": "1"}, body: JSON.stringify({mode})});
        return r.status; }""", other)
    assert status == 200 and _mode() == other
    forged = page.evaluate("""async () => (await fetch("api/v1/mode", {method: "POST",
        headers: {"content-type": "application/json"}, body: '{"mode": "pin"}'})).status""")
    assert forged == 403 and _mode() == other  # the cookie alone is not enough to change
    back = page.evaluate("""async (mode) => (await fetch("api/v1/mode", {method: "POST",
        headers: {"content-type": "application/json", "x-aizone-request": "1"},
        body: JSON.stringify({mode})})).status""", before)
    assert back == 200 and _mode() == before
    page.close()
