"""The dealer service's wiring, in-process on port 0 with a real nats-server."""

from __future__ import annotations

from openpoker.services.dealer.config import DealerConfig
from openpoker.services.dealer.server import SERVICE_NAME, start
from openpoker.shell.client import health_status, reflected_services


async def test_serving_and_reflected(nats_url: str) -> None:
    running = await start(
        DealerConfig.from_env(
            {"POKER_INSECURE": "true", "POKER_DEALER_PORT": "0", "POKER_NATS_URL": nats_url}
        )
    )
    try:
        target = running.server.address
        assert SERVICE_NAME == "poker.dealer.v1.DealerService"
        assert await health_status(target, SERVICE_NAME) == "SERVING"
        assert SERVICE_NAME in await reflected_services(target)
    finally:
        await running.stop()
