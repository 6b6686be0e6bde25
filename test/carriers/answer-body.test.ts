import { describe, expect, it } from 'vitest';
import { answerBodyAsRead } from '../../src/carriers/answer-body.js';

const asRead = (text: string) => answerBodyAsRead(Buffer.from(text), JSON.parse(text)).toString('utf8');

describe('answerBodyAsRead', () => {
  it('hands over a body that names each key once as it came, whatever its strings hold', () => {
    const body = Buffer.from(
      '{ "orderCode" : "247EXP0001", "note": "a \\"quoted\\": text, \\\\", "time": "09:15:30", "k\\":": 1,\r\n "statuses": [{"status": "21"}, {"status": "30", "x": {"y": [1, {"z": null}]}}], "empty": {}, "list": [] }',
    );
    expect(answerBodyAsRead(body, JSON.parse(body.toString()))).toBe(body);
  });

  it('writes again, with the last value of each, a body that repeats a key at any depth', () => {
    expect(JSON.parse(asRead('{"priceFR": 0.1, "priceFR": 0.25, "price": 1}'))).toEqual({ priceFR: 0.25, price: 1 });
    expect(asRead('{"statuses": [{"status": "21", "status": "30"}], "note": "\\"status\\":"}')).toBe(
      '{"statuses":[{"status":"30"}],"note":"\\"status\\":"}',
    );
    expect(asRead('{"a": {"b": {"c": 1, "c": 2}}}')).toBe('{"a":{"b":{"c":2}}}');
  });
});
