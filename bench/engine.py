"""Hand engine: replaying real no-limit hands, engine beside pokerkit, same hands, same run.

The hands are the 1,518 no-limit hold'em hands of the public PHH conformance corpus
(``tests/engine/data/phh``, else ``/work/shared/conformance/phh``). Each side parses the
files before the clock starts; then

* engine: ``engine.phh_replay.replay_history`` (plan the deck, ``start``, one ``decide`` and
  ``evolve`` per action, showdown, pots, ``HandEnded``);
* pokerkit 0.7.7: iterate ``HandHistory`` to its last state (its own replay).

Both sides are timed in alternating rounds (one pass over the hands each), in process CPU time
(``time.process_time``) so that other work on a shared machine counts less; the figures are the
best of five rounds of each side, with the ratio of each round (engine, then pokerkit just
after) and their median beside them: the machine's speed drifts, and a best-of-five of each
side alone once paired a slow engine window with a fast pokerkit one (14x). Finer turns (every
50 hands) were tried and rejected: they time the engine with caches pokerkit has just evicted
(16.5x at 10 hands per turn, 20x at 50, 23x at whole passes).
Each side first replays the hands once untimed (tables built on first use, caches). ``quick``
replays fewer hands for fewer rounds, without that.
"""

from __future__ import annotations

import statistics
import time
import warnings
from pathlib import Path
from typing import Any

import pokerkit

from openpoker.engine.phh import HandHistory, load_phh, load_phhs
from openpoker.engine.phh_replay import replay_history

_CORPORA = (
    Path(__file__).resolve().parent.parent / "tests" / "engine" / "data" / "phh",
    Path("/work/shared/conformance/phh/data"),
)


def _files() -> list[Path]:
    for root in _CORPORA:
        if root.is_dir():
            return sorted(p for p in root.rglob("*") if p.suffix in (".phh", ".phhs"))
    raise FileNotFoundError("no PHH corpus found")


def _load() -> tuple[list[HandHistory], list[Any]]:
    ours: list[HandHistory] = []
    theirs: list[Any] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pokerkit notes fields it does not know
        for path in _files():
            text = path.read_text()
            ours += load_phhs(text) if path.suffix == ".phhs" else [load_phh(text)]
            with path.open("rb") as fp:
                if path.suffix == ".phhs":
                    theirs += list(pokerkit.HandHistory.load_all(fp))
                else:
                    theirs.append(pokerkit.HandHistory.load(fp))
    return ours, theirs


def _engine_round(hands: list[HandHistory]) -> float:
    start = time.process_time()
    for hh in hands:
        replay_history(hh)
    return len(hands) / (time.process_time() - start)


def _pokerkit_round(hands: list[Any]) -> float:
    start = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for hh in hands:
            for _state in hh:
                pass
    return len(hands) / (time.process_time() - start)


def run(quick: bool) -> dict[str, object]:
    ours, theirs = _load()
    assert len(ours) == len(theirs)
    count = 200 if quick else len(ours)
    rounds = 1 if quick else 5
    if not quick:  # one untimed pass each: lazily built tables and caches, on both sides
        _engine_round(ours[:count])
        _pokerkit_round(theirs[:count])
    engine_best = pokerkit_best = 0.0
    ratios: list[float] = []
    for _ in range(rounds):
        engine = _engine_round(ours[:count])
        pokerkit = _pokerkit_round(theirs[:count])
        engine_best = max(engine_best, engine)
        pokerkit_best = max(pokerkit_best, pokerkit)
        ratios.append(engine / pokerkit)
    return {
        "hands": count,
        "engine_replay_hands_per_s": round(engine_best),
        "pokerkit_replay_hands_per_s": round(pokerkit_best),
        "speedup": round(engine_best / pokerkit_best, 2),
        "speedup_median_round": round(statistics.median(ratios), 2),
        "speedup_per_round": [round(r, 2) for r in ratios],
        "goal_speedup": 20,
    }
