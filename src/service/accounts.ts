// Users, plans and balances of the local service: monthly allowance plus prepaid credit, period rollover, atomic charges.
import { randomUUID } from 'node:crypto';
import { PLAN_KEY_LIMITS } from '../cloud/catalog.js';
import type { BalanceRecord } from '../cloud/protocol.js';
import type { Db } from './db.js';
import { MICRO, cuToMicro, microToBalanceCu } from './metering.js';

/**
 * Monthly CU allowance per plan (the spec names the plans, not the amounts: our decision, docs/service.md
 * "Plans"). Key limits come from the catalog: free 2, starter 5, pro 20, enterprise 100.
 */
export const PLAN_MONTHLY_CU: Record<string, number> = { free: 10_000, starter: 100_000, pro: 1_000_000, enterprise: 10_000_000 };
export const PLANS = Object.keys(PLAN_MONTHLY_CU);
export const DEFAULT_PLAN = 'starter';

export interface User {
  id: string;
  name: string;
  plan: string;
  created_at: string;
}

interface UserRow extends User {
  monthly_total_micro: number;
  monthly_unused_micro: number;
  prepaid_micro: number;
  current_period_end: string | null;
  cancel_at_period_end: number;
}

export interface Charge {
  keyId: string;
  userId: string;
  kind: 'chat' | 'tts' | 'asr' | 'vlm';
  item: string;
  quantityIn: number;
  quantityOut?: number;
  costMicro: number;
}

/** CU set aside for one request in progress; settled (charged or released) exactly once. */
export interface Reservation {
  readonly userId: string;
  readonly micro: number;
  settled: boolean;
}

export class UnknownPlanError extends Error {
  constructor(plan: string) {
    super(`unknown plan ${plan}; plans are ${PLANS.join(', ')}`);
  }
}

export function planKeyLimit(plan: string): number {
  return PLAN_KEY_LIMITS[plan] ?? PLAN_KEY_LIMITS[DEFAULT_PLAN] ?? 5;
}

/** First instant of the UTC month after `d`: billing periods are calendar months. */
export function nextMonthStart(d: Date): Date {
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1));
}

export class Accounts {
  /**
   * Micro-CU reserved per user by requests in progress. Held by the serving process: a crash ends
   * its requests and their reservations together (one service process per database).
   */
  private readonly reserved = new Map<string, number>();

  constructor(
    private readonly db: Db,
    private readonly now: () => Date = () => new Date(),
  ) {}

  createUser(name: string, plan: string = DEFAULT_PLAN): User {
    if (!(plan in PLAN_MONTHLY_CU)) throw new UnknownPlanError(plan);
    const existing = this.userByName(name);
    if (existing) return existing;
    const now = this.now();
    const monthly = cuToMicro(PLAN_MONTHLY_CU[plan]!);
    const user: User = { id: randomUUID(), name, plan, created_at: now.toISOString() };
    this.db
      .prepare(
        `INSERT INTO users (id, name, plan, monthly_total_micro, monthly_unused_micro, prepaid_micro, current_period_end, created_at)
         VALUES (?, ?, ?, ?, ?, 0, ?, ?)`,
      )
      .run(user.id, name, plan, monthly, monthly, nextMonthStart(now).toISOString(), user.created_at);
    return user;
  }

  userByName(name: string): User | undefined {
    return this.db.prepare(`SELECT id, name, plan, created_at FROM users WHERE name = ?`).get(name) as User | undefined;
  }

  userById(id: string): User | undefined {
    return this.db.prepare(`SELECT id, name, plan, created_at FROM users WHERE id = ?`).get(id) as User | undefined;
  }

  /** Changes the plan; the new allowance applies at once to the current period. */
  setPlan(userId: string, plan: string): void {
    if (!(plan in PLAN_MONTHLY_CU)) throw new UnknownPlanError(plan);
    const monthly = cuToMicro(PLAN_MONTHLY_CU[plan]!);
    this.db
      .prepare(`UPDATE users SET plan = ?, monthly_total_micro = ?, monthly_unused_micro = MIN(monthly_unused_micro, ?) WHERE id = ?`)
      .run(plan, monthly, monthly, userId);
  }

  /** Sets credits in whole CU (administration and tests): any field left out is unchanged. */
  setCredits(userId: string, credits: { prepaid?: number; monthlyUnused?: number; monthlyTotal?: number }): void {
    const tx = this.db.transaction(() => {
      if (credits.prepaid !== undefined) this.db.prepare(`UPDATE users SET prepaid_micro = ? WHERE id = ?`).run(cuToMicro(credits.prepaid), userId);
      if (credits.monthlyTotal !== undefined)
        this.db.prepare(`UPDATE users SET monthly_total_micro = ? WHERE id = ?`).run(cuToMicro(credits.monthlyTotal), userId);
      if (credits.monthlyUnused !== undefined)
        this.db.prepare(`UPDATE users SET monthly_unused_micro = ? WHERE id = ?`).run(cuToMicro(credits.monthlyUnused), userId);
    });
    tx();
  }

  /** Resets the monthly allowance for every period that has ended (prepaid credit carries over). */
  private rollover(userId: string): UserRow | undefined {
    const row = this.db.prepare(`SELECT * FROM users WHERE id = ?`).get(userId) as UserRow | undefined;
    if (!row || !row.current_period_end) return row;
    const now = this.now();
    let end = new Date(row.current_period_end);
    if (now < end) return row;
    while (now >= end) end = nextMonthStart(end);
    this.db.prepare(`UPDATE users SET monthly_unused_micro = monthly_total_micro, current_period_end = ? WHERE id = ?`).run(end.toISOString(), userId);
    return { ...row, monthly_unused_micro: row.monthly_total_micro, current_period_end: end.toISOString() };
  }

  /** Available micro-CU (monthly unused plus prepaid; may be negative after an overdraft). */
  availableMicro(userId: string): number {
    const row = this.db.transaction(() => this.rollover(userId))();
    return row ? row.monthly_unused_micro + row.prepaid_micro : 0;
  }

  /** Available micro-CU minus what requests in progress have reserved. */
  freeMicro(userId: string): number {
    return this.availableMicro(userId) - (this.reserved.get(userId) ?? 0);
  }

  /** Micro-CU reserved by the user's requests in progress. */
  reservedMicro(userId: string): number {
    return this.reserved.get(userId) ?? 0;
  }

  /**
   * Admits a request that may cost up to `estimateMicro`: refused (undefined) unless the balance
   * minus every open reservation is positive and covers the whole estimate (the request's worst
   * case); admitted, it reserves its estimate, and it is charged at most that estimate (settle). So
   * requests admitted together, concurrent ones included, never cost more than the balance, and the
   * balance never goes below zero (docs/service.md, "Metering").
   */
  reserve(userId: string, estimateMicro: number): Reservation | undefined {
    if (!Number.isSafeInteger(estimateMicro) || estimateMicro < 0) throw new Error(`invalid reservation ${estimateMicro}`);
    const free = this.freeMicro(userId);
    if (free <= 0 || free < estimateMicro) return undefined;
    this.reserved.set(userId, (this.reserved.get(userId) ?? 0) + estimateMicro);
    return { userId, micro: estimateMicro, settled: false };
  }

  /**
   * Ends a reservation: charges `charge` (one transaction) and releases the estimate in the same
   * step, or only releases it when the request failed (failed requests are not charged). Idempotent.
   * The charge is at most the reservation: a request costs no more than the worst case it was
   * admitted for (an upstream reporting more tokens than the request allowed is not believed past
   * it). Returns the micro-CU charged.
   */
  settle(r: Reservation, charge?: Charge): number {
    if (r.settled) return 0;
    r.settled = true;
    const left = (this.reserved.get(r.userId) ?? 0) - r.micro;
    if (left > 0) this.reserved.set(r.userId, left);
    else this.reserved.delete(r.userId);
    if (!charge) return 0;
    return this.charge({ ...charge, costMicro: Math.min(charge.costMicro, r.micro) });
  }

  balance(userId: string): BalanceRecord | undefined {
    const row = this.db.transaction(() => this.rollover(userId))();
    if (!row) return undefined;
    return {
      plan: row.plan,
      cu_balance: microToBalanceCu(row.monthly_unused_micro + row.prepaid_micro),
      monthly_unused_cu: microToBalanceCu(row.monthly_unused_micro),
      monthly_total_cu: microToBalanceCu(row.monthly_total_micro),
      current_period_end: row.current_period_end,
      cancel_at_period_end: row.cancel_at_period_end === 1,
    };
  }

  /**
   * Charges one usage atomically (one SQLite transaction): the monthly allowance first, then prepaid
   * credit, the key's total_cost, and a usage ledger row. The balance never goes below zero: a charge
   * is cut to what is free (the balance minus what other requests in progress have reserved), so a
   * streaming session that charges as it goes (recognition) cannot eat what a reserved request will
   * be charged either. Returns the micro-CU charged; less than asked means the balance ran out (the
   * caller ends the session).
   */
  charge(c: Charge): number {
    if (c.costMicro < 0 || !Number.isSafeInteger(c.costMicro)) throw new Error(`invalid charge ${c.costMicro}`);
    const tx = this.db.transaction((): number => {
      const row = this.rollover(c.userId);
      if (!row) throw new Error('charge for an unknown user');
      const free = row.monthly_unused_micro + row.prepaid_micro - (this.reserved.get(c.userId) ?? 0);
      const cost = Math.max(0, Math.min(c.costMicro, free));
      const fromMonthly = Math.min(Math.max(row.monthly_unused_micro, 0), cost);
      const at = this.now().toISOString();
      this.db
        .prepare(`UPDATE users SET monthly_unused_micro = monthly_unused_micro - ?, prepaid_micro = prepaid_micro - ? WHERE id = ?`)
        .run(fromMonthly, cost - fromMonthly, c.userId);
      this.db.prepare(`UPDATE api_keys SET total_cost_micro = total_cost_micro + ?, updated_at = ? WHERE id = ?`).run(cost, at, c.keyId);
      this.db
        .prepare(`INSERT INTO usage (key_id, user_id, at, kind, item, quantity_in, quantity_out, cost_micro) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`)
        .run(c.keyId, c.userId, at, c.kind, c.item, c.quantityIn, c.quantityOut ?? 0, cost);
      return cost;
    });
    return tx();
  }

  /** The usage ledger of a key, oldest first (tests and administration). */
  usage(keyId: string): Array<{ kind: string; item: string; quantity_in: number; quantity_out: number; cost_micro: number }> {
    return this.db.prepare(`SELECT kind, item, quantity_in, quantity_out, cost_micro FROM usage WHERE key_id = ? ORDER BY id`).all(keyId) as Array<{
      kind: string;
      item: string;
      quantity_in: number;
      quantity_out: number;
      cost_micro: number;
    }>;
  }
}

export { MICRO };
