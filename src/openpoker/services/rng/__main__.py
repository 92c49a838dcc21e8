"""``python -m openpoker.services.rng``: run the rng service until SIGTERM/SIGINT."""

from __future__ import annotations

import sys

from openpoker.services.rng.server import main
from openpoker.shell.runner import run

if __name__ == "__main__":
    sys.exit(run(main))
