import { describe, expect, it } from 'vitest';
import {
  ConnectionFailure,
  HttpStatusFailure,
  LookupTimeoutFailure,
} from '../../src/carriers/client/lookup-failures.js';
import { CarrierBreaker, CarrierDownError } from '../../src/pipeline/carrier-breaker.js';

const NOT_ABANDONED = new AbortController().signal;

/** An attempt that stays in flight until the test settles it. */
function pendingAttempt() {
  let settle!: { resolve: (value: string) => void; reject: (error: unknown) => void };
  const promise = new Promise<string>((resolve, reject) => (settle = { resolve, reject }));
  return { promise, ...settle };
}

describe('CarrierBreaker', () => {
  it('sends at most the limit of attempts to a carrier that never answers, however many are asked at once', async () => {
    const breaker = new CarrierBreaker(5);
    let sent = 0;
    const outcomes = await Promise.allSettled(
      Array.from({ length: 40 }, () =>
        breaker.send(async () => {
          sent++;
          await new Promise((resolve) => setTimeout(resolve, 1));
          throw new ConnectionFailure('ECONNREFUSED', false);
        }, NOT_ABANDONED),
      ),
    );
    expect(sent).toBe(5);
    expect(breaker.signal.aborted).toBe(true);
    const tripped = breaker.tripped!;
    expect(tripped).toBeInstanceOf(CarrierDownError);
    expect(tripped.code).toBe('CARRIER_UNREACHABLE');
    expect(tripped.message).toBe(
      'carrier unreachable: none of the last 5 attempts got an answer, the last: could not connect to the carrier: ECONNREFUSED',
    );
    expect(outcomes.filter((o) => o.status === 'rejected' && o.reason === tripped)).toHaveLength(35);
    await expect(breaker.send(async () => 'answer', NOT_ABANDONED)).rejects.toBe(tripped);
  });

  it('names a carrier that was reached and failed as failing', async () => {
    const breaker = new CarrierBreaker(3);
    for (const failure of [
      new LookupTimeoutFailure(10),
      new ConnectionFailure('ECONNRESET'),
      new HttpStatusFailure(503),
    ])
      await breaker.send(() => Promise.reject(failure), NOT_ABANDONED).catch(() => undefined);
    expect(breaker.tripped?.code).toBe('CARRIER_FAILING');
    expect(breaker.tripped?.message).toMatch(/^carrier failing: .*the carrier answered HTTP 503$/);
  });

  it('does not trip while answers, even refusals, come between the failures', async () => {
    const breaker = new CarrierBreaker(2);
    for (let i = 0; i < 10; i++) {
      await breaker.send(() => Promise.reject(new HttpStatusFailure(502)), NOT_ABANDONED).catch(() => undefined);
      await breaker.send(() => Promise.reject(new HttpStatusFailure(404)), NOT_ABANDONED).catch(() => undefined);
    }
    expect(breaker.tripped).toBeUndefined();
  });

  it('does not count what the run gave up itself', async () => {
    const breaker = new CarrierBreaker(1);
    const abandoned = AbortSignal.abort();
    await breaker
      .send(() => Promise.reject(new ConnectionFailure('UND_ERR_ABORTED')), abandoned)
      .catch(() => undefined);
    expect(breaker.tripped).toBeUndefined();
  });

  it('once the carrier has answered, sends as many at once as the run asks', async () => {
    const breaker = new CarrierBreaker(2);
    await breaker.send(async () => 'first answer', NOT_ABANDONED);
    const attempts = Array.from({ length: 10 }, () => pendingAttempt());
    let started = 0;
    const sends = attempts.map((attempt) =>
      breaker.send(() => {
        started++;
        return attempt.promise;
      }, NOT_ABANDONED),
    );
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toBe(10);
    for (const attempt of attempts) attempt.resolve('answer');
    expect(await Promise.all(sends)).toHaveLength(10);
  });

  it('after a failure, holds new attempts back until an answer comes', async () => {
    const breaker = new CarrierBreaker(3);
    await breaker.send(async () => 'first answer', NOT_ABANDONED);
    await breaker.send(() => Promise.reject(new HttpStatusFailure(500)), NOT_ABANDONED).catch(() => undefined);
    const inFlight = [pendingAttempt(), pendingAttempt()];
    const sends = inFlight.map((attempt) => breaker.send(() => attempt.promise, NOT_ABANDONED));
    let thirdStarted = false;
    const third = breaker.send(async () => {
      thirdStarted = true;
      return 'third';
    }, NOT_ABANDONED);
    await new Promise((resolve) => setImmediate(resolve));
    // One unanswered and two in flight: a third would make three that may all go unanswered.
    expect(thirdStarted).toBe(false);
    inFlight[0]!.resolve('answer');
    await sends[0];
    expect(await third).toBe('third');
    inFlight[1]!.resolve('answer');
    await sends[1];
  });
});
