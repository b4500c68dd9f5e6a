"""Backups: ZIP bytes in (at most 10 MiB, 413 beyond) and out."""
from __future__ import annotations

import hashlib

from aiohttp import web

from .db import iso
from .errors import ApiError, json_response
from .operation import Ctx, operation
from .paging import page
from .state import new_id

ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06", b"PK\x07\x08")


@operation("createBackup", raw_body=("application/zip", "backup_body_limit"), idempotent=True)
async def create_backup(ctx: Ctx) -> web.Response:
    data = ctx.raw
    if not data.startswith(ZIP_MAGIC):
        raise ApiError("validation_failed", "The body is not a ZIP file.",
                       errors=[{"pointer": "", "code": "format", "message": "a ZIP file (PK…)"}])
    b = {"id": new_id("bak_", 4), "restaurant_id": ctx.rid, "size": len(data),
         "sha256": hashlib.sha256(data).hexdigest(), "created_at": iso()}
    ctx.sb.store.put_blob(b["id"], data)
    ctx.sb.store.put("backup", b["id"], b, ctx.rid)
    return json_response(b, 201, {"Location": f"/v2/restaurants/{ctx.rid}/backups/{b['id']}"})


@operation("listBackups")
async def list_backups(ctx: Ctx) -> web.Response:
    return page(ctx.request, ctx.sb.store.list("backup", ctx.rid, newest_first=True), "backups:" + ctx.rid)


def _backup(ctx: Ctx) -> dict:
    b = ctx.sb.store.get("backup", ctx.request.match_info["backup_id"])
    if not b or b["restaurant_id"] != ctx.rid:
        raise ApiError("not_found", "No such backup.")
    return b


@operation("getBackup")
async def get_backup(ctx: Ctx) -> web.Response:
    return json_response(_backup(ctx))


@operation("getBackupContent")
async def get_backup_content(ctx: Ctx) -> web.Response:
    b = _backup(ctx)
    data = ctx.sb.store.get_blob(b["id"]) or b""
    return web.Response(status=200, body=data, headers={
        "Content-Type": "application/zip", "Content-Disposition": f'attachment; filename="{b["id"]}.zip"'})
