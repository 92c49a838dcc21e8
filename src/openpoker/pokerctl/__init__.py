"""pokerctl: the operator's command line (replay, export, audit, simulate, run)."""
