"""The dashboard: a live view of the running fabric in the browser, served by the daemon's API.

`mount_dashboard(app)` adds two things to the daemon's FastAPI application
(`controller.api.create_app` calls it last):

    GET /               the page (`static/index.html`)
    GET /dashboard/...  its ES modules, style sheet and icon (`static/`)

The page is static and needs no build step: plain modern JavaScript modules
that draw the fabric as SVG. Everything it shows comes from the API it is
served by, through relative URLs (so it also works behind an SSH tunnel):
the topology, status, statistics and jobs once at load (`GET /api/v1/...`),
then one server-sent event stream per browser (`GET /api/v1/events`) that
carries the statistics snapshot the daemon publishes every poll (the one
`aizone stats` shows) and every change (mode, link, rerouted, reconciled,
switch, job, progress, down). Nothing polls: the daemon reads the switches
once for every client. A switch's tables (`/api/v1/routes?switch=S`) and
counters (`/api/v1/counters/...`) are read when a person asks for them.
The page's actions are the CLI's: `POST /api/v1/mode` and `POST /api/v1/link`.

`docs/dashboard.md` says what the page shows and how it is tested.

Names defined here: `mount_dashboard`, `STATIC_DIR`, `ASSET_PREFIX`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import FastAPI
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles
from starlette.responses import Response

__all__ = ["ASSET_PREFIX", "STATIC_DIR", "mount_dashboard"]

STATIC_DIR = Path(__file__).resolve().parent / "static"
ASSET_PREFIX = "/dashboard"


class _Assets(StaticFiles):
    """The page's files, revalidated on every load (ETag: a 304 when nothing changed).

    So a browser never runs the scripts of an older aizone against a newer
    page after an upgrade.
    """

    def file_response(self, *args: Any, **kwargs: Any) -> Response:
        """StaticFiles' response for a file, marked `Cache-Control: no-cache`."""
        response = super().file_response(*args, **kwargs)
        response.headers["Cache-Control"] = "no-cache"
        return response


def mount_dashboard(app: FastAPI) -> None:
    """Serve the dashboard page at `/` and its assets under `/dashboard/` of `app`."""
    index = STATIC_DIR / "index.html"
    if not index.is_file():
        raise FileNotFoundError(f"{index}: the dashboard page is missing from the package")

    @app.get("/", include_in_schema=False)
    async def dashboard() -> FileResponse:
        """The page (`static/index.html`), revalidated on every load."""
        return FileResponse(index, media_type="text/html",
                            headers={"Cache-Control": "no-cache"})

    app.mount(ASSET_PREFIX, _Assets(directory=STATIC_DIR), name="dashboard")
