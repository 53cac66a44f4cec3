"""The hostile corpus runs on the local store and on the hub double (``tests.queue.fake_hub``)."""

from __future__ import annotations

from tests.queue.conftest import backend, fake_hub, online_client

__all__ = ["backend", "fake_hub", "online_client"]
