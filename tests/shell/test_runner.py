"""``shell.runner.run``: SIGTERM/SIGINT become a stop event; a second signal exits at once."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent(
    """
    import asyncio, sys
    from openpoker.shell.runner import run

    async def main(stop):
        print("ready", flush=True)
        await stop.wait()
        print("stopping", flush=True)
        if "--slow" in sys.argv:
            await asyncio.sleep(30)  # a stop that hangs: a second signal must end it
        return 0

    sys.exit(run(main))
    """
)


def _start(*args: str) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", SCRIPT, *args], stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "ready"
    return proc


def test_sigterm_stops_gracefully_with_exit_code_zero() -> None:
    proc = _start()
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=30)
    assert (proc.returncode, out.strip()) == (0, "stopping")


def test_sigint_too() -> None:
    proc = _start()
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=30)
    assert proc.returncode == 0


def test_second_signal_exits_at_once() -> None:
    proc = _start("--slow")
    proc.send_signal(signal.SIGTERM)
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "stopping"
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=30)
    assert proc.returncode == 130
