"""The nats-server launcher and the shared fixture start a real JetStream server and stop it."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import nats
import pytest

from shell.natsproc import NatsServer, NatsServerError


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def test_fixture_server_has_jetstream(nats_url: str) -> None:
    nc = await nats.connect(nats_url)
    try:
        info = await nc.jetstream().account_info()
        assert info.streams == 0
    finally:
        await nc.close()


async def test_start_stop_reaps_and_frees_the_port(tmp_path: Path) -> None:
    server = NatsServer(data_dir=tmp_path)
    server.start()
    pid, port = server.pid, server.port
    assert pid is not None
    assert server.url == f"nats://127.0.0.1:{port}"
    nc = await nats.connect(server.url)
    await nc.close()
    assert server.stop() == 0  # SIGTERM: a clean exit
    assert not _alive(pid)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", port))  # the port is free again
    assert (tmp_path / "jetstream").is_dir()


def test_port_in_use_fails_fast(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        busy = sock.getsockname()[1]
        with pytest.raises(NatsServerError):
            NatsServer(data_dir=tmp_path, port=busy).start(timeout=10)


async def test_jetstream_data_survives_restart_on_the_same_folder(tmp_path: Path) -> None:
    with NatsServer(data_dir=tmp_path) as first:
        nc = await nats.connect(first.url)
        js = nc.jetstream()
        await js.add_stream(name="KEEP", subjects=["keep.>"])
        await js.publish("keep.a", b"fact")
        await nc.close()
    with NatsServer(data_dir=tmp_path) as second:
        nc = await nats.connect(second.url)
        msg = await nc.jetstream().get_last_msg("KEEP", "keep.a")
        await nc.close()
    assert msg.data == b"fact"
