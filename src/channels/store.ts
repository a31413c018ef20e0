import type { Database } from "bun:sqlite";
import { type Static, Type } from "@sinclair/typebox";
import type { AgEvent } from "../events/bus.ts";
import type { ChannelName } from "./channel.ts";

/** SPEC: 100 dead letters for webhooks and team chat, 50 for email; the chat bot gets 100 too. */
export const DEAD_LETTER_LIMITS: Record<ChannelName, number> = {
  webhook: 100,
  teamchat: 100,
  chat: 100,
  email: 50,
};

export const DeadLetter = Type.Object({
  id: Type.Integer(),
  channel: Type.String(),
  target: Type.String({ description: "which target of the channel (e.g. the webhook's origin and path)" }),
  deliveryId: Type.String({ description: "the X-Svc-Delivery id, kept when retried" }),
  event: Type.Object({
    id: Type.Integer(),
    event: Type.String(),
    timestamp: Type.String(),
    session: Type.Optional(Type.Object({ id: Type.String(), name: Type.String(), workDir: Type.String() })),
    detail: Type.String(),
    meta: Type.Record(Type.String(), Type.Unknown()),
  }),
  attempts: Type.Integer(),
  lastError: Type.String(),
  failedAt: Type.String({ format: "date-time" }),
});
export type DeadLetter = Static<typeof DeadLetter>;

export interface PendingDelivery {
  rowId: number;
  channel: ChannelName;
  target: string;
  deliveryId: string;
  event: AgEvent;
  attempts: number;
}

export interface ChannelStore {
  /** Records a delivery before it is tried; returns its outbox row id. */
  enqueue(channel: ChannelName, target: string, deliveryId: string, event: AgEvent, at: string): number;
  attempted(rowId: number, attempts: number): void;
  delivered(rowId: number): void;
  /** Moves an outbox row to the dead letters (the oldest beyond the channel's bound are evicted). */
  bury(pending: PendingDelivery, lastError: string, at: string): void;
  /** Deliveries still owed, oldest first (what a restart resumes). */
  pending(): PendingDelivery[];
  deadLetters(channel?: ChannelName): DeadLetter[];
  /**
   * Moves a channel's dead letters for these targets back to the outbox in one transaction
   * (attempts start again, the delivery id stays); returns the new outbox rows.
   */
  requeue(channel: ChannelName, targets: string[], at: string): PendingDelivery[];
  clear(channel: ChannelName): number;
}

interface OutboxRow {
  id: number;
  channel: string;
  target: string;
  delivery_id: string;
  event: string;
  attempts: number;
}
interface DeadRow extends OutboxRow {
  last_error: string;
  failed_at: string;
}

export function createChannelStore(db: Database): ChannelStore {
  const insert = db.query(
    "INSERT INTO outbox (channel, target, delivery_id, event, created_at) VALUES (?, ?, ?, ?, ?) RETURNING id",
  );
  const setAttempts = db.query("UPDATE outbox SET attempts = ? WHERE id = ?");
  const remove = db.query("DELETE FROM outbox WHERE id = ?");
  const bury = db.query(
    `INSERT INTO dead_letters (channel, target, delivery_id, event, attempts, last_error, failed_at)
     VALUES ($channel, $target, $deliveryId, $event, $attempts, $lastError, $failedAt)`,
  );
  const evict = db.query(
    `DELETE FROM dead_letters WHERE channel = $channel AND id NOT IN
       (SELECT id FROM dead_letters WHERE channel = $channel ORDER BY id DESC LIMIT $keep)`,
  );
  const pending = db.query<OutboxRow, []>("SELECT * FROM outbox ORDER BY id");
  const dead = db.query<DeadRow, { channel: string | null }>(
    "SELECT * FROM dead_letters WHERE $channel IS NULL OR channel = $channel ORDER BY id",
  );
  const clear = db.query("DELETE FROM dead_letters WHERE channel = ?");
  const removeDead = db.query("DELETE FROM dead_letters WHERE id = ?");

  const toPending = (row: OutboxRow): PendingDelivery => ({
    rowId: row.id,
    channel: row.channel as ChannelName,
    target: row.target,
    deliveryId: row.delivery_id,
    event: JSON.parse(row.event) as AgEvent,
    attempts: row.attempts,
  });
  const toDead = (row: DeadRow): DeadLetter => ({
    id: row.id,
    channel: row.channel,
    target: row.target,
    deliveryId: row.delivery_id,
    event: JSON.parse(row.event) as DeadLetter["event"],
    attempts: row.attempts,
    lastError: row.last_error,
    failedAt: row.failed_at,
  });

  return {
    enqueue: (channel, target, deliveryId, event, at) =>
      (insert.get(channel, target, deliveryId, JSON.stringify(event), at) as { id: number }).id,
    attempted: (rowId, attempts) => void setAttempts.run(attempts, rowId),
    delivered: (rowId) => void remove.run(rowId),
    bury: db.transaction((p: PendingDelivery, lastError: string, at: string) => {
      bury.run({
        channel: p.channel,
        target: p.target,
        deliveryId: p.deliveryId,
        event: JSON.stringify(p.event),
        attempts: p.attempts,
        lastError,
        failedAt: at,
      });
      remove.run(p.rowId);
      evict.run({ channel: p.channel, keep: DEAD_LETTER_LIMITS[p.channel] });
    }),
    pending: () => pending.all().map(toPending),
    deadLetters: (channel) => dead.all({ channel: channel ?? null }).map(toDead),
    requeue: db.transaction((channel: ChannelName, targets: string[], at: string) => {
      const wanted = new Set(targets);
      const moved: PendingDelivery[] = [];
      for (const row of dead.all({ channel })) {
        if (!wanted.has(row.target)) continue;
        const rowId = (insert.get(channel, row.target, row.delivery_id, row.event, at) as { id: number }).id;
        removeDead.run(row.id);
        moved.push({ ...toPending({ ...row, id: rowId }), attempts: 0 });
      }
      return moved;
    }),
    clear: (channel) => clear.run(channel).changes,
  };
}
