"""The OAuth clients the sandbox knows: the device applications (public, they pair by code) and the partner
applications (authorization code + PKCE; one of them confidential with a client secret)."""
from __future__ import annotations

# Device clients are public; partner redirect URIs: mojeaplikace://… or http loopback with any port.
# A partner's name is what the consent page shows (its id when it has none).
CLIENTS = {
    "profirest-pos": {"kind": "device", "public": True},
    "profirest-kds": {"kind": "device", "public": True},
    "profirest-dochazka": {"kind": "device", "public": True},
    "profirest-kuryr": {"kind": "device", "public": True},
    "moje-aplikace": {"kind": "partner", "public": True, "name": "Moje aplikace"},
    "sandbox-eshop": {"kind": "partner", "public": False, "secret": "sandbox-secret", "name": "Sandbox e-shop"},
}


def client_name(cid: str) -> str:
    """What the owner reads: the client's display name, its id when it has none."""
    return (CLIENTS.get(cid) or {}).get("name") or cid
