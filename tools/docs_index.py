"""Makes the root of the DocC site open the module's page, and says how to read the site (the last step of `make docs`).

`docc convert` writes its single-page app to the site's root index.html too; served there (`/`) it finds no page and
shows DocC's "page not found". This writes, in its place, a page that redirects to documentation/<module>/ (a
relative address, so the site works under any path prefix), after checking that the module's page exists, then
prints the command that serves the site and its address.

Usage: python3 tools/docs_index.py [SITE] [--module profirestapi] [--port 8000]
       python3 tools/docs_index.py --check [SITE]   exit 1 unless the root redirects to an existing module page
"""
from __future__ import annotations

import argparse
import html
import re
import sys
from pathlib import Path

MARKER = "<!-- written by tools/docs_index.py -->"


def redirect_page(module: str) -> str:
    target = f"documentation/{module}/"
    return f"""<!doctype html>
{MARKER}
<html lang="en">
<head>
<meta charset="utf-8">
<title>Documentation</title>
<meta http-equiv="refresh" content="0; url={html.escape(target)}">
<link rel="canonical" href="{html.escape(target)}">
</head>
<body>
<p>The documentation is at <a href="{html.escape(target)}">{html.escape(target)}</a>.</p>
</body>
</html>
"""


def module_page(site: Path, module: str) -> Path:
    return site / "documentation" / module / "index.html"


def write(site: Path, module: str) -> str | None:
    """Writes the redirect; the reason when it cannot (no module page: not a DocC site of that module)."""
    if not module_page(site, module).is_file():
        return f"{module_page(site, module)} is missing: is {site} a DocC site of the module {module!r}?"
    (site / "index.html").write_text(redirect_page(module))
    return None


def check(site: Path, module: str) -> str | None:
    """None when the root redirects to the module's page and that page exists; else what is wrong."""
    index = site / "index.html"
    if not index.is_file():
        return f"{index} is missing"
    text = index.read_text(errors="replace")
    m = re.search(r'<meta http-equiv="refresh" content="0; url=([^"]+)">', text)
    if MARKER not in text or not m:
        return f"{index} is DocC's own page, not the redirect (run python3 tools/docs_index.py {site})"
    if html.unescape(m.group(1)) != f"documentation/{module}/":
        return f"{index} redirects to {m.group(1)}, not documentation/{module}/"
    if not module_page(site, module).is_file():
        return f"{module_page(site, module)} is missing"
    return None


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("site", nargs="?", default=".build/docs")
    p.add_argument("--module", default="profirestapi", help="the module's page under documentation/ (lowercase)")
    p.add_argument("--port", type=int, default=8000, help="the port in the printed command")
    p.add_argument("--check", action="store_true", help="only check that the root redirects")
    args = p.parse_args(argv)
    site = Path(args.site)
    problem = check(site, args.module) if args.check else write(site, args.module)
    if problem:
        print(f"docs_index: {problem}", file=sys.stderr)
        return 1
    if args.check:
        print(f"docs_index: {site}/index.html redirects to documentation/{args.module}/")
        return 0
    print(f"The documentation is in {site}. Serve it with\n"
          f"  python3 -m http.server -d {site} {args.port}\n"
          f"and open http://127.0.0.1:{args.port}/ (it goes on to /documentation/{args.module}/).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
