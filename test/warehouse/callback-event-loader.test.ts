import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_CARRIER_ID } from '../../src/carriers/known-carriers.js';
import { loadCallbackJournalSlice } from '../../src/warehouse/callback-event-loader.js';
import { useTempDirs } from './warehouse-fixtures.js';

const temp = useTempDirs();

/** A journal record of a status callback, as the receiver writes it. */
function record(eventId: string, orderCode: string, status: string, delayCode: string | null, receivedAt: string) {
  return JSON.stringify({
    eventId,
    orderCode,
    status,
    statusName: status === '16' ? 'CHOXULY' : 'DANGGIAO',
    eventTime: '2026-11-20T14:05:09.1234567+07:00',
    transactionId: eventId,
    deliveryDate: null,
    receiverName: null,
    mailman: 'Nguyễn Văn Bưu',
    deliveryNotes: null,
    delayCode,
    delayNotes: delayCode === null ? null : 'Khách hẹn giao lại',
    requestFeedbackCount: null,
    description: null,
    externalCode: null,
    referenceCode: null,
    accountAlias: 'hanoi-shop',
    authMethod: 'apikey',
    receivedAt,
    body: {},
  });
}

describe('loading callbacks', () => {
  it('records a status-16 callback without a DelayCode as a failed attempt of unknown reason', async () => {
    const { warehouse, dir } = await temp.open();
    const lines = [
      record('ev-1', 'EX100000001', '16', null, '2026-11-20T07:05:10Z'),
      record('ev-2', 'EX100000002', '16', '09', '2026-11-20T07:05:10Z'),
      record('ev-3', 'EX100000003', '16', null, '2026-11-20T07:05:10Z'),
      record('ev-4', 'EX100000003', '16', '11', '2026-11-20T07:05:11Z'),
      record('ev-5', 'EX100000004', '4', null, '2026-11-20T07:05:10Z'),
    ];
    await loadCallbackJournalSlice(
      warehouse,
      { segment: 'callbacks-1.ndjson', endOffset: 1_000, lines, lineCount: lines.length },
      join(dir, 'spool'),
      DEFAULT_CARRIER_ID,
    );

    const failures = (
      await warehouse.readAll(
        `SELECT order_code, strftime(attempted_at AT TIME ZONE 'UTC', '%H:%M:%S') AS attempted, delay_code, source, callback_event_id
         FROM delivery_failures ORDER BY order_code`,
      )
    ).getRowObjectsJson();
    expect(failures).toEqual([
      {
        order_code: 'EX100000001',
        attempted: '07:05:09',
        delay_code: null,
        source: 'callback',
        callback_event_id: 'ev-1',
      },
      {
        order_code: 'EX100000002',
        attempted: '07:05:09',
        delay_code: '09',
        source: 'callback',
        callback_event_id: 'ev-2',
      },
      {
        order_code: 'EX100000003',
        attempted: '07:05:09',
        delay_code: '11',
        source: 'callback',
        callback_event_id: 'ev-4',
      },
    ]);
  });

  it("fills in an attempt's unknown reason from a later callback, and keeps a known one", async () => {
    const { warehouse, dir } = await temp.open();
    const load = (segment: string, lines: string[]) =>
      loadCallbackJournalSlice(
        warehouse,
        { segment, endOffset: 1_000, lines, lineCount: lines.length },
        join(dir, 'spool'),
        DEFAULT_CARRIER_ID,
      );
    // The same attempts (order and time to the second), first without a reason, or with one.
    await load('callbacks-1.ndjson', [
      record('ev-1', 'EX100000001', '16', null, '2026-11-20T07:05:10Z'),
      record('ev-2', 'EX100000002', '16', '09', '2026-11-20T07:05:10Z'),
    ]);
    await load('callbacks-2.ndjson', [
      record('ev-3', 'EX100000001', '16', '11', '2026-11-20T07:06:10Z'),
      record('ev-4', 'EX100000002', '16', '11', '2026-11-20T07:06:10Z'),
    ]);
    const failures = (
      await warehouse.readAll(
        'SELECT order_code, delay_code, delay_note, callback_event_id FROM delivery_failures ORDER BY order_code',
      )
    ).getRowObjectsJson();
    expect(failures).toEqual([
      { order_code: 'EX100000001', delay_code: '11', delay_note: 'Khách hẹn giao lại', callback_event_id: 'ev-3' },
      { order_code: 'EX100000002', delay_code: '09', delay_note: 'Khách hẹn giao lại', callback_event_id: 'ev-2' },
    ]);
  });

  it("loads each record under the carrier it names, a record without one (the previous release's) as 247express", async () => {
    const { warehouse, dir } = await temp.open();
    const ghn = (eventId: string, status: string, failedAttempt: boolean) =>
      JSON.stringify({
        ...JSON.parse(record(eventId, 'GZ82BS', status, 'GHN-DFC1A4', '2026-11-20T07:05:10Z')),
        carrier: 'ghn',
        failedAttempt,
        authMethod: 'token',
      });
    const lines = [
      // One event id under two carriers: two events.
      record('ev-1', 'EX100000001', '16', null, '2026-11-20T07:05:10Z'),
      ghn('ev-1', 'delivery_fail', true),
      ghn('ev-1', 'delivery_fail', true),
      // GHN's own status 16 is no failed attempt: only the record's failedAttempt says.
      ghn('ev-2', '16', false),
    ];
    const inserted = await loadCallbackJournalSlice(
      warehouse,
      { segment: 'callbacks-2.ndjson', endOffset: 1_000, lines, lineCount: lines.length },
      join(dir, 'spool'),
      DEFAULT_CARRIER_ID,
    );
    expect(inserted).toBe(3);
    const events = (
      await warehouse.readAll('SELECT carrier, event_id, auth_method FROM callback_events ORDER BY carrier, event_id')
    ).getRowObjectsJson();
    expect(events).toEqual([
      { carrier: '247express', event_id: 'ev-1', auth_method: 'apikey' },
      { carrier: 'ghn', event_id: 'ev-1', auth_method: 'token' },
      { carrier: 'ghn', event_id: 'ev-2', auth_method: 'token' },
    ]);
    const failures = (
      await warehouse.readAll('SELECT carrier, order_code, delay_code FROM delivery_failures ORDER BY carrier')
    ).getRowObjectsJson();
    expect(failures).toEqual([
      { carrier: '247express', order_code: 'EX100000001', delay_code: null },
      { carrier: 'ghn', order_code: 'GZ82BS', delay_code: 'GHN-DFC1A4' },
    ]);
  });
});
