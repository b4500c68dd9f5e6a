"""tools/docs_index.py, the last step of `make docs`: the site's root (/) redirects to the module's page instead of
showing DocC's "page not found", and the run ends with the command that serves the site and its address. Checked on
a site that docc itself converts from a small catalog (where docc is installed), served over HTTP."""
import http.server
import re
import shutil
import subprocess
import sys
import threading
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tools" / "docs_index.py"
SPA = '<!doctype html><html><head><script>var baseUrl = "/"</script></head><body><div id="app"></div></body></html>'


def run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True, timeout=60)


def fake_site(tmp_path: Path) -> Path:
    """What docc convert writes, in the parts that matter: its app at the root and at each page."""
    site = tmp_path / "docs"
    (site / "documentation" / "profirestapi").mkdir(parents=True)
    (site / "index.html").write_text(SPA)
    (site / "documentation" / "profirestapi" / "index.html").write_text(SPA.replace("app", "app module-page"))
    return site


def serve(site: Path):
    handler = lambda *a, **kw: http.server.SimpleHTTPRequestHandler(*a, directory=str(site), **kw)  # noqa: E731

    class Quiet(http.server.ThreadingHTTPServer):
        def handle_error(self, request, client_address):
            pass

    server = Quiet(("127.0.0.1", 0), handler)
    server.RequestHandlerClass.log_message = lambda *a: None
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


def follow_meta_refresh(url: str) -> tuple[str, str]:
    """GET url; while the page is a meta refresh, go where it points. The last (url, body)."""
    for _ in range(5):
        with urllib.request.urlopen(url, timeout=10) as r:
            body = r.read().decode()
        m = re.search(r'<meta http-equiv="refresh" content="0; url=([^"]+)">', body)
        if not m:
            return url, body
        url = urllib.parse.urljoin(url, m.group(1))
    raise AssertionError("a redirect loop")


def test_the_root_redirects_to_the_module_page_and_the_run_says_how_to_serve(tmp_path):
    site = fake_site(tmp_path)
    assert run("--check", site).returncode == 1, "docc's own root page is not the redirect"
    done = run(site)
    assert done.returncode == 0, done.stderr
    assert f"python3 -m http.server -d {site} 8000" in done.stdout
    assert "http://127.0.0.1:8000/" in done.stdout
    assert run("--check", site).returncode == 0
    server, base = serve(site)
    try:
        url, body = follow_meta_refresh(base)
    finally:
        server.shutdown()
    assert url == base + "documentation/profirestapi/"
    assert "module-page" in body
    # again over a site that has the redirect already: the same page
    assert run(site).returncode == 0 and run("--check", site).returncode == 0


def test_a_site_without_the_module_page_is_refused_and_left_alone(tmp_path):
    site = fake_site(tmp_path)
    shutil.rmtree(site / "documentation" / "profirestapi")
    done = run(site)
    assert done.returncode == 1 and "profirestapi" in done.stderr
    assert (site / "index.html").read_text() == SPA
    assert run("--check", tmp_path / "nothing").returncode == 1


def test_on_a_site_that_docc_converted(tmp_path):
    docc = shutil.which("docc")
    if not docc:
        pytest.skip("docc is not installed (it comes with the Swift toolchain)")
    catalog = tmp_path / "ProfirestAPI.docc"
    catalog.mkdir()
    (catalog / "ProfirestAPI.md").write_text("# ProfirestAPI\n\n@Metadata {\n  @TechnologyRoot\n}\n\nThe landing page.\n")
    site = tmp_path / "docs"
    subprocess.run([docc, "convert", str(catalog), "--fallback-display-name", "ProfirestAPI",
                    "--fallback-bundle-identifier", "cz.profirest.api", "--output-dir", str(site)],
                   check=True, capture_output=True, timeout=120)
    assert "<!-- written by" not in (site / "index.html").read_text(), "docc writes its app at the root"
    assert run(site).returncode == 0
    server, base = serve(site)
    try:
        url, body = follow_meta_refresh(base)
    finally:
        server.shutdown()
    assert url == base + "documentation/profirestapi/"
    assert "baseUrl" in body, "DocC's app, which then shows the module's page"
