"""The table service: owner of the table event streams (``poker.table.v1.TableService``).

Shape (STYLE.md): ``config`` (environment), ``server`` (wiring, clean stop), ``handlers`` (thin:
identity, protobuf -> app -> protobuf), ``app`` (the facade the handlers use, wiring the parts
below), ``writer`` (load -> fold -> decide -> append, retries, fencing, snapshots),
``commands`` and ``queries`` (the commands and the reads over the writer), ``money`` (buy-ins,
refunds and cash-outs with the wallet), ``hand_index`` (where older hands are in the log),
``background`` (the tasks nobody awaits), ``ownership`` (partition leases), ``wallet`` (the
wallet port), ``retrying`` (background cash-outs and refunds: back-off, when to stop),
``reconcile`` (escrow no log accounts for goes back to cash) and ``reconcile_side`` (what it
asks of this instance's tables), ``watchers`` (watches fed from the owner's model), ``decks`` (a
StartHand's sealed deck opened and checked), ``allowance`` (the operator's ResetAllInAllowance),
``show`` (a player's SetShowPreferences and ShowHand), ``site_allowance`` (the all-in allowance
counted across tables, KV ``poker-allowances``), ``mapping`` (pure protobuf <-> domain),
``errors``.
The table log itself (its events, the fold, the store and snapshot codec) is the library
``openpoker.tablelog``, which the dispute tools read too.

Events the dealer reacts to
---------------------------
The log is the stream ``TABLE_EVENTS`` (``POKER_TABLE_STREAM``), one subject per table:
``poker.table.<crc32(table_id) % 256>.<table_id>`` (``eventstore.subjects.table_subject``). Each
message is one ``poker.common.v1.Envelope`` (one command's outcome: ``version`` gapless,
``command_id`` = the RPC's ``request_id``, ``owner_epoch``); each ``Event`` has ``type`` = the
class name and ``payload`` = ``engine.codec`` JSON (decode with
``openpoker.tablelog.store.decode_events``). Subscribe to ``poker.table.>`` to see every table.
The names a dealer needs:

* ``TableOpened{table_id, rules}``: first event of a table (``rules.time`` holds the clocks).
* ``PlayerSeated``, ``PlayerSatIn``, ``ChipsAdded``: a hand may now be startable (the dealer can
  ask ``GetTable``: status ``TABLE_STATUS_BETWEEN_HANDS``).
* ``HandScheduled{hand_id, plan}`` then ``HandStarted{hand_id, seats, button, commitment}``:
  the hand the dealer started (stacks to reserve in the wallet: ``HandStarted.seats``).
* Betting facts (``ForcedBetPosted``, ``Folded``, ``Checked``, ``Called``, ``BetPlaced``,
  ``AllInProtected``, ``BoardDealt``, ``ShowdownStarted``, ...): restart the seat's clock; the
  envelope's ``version`` is what ``TimeOutSeat.expected_version`` must carry.
* ``PotAwarded{index, amount, rake, winners}`` and ``HandEnded{hand_id, stacks, payouts, rake}``
  (last event of every played hand): settle the hand in the wallet; have rng reveal the seed.
* ``HandVoided{hand_id, reason, returned}``: the hand was voided (``VoidHand``): release every
  reservation in the wallet.
* ``PlayerLeft{seat, player, chips}``: the table cashes the chips out itself.
* ``DecisionTimedOut{used_elsewhere}``, ``PlayerDisconnected``, ``PlayerReconnected{extra_ms}``:
  clock facts (``used_elsewhere``: the player's protections at other tables that counted).
* ``AllInAllowanceReset{player, at_ms, cleared}``: an operator reset the player's allowance of
  all-ins due to disconnection (``ResetAllInAllowance``); nothing to do but follow the version.
* ``ShowPreferencesSet{seat, player, auto_muck, show_uncontested}``: a player's showdown
  choices; ``UncontestedHandShown{hand_id, seat, player, cards}``: the winner of a hand everyone
  else folded showed it, after its ``HandEnded`` (before the next ``HandScheduled``). Nothing
  to do but follow the version.
* ``OwnerChanged{epoch, owner}``: another table-service instance now writes this table.
"""
