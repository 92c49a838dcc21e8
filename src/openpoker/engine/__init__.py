"""The pure rules engine: cards, ranking, hands, tables and PHH.

No I/O, clock, randomness, logging or transport here (a ruff rule bans the imports): time, ids
and decks arrive as command data, and every state is the fold of its events.
"""
