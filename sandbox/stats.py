"""The sandbox's counters (GET /_sandbox/stats) and the commit ledger (GET /_sandbox/commits) the soak tests read."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Stats:
    token_refreshes: Counter = field(default_factory=Counter)
    refresh_reuse: int = 0
    refresh_replays: int = 0
    # refresh grants whose access token still had more than half its lifetime left (tokens.py): extra refreshes
    refresh_early: int = 0
    requests: Counter = field(default_factory=Counter)
    idempotent_replays: int = 0
    punches_recorded: int = 0
    device_polls: int = 0
    slow_downs: int = 0
    faults_triggered: int = 0
    sse_connections: int = 0
    contract_violations: int = 0
    body_mismatch_under_key: int = 0
    # the commit ledger (GET /_sandbox/commits): 2xx answers of idempotent operations whose handler ran
    commits: Counter = field(default_factory=Counter)  # (connection id, Idempotency-Key) -> commits
    unkeyed_commits: int = 0
    commits_by_operation: Counter = field(default_factory=Counter)
    punch_requests: Counter = field(default_factory=Counter)  # punch id -> requests (or batch items) that reached it
    conn_refreshes: Counter = field(default_factory=Counter)  # connection id -> refresh grants (the console shows it)

    def as_json(self) -> dict[str, Any]:
        return {"token_refreshes": dict(self.token_refreshes), "refresh_reuse": self.refresh_reuse,
                "refresh_replays": self.refresh_replays, "refresh_early": self.refresh_early,
                "requests": dict(self.requests), "idempotent_replays": self.idempotent_replays,
                "punches_recorded": self.punches_recorded, "device_polls": self.device_polls,
                "slow_downs": self.slow_downs, "faults_triggered": self.faults_triggered,
                "sse_connections": self.sse_connections, "contract_violations": self.contract_violations,
                "body_mismatch_under_key": self.body_mismatch_under_key, "commits": self.commit_summary()}

    def commit_summary(self) -> dict[str, Any]:
        """Counts only: the soak test compares them with what it sent; duplicated_* > 0 means a doubled write."""
        return {"keys": len(self.commits), "commits": sum(self.commits.values()),
                "duplicated_keys": sum(1 for n in self.commits.values() if n > 1),
                "unkeyed": self.unkeyed_commits, "by_operation": dict(self.commits_by_operation),
                "punches": {"ids": len(self.punch_requests), "requests": sum(self.punch_requests.values()),
                            "duplicated_ids": sum(1 for n in self.punch_requests.values() if n > 1)}}

    def commit_ledger(self) -> dict[str, Any]:
        """The summary plus every key's and every punch id's count."""
        by_key: dict[str, dict[str, int]] = {}
        for (conn_id, key), n in self.commits.items():
            by_key.setdefault(conn_id, {})[key] = n
        return {**self.commit_summary(), "by_key": by_key, "punch_requests": dict(self.punch_requests)}

    def clear_commits(self) -> None:
        self.commits.clear()
        self.unkeyed_commits = 0
        self.commits_by_operation.clear()
        self.punch_requests.clear()
