import { LRUCache } from 'lru-cache';
import { PROVINCES, type Province } from './geography.js';
import { type Account, type LifecycleOptions, type OrderPlan, planOrder } from './order-plan.js';
import { deriveSeed, SeededRandom } from './seeded-random.js';

export interface WorldOptions {
  readonly seed: number;
  readonly accounts: number;
  readonly ordersPerAccount: number;
  /** The clock's start: orders are created from `historyDays` before it to `futureDays` after it. */
  readonly start: number;
  readonly historyDays: number;
  readonly futureDays: number;
  readonly codePrefix: string;
  readonly lifecycle: LifecycleOptions;
}

const DAY = 86_400_000;

const ACCOUNT_ALIASES = [
  'hanoi-shop',
  'saigon-shop',
  'danang-shop',
  'haiphong-shop',
  'cantho-shop',
  'hue-shop',
  'vinh-shop',
  'nhatrang-shop',
  'dalat-shop',
];
const ACCOUNT_HUBS = ['HNI', 'HCM', 'DNG', 'HPG', 'CTO', 'TTH', 'NAN', 'KHA', 'LDG'];

/**
 * The sandbox's accounts and orders, a pure function of the options: an order's data is derived from
 * the seed, its account and its number alone, so any order can be generated on demand and a world of
 * millions of orders costs memory only for the ones recently asked for.
 */
export class SandboxWorld {
  readonly accounts: readonly Account[];
  private readonly accountByKey: Map<string, Account>;
  /**
   * Plans of orders looked up, for the lookups that come again; the default world's 1,500 orders fit.
   * Few, since every plan held adds to what the garbage collector walks on each lookup.
   */
  private readonly lookedUp = new LRUCache<string, OrderPlan>({ max: 5_000 });
  /**
   * Plans met by scans of the whole world, which callbacks repeat at each tick of the clock. Bounded by
   * `maxSize` (each plan counting one), not `max`: `max` allocates its 200,000 slots when the sandbox
   * starts, most of the time a small world takes to start.
   */
  private readonly scanned = new LRUCache<string, OrderPlan>({ maxSize: 200_000, sizeCalculation: () => 1 });
  private readonly codePattern: RegExp;

  constructor(readonly options: WorldOptions) {
    if (options.accounts < 1 || options.accounts > ACCOUNT_ALIASES.length) {
      throw new RangeError(`accounts must be 1 to ${ACCOUNT_ALIASES.length}`);
    }
    this.accounts = ACCOUNT_ALIASES.slice(0, options.accounts).map((alias, index) => {
      const rng = new SeededRandom(deriveSeed(options.seed, 'account', index));
      const hubProvince = PROVINCES.find((p) => p.id === ACCOUNT_HUBS[index]) as Province;
      return {
        index,
        alias,
        apiKey: `${rng.hex(8)}-${rng.hex(4)}-${rng.hex(4)}-${rng.hex(4)}-${rng.hex(12)}`,
        clientHubID: `${hubProvince.id}-HUB-${index + 1}`,
        hubProvince,
      };
    });
    this.accountByKey = new Map(this.accounts.map((a) => [a.apiKey, a]));
    this.codePattern = new RegExp(`^${options.codePrefix}([1-9])(\\d{8})$`);
  }

  findAccountByKey(apiKey: string): Account | undefined {
    return this.accountByKey.get(apiKey);
  }

  findAccountByHub(clientHubID: string): Account | undefined {
    return this.accounts.find((a) => a.clientHubID === clientHubID);
  }

  orderCode(accountIndex: number, orderIndex: number): string {
    return `${this.options.codePrefix}${accountIndex + 1}${String(orderIndex + 1).padStart(8, '0')}`;
  }

  /** The order with this code, whether or not it exists yet at the clock's time. */
  findOrder(code: string): OrderPlan | undefined {
    const cached = this.scanned.get(code) ?? this.lookedUp.get(code);
    if (cached) return cached;
    const m = this.codePattern.exec(code);
    if (!m) return undefined;
    const account = this.accounts[Number(m[1]) - 1];
    const index = Number(m[2]) - 1;
    if (account === undefined || index < 0 || index >= this.options.ordersPerAccount) return undefined;
    const plan = this.generate(account, index, code);
    this.lookedUp.set(code, plan);
    return plan;
  }

  private generate(account: Account, index: number, code: string): OrderPlan {
    const { seed, start, historyDays, futureDays, lifecycle } = this.options;
    const rng = new SeededRandom(deriveSeed(seed, 'order', account.index, index));
    const createdAt =
      start - historyDays * DAY + Math.floor(rng.fraction() * (historyDays + futureDays) * 24 * 3600) * 1000;
    return planOrder(rng, account, index, code, createdAt, lifecycle);
  }

  /** Every order of the world (or of one account), generated one at a time. */
  *orders(accountIndex?: number): Generator<OrderPlan> {
    const accounts = accountIndex === undefined ? this.accounts : this.accounts.filter((a) => a.index === accountIndex);
    for (const account of accounts) {
      for (let i = 0; i < this.options.ordersPerAccount; i++) {
        const code = this.orderCode(account.index, i);
        let plan = this.scanned.get(code);
        if (plan === undefined) {
          plan = this.lookedUp.get(code) ?? this.generate(account, i, code);
          this.scanned.set(code, plan);
        }
        yield plan;
      }
    }
  }
}
