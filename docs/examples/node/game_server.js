#!/usr/bin/env node
// What a game server does through the openpoker gRPC API, in Node.js: fund two players at the
// wallet, create a table, seat both, wait for the dealer service to deal, read the view, show a
// refused request's google.rpc.ErrorInfo, fold the hand and leave. Each step prints one line,
// `<step> <json>`. The stubs are generated at run time from the project's .proto files.
//
// Every service serves TLS; a client outside the cluster trusts the CA (DATA/pki/ca.crt) and
// names itself with a bearer token on each service's client port (the service port + 100). The
// tokens here come from `pokerctl token`, which signs with the local key `make run` made; in
// production they come from the operator's identity provider.
//
//   node game_server.js [--table 127.0.0.1:50153] [--wallet 127.0.0.1:50152] [--data-dir ../../../data]
//                       [--pokerctl pokerctl] [--timeout-ms 30000]
'use strict';

const {execFileSync} = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');
const googleProtos = require('google-proto-files');

const args = {
  table: '127.0.0.1:50153', wallet: '127.0.0.1:50152', 'data-dir': path.resolve(__dirname, '../../../data'),
  pokerctl: 'pokerctl', 'timeout-ms': '30000',
};
for (let i = 2; i < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, '')] = process.argv[i + 1];

// Stubs from proto/openpoker/api/<svc>/v1/*.proto (wire packages poker.<svc>.v1). keepCase keeps
// the .proto field names; enums as their names; int64 chips as JS numbers (well below 2^53).
const PROTO_DIR = path.resolve(__dirname, '../../../proto');
const definition = protoLoader.loadSync(
  ['openpoker/api/table/v1/table_service.proto', 'openpoker/api/wallet/v1/wallet_service.proto'],
  {includeDirs: [PROTO_DIR], keepCase: true, enums: String, longs: Number, defaults: true, oneofs: true},
);
const poker = grpc.loadPackageDefinition(definition).poker;
const tls = grpc.credentials.createSsl(fs.readFileSync(path.join(args['data-dir'], 'pki', 'ca.crt')));
const tables = new poker.table.v1.TableService(args.table, tls);
const wallet = new poker.wallet.v1.WalletService(args.wallet, tls);

// google.rpc.Status and ErrorInfo from googleapis' protos (the google-proto-files package).
const rpc = googleProtos.loadSync([googleProtos.getProtoPath('rpc', 'status.proto'),
  googleProtos.getProtoPath('rpc', 'error_details.proto')]);
const Status = rpc.lookupType('google.rpc.Status');
const ErrorInfo = rpc.lookupType('google.rpc.ErrorInfo');

// A failed call's ErrorInfo: the server puts a google.rpc.Status, whose details hold one
// ErrorInfo (reason, domain "poker.<service>", metadata), in the grpc-status-details-bin trailer.
function errorInfo(err) {
  const out = {code: grpc.status[err.code], message: err.details};
  const [bin] = err.metadata ? err.metadata.get('grpc-status-details-bin') : [];
  if (!bin) return out;  // no rich status (UNAVAILABLE, DEADLINE_EXCEEDED, ...)
  for (const any of Status.decode(bin).details) {
    if (any.type_url.endsWith('/google.rpc.ErrorInfo')) {
      const info = ErrorInfo.toObject(ErrorInfo.decode(any.value), {defaults: true});
      return {...out, reason: info.reason, domain: info.domain, metadata: info.metadata};
    }
  }
  return out;
}

// One token per identity, minted once: `authorization: Bearer <token>` on every call. A player's
// token is the player: the services take the player from it, never from a request field.
const tokens = new Map();
function meta(who, role = 'player') {
  const key = `${role}:${who}`;
  if (!tokens.has(key)) {
    const argv = ['token', '--data-dir', args['data-dir'], '--player', who, '--role', role];
    tokens.set(key, execFileSync(args.pokerctl, argv, {encoding: 'utf8'}).trim());
  }
  const md = new grpc.Metadata();
  md.set('authorization', `Bearer ${tokens.get(key)}`);
  return md;
}

function call(client, method, request, md) {
  return new Promise((resolve, reject) => {
    const deadline = new Date(Date.now() + 5000);
    client[method](request, md, {deadline}, (err, reply) => (err ? reject(err) : resolve(reply)));
  });
}

function say(step, fields) {
  console.log(`${step} ${JSON.stringify(fields)}`);
}

// Follow the table through WatchTable as `viewer` until a hand has a seat to act.
function waitForHand(name, viewer, ms) {
  return new Promise((resolve, reject) => {
    const stream = tables.WatchTable({name, viewer_player_id: viewer}, meta(viewer));
    const timer = setTimeout(() => {
      stream.cancel();
      reject(new Error(`no hand dealt at ${name} within ${ms} ms: is the dealer service running?`));
    }, ms);
    stream.on('data', ({table}) => {
      if (table.current_hand && table.current_hand.to_act && table.current_hand.to_act.seat > 0) {
        clearTimeout(timer);
        stream.cancel();
        resolve(table);
      }
    });
    stream.on('error', (err) => {
      if (err.code !== grpc.status.CANCELLED) reject(err);
    });
  });
}

async function main() {
  const suffix = crypto.randomBytes(3).toString('hex');
  const players = [`node-ann-${suffix}`, `node-bob-${suffix}`];
  for (const player of players) {
    const got = await call(wallet, 'Deposit', {request_id: crypto.randomUUID(), player, amount: 1000},
      meta('node-cashier', 'cashier'));
    say('deposit', {player, cash: got.cash.balance});
  }

  // request_id is the idempotency key (AIP-155): a retry with the same id answers the first
  // result and appends nothing, so a client may retry after a timeout without a second table.
  const create = {
    request_id: crypto.randomUUID(),
    table_id: `node-${suffix}`,
    config: {
      game: 'GAME_TEXAS_HOLDEM', structure: 'STRUCTURE_NO_LIMIT', seat_count: 6,
      stakes: {small_blind: 1, big_blind: 2}, profile: 'RULES_PROFILE_SEEDS', display_name: 'node example',
    },
  };
  const operator = meta('node-operator', 'operator');  // tables are opened by the operator
  const created = (await call(tables, 'CreateTable', create, operator)).table;
  const retried = (await call(tables, 'CreateTable', create, operator)).table;
  say('create_table', {name: created.name, status: created.status, version: created.version,
    retry_same_table: retried.name === created.name && retried.version === created.version});
  const name = created.name;

  for (const [i, player] of players.entries()) {
    const joined = await call(tables, 'JoinTable', {request_id: crypto.randomUUID(), table: name,
      player_id: player, seat: i + 1, buy_in: 200, post_choice: 'POST_CHOICE_POST_NOW'}, meta(player));
    say('join_table', {player, seat: joined.seat, version: joined.table.version});
  }

  // The dealer service starts the hand by itself once two players are ready (StartHand is the
  // dealer's RPC: only the dealer's certificate may call it); the game server only watches for it.
  const view = await waitForHand(name, players[0], Number(args['timeout-ms']));
  const hand = view.current_hand;
  const seatOf = (seat) => view.seats.find((s) => s.seat === seat);
  const toAct = seatOf(hand.to_act.seat).player_id;
  const other = players.find((p) => p !== toAct);
  say('view', {viewer: players[0], status: view.status, version: view.version, hand_id: hand.hand_id,
    street: hand.street, to_act: toAct, legal: hand.to_act.actions, deck_commitment: hand.deck_commitment,
    seats: view.seats.filter((s) => s.player_id).map((s) => ({seat: s.seat, player: s.player_id,
      stack: s.stack, bet: s.bet, cards: s.hole_cards}))});

  // A deliberately bad request: the player who is not to act tries to fold.
  try {
    await call(tables, 'Act', {request_id: crypto.randomUUID(), table: name, player_id: other,
      hand_id: hand.hand_id, action: 'ACTION_TYPE_FOLD'}, meta(other));
    say('refused', {unexpected: 'the out-of-turn fold was accepted'});
  } catch (err) {
    say('refused', errorInfo(err));
  }

  // The other player leaves first (pending: they are in the hand), so no second hand is dealt;
  // then the player to act folds at the version the leave left (else ABORTED, STALE_VERSION).
  const leave = (player) => call(tables, 'LeaveTable',
    {request_id: crypto.randomUUID(), table: name, player_id: player}, meta(player));
  const left = await leave(other);
  say('leave_table', {player: other, pending: left.pending, cashed_out: left.cashed_out});
  const acted = await call(tables, 'Act', {request_id: crypto.randomUUID(), table: name, player_id: toAct,
    hand_id: hand.hand_id, action: 'ACTION_TYPE_FOLD', expected_version: left.table.version}, meta(toAct));
  const ended = (await call(tables, 'GetHand', {name: `${name}/hands/${hand.hand_id}`}, meta(toAct))).hand;
  say('hand', {hand_id: ended.hand_id, version: acted.version, outcome: ended.outcome,
    payouts: ended.payouts.map((p) => ({player: p.player_id, amount: p.amount}))});
  const last = await leave(toAct);
  say('leave_table', {player: toAct, pending: last.pending, cashed_out: last.cashed_out});
  const final = (await call(tables, 'GetTable', {name}, meta(toAct))).table;
  say('table', {name, status: final.status, hands_played: final.hands_played,
    seated: final.seats.filter((s) => s.player_id).length});
}

main()
  .catch((err) => {
    console.error('failed:', err.code === undefined ? err.message : JSON.stringify(errorInfo(err)));
    process.exitCode = 1;
  })
  .finally(() => {
    tables.close();
    wallet.close();
  });
