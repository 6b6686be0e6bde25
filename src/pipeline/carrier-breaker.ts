import { LookupFailure } from '../carriers/client/lookup-failures.js';
import { ProductError } from '../errors/product-error.js';

/**
 * The run stopped sending: none of its last attempts got an answer from the carrier. Unreachable
 * when the last one could not even connect, failing when it was sent and got no answer or a 5xx.
 */
export class CarrierDownError extends ProductError {
  declare readonly code: 'CARRIER_UNREACHABLE' | 'CARRIER_FAILING';

  constructor(
    readonly lastFailure: LookupFailure,
    attempts: number,
  ) {
    const unreachable = !lastFailure.sent;
    super(
      unreachable ? 'CARRIER_UNREACHABLE' : 'CARRIER_FAILING',
      `${unreachable ? 'carrier unreachable' : 'carrier failing'}: none of the last ${attempts} attempts got an answer, the last: ${lastFailure.message}`,
    );
  }
}

/**
 * A circuit breaker over every attempt a run sends, whatever the concurrency: once `limit` attempts in
 * a row ended without an answer from the carrier (refused, reset, timed out, 5xx), it trips and no
 * attempt is sent any more. Until the carrier has answered once, and again from its first unanswered
 * attempt until the next answer, an attempt is sent only while the unanswered ones and those in flight
 * stay under the limit: a carrier that is down from the start gets at most `limit` attempts.
 */
export class CarrierBreaker {
  private readonly trip = new AbortController();
  private tripError: CarrierDownError | undefined;
  private unansweredInRow = 0;
  private inFlight = 0;
  private answeredOnce = false;
  private waiting: (() => void)[] = [];

  constructor(private readonly limit: number) {}

  /** Aborted when the breaker trips. */
  get signal(): AbortSignal {
    return this.trip.signal;
  }

  /** Why the breaker tripped; undefined while it has not. */
  get tripped(): CarrierDownError | undefined {
    return this.tripError;
  }

  /**
   * Sends one attempt once the breaker lets it, and records whether the carrier answered; a failure
   * after `abandoned` is the run giving up, not the carrier's. Throws the CarrierDownError, sending
   * nothing, once the breaker has tripped.
   */
  async send<T>(attempt: () => Promise<T>, abandoned: AbortSignal): Promise<T> {
    while (this.tripError === undefined && !this.mayStart())
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    if (this.tripError !== undefined) throw this.tripError;
    this.inFlight++;
    // What the attempt tells of the carrier: it answered, it did not (the failure), or nothing.
    let outcome: LookupFailure | 'answered' | 'nothing' = 'answered';
    try {
      return await attempt();
    } catch (error) {
      outcome =
        !(error instanceof LookupFailure) || abandoned.aborted ? 'nothing' : error.answered ? 'answered' : error;
      throw error;
    } finally {
      this.inFlight--;
      this.record(outcome);
    }
  }

  private mayStart(): boolean {
    if (this.answeredOnce && this.unansweredInRow === 0) return true;
    return this.unansweredInRow + this.inFlight < this.limit;
  }

  private record(outcome: LookupFailure | 'answered' | 'nothing'): void {
    if (outcome === 'answered') {
      this.answeredOnce = true;
      this.unansweredInRow = 0;
    } else if (outcome !== 'nothing' && ++this.unansweredInRow >= this.limit && this.tripError === undefined) {
      this.tripError = new CarrierDownError(outcome, this.limit);
      this.trip.abort(this.tripError);
    }
    const waiting = this.waiting;
    this.waiting = [];
    for (const wake of waiting) wake();
  }
}
