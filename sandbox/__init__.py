"""The Profirest API v2 sandbox: a local server that honours contract/profirest-v2.openapi.json."""
from pathlib import Path

ROOT = Path(__file__).resolve().parent
CONTRACT_PATH = ROOT.parent / "contract" / "profirest-v2.openapi.json"
