"""``python -m services.table``: run the table service until SIGTERM/SIGINT."""

from __future__ import annotations

import sys

from services.table.server import main
from shell.runner import run

if __name__ == "__main__":
    sys.exit(run(main))
