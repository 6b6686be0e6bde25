import { fc, test } from '@fast-check/vitest';
import { describe, expect } from 'vitest';
import { DispatchWindow } from '../../src/pipeline/dispatch-window.js';

/** Lets every promise continuation that can run, run. */
const settled = () => new Promise((resolve) => setImmediate(resolve));

describe('DispatchWindow, over random numbers of orders and orders of finishing', () => {
  test.prop(
    [
      fc.integer({ min: 1, max: 8 }),
      fc.integer({ min: 0, max: 40 }),
      fc.integer({ min: 1, max: 3 }),
      fc.array(fc.nat(), { maxLength: 40 }),
    ],
    { numRuns: 200, timeout: 1_000 },
  )(
    'keeps exactly min(size, orders left) in flight, and drains only once the last one finished',
    async (size, orders, dispatchers, picks) => {
      const window = new DispatchWindow(size);
      /** The lookups in flight, each finished by calling it. */
      const inFlight: (() => void)[] = [];
      let finished = 0;
      // As the runs dispatch: enter, start the order without waiting for it, leave when it is done.
      const dispatch = async (share: number) => {
        for (let i = 0; i < share; i++) {
          await window.enter();
          void new Promise<void>((resolve) => inFlight.push(resolve))
            .then(() => finished++)
            .finally(() => window.leave());
          expect(inFlight.length).toBeLessThanOrEqual(size);
        }
      };
      const shares = Array.from(
        { length: dispatchers },
        (_, i) => Math.floor(orders / dispatchers) + (i < orders % dispatchers ? 1 : 0),
      );
      let drainedAfter: number | undefined;
      const drained = Promise.all(shares.map(dispatch))
        .then(() => window.drained())
        .then(() => {
          drainedAfter = finished;
        });

      await settled();
      for (let pick = 0; finished < orders; pick++) {
        expect(inFlight.length).toBe(Math.min(size, orders - finished));
        expect(drainedAfter).toBeUndefined();
        inFlight.splice((picks[pick % Math.max(1, picks.length)] ?? 0) % inFlight.length, 1)[0]!();
        await settled();
      }
      await drained;
      expect(drainedAfter).toBe(orders);
      expect(inFlight).toEqual([]);
    },
  );
});

describe('DispatchWindow', () => {
  test('gives a freed place to a dispatch waiting beside a drain', async () => {
    const window = new DispatchWindow(1);
    await window.enter();
    let drained = false;
    void window.drained().then(() => {
      drained = true;
    });
    let entered = false;
    void window.enter().then(() => {
      entered = true;
    });
    window.leave();
    await settled();
    expect(entered).toBe(true);
    expect(drained).toBe(false);
    window.leave();
    await settled();
    expect(drained).toBe(true);
  });
});
