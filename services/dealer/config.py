"""The dealer service's settings, read once from the environment.

Besides the shell's ``POKER_*`` settings (``shell.config``):

* ``POKER_TABLE_STREAM`` (default ``TABLE_EVENTS``): the table event log the dealer follows.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from shell.config import ShellConfig, env_str

SERVICE = "dealer"


@dataclass(frozen=True, slots=True, kw_only=True)
class DealerConfig:
    shell: ShellConfig
    table_stream: str

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> DealerConfig:
        env = os.environ if environ is None else environ
        return cls(
            shell=ShellConfig.from_env(SERVICE, env),
            table_stream=env_str(env, "POKER_TABLE_STREAM", "TABLE_EVENTS"),
        )
