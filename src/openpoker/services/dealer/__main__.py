"""``python -m openpoker.services.dealer``: run the dealer service until SIGTERM/SIGINT."""

from __future__ import annotations

import sys

from openpoker.services.dealer.server import main
from openpoker.shell.runner import run

if __name__ == "__main__":
    sys.exit(run(main))
