/**
 * What a GHN lookup keeps of its calls, in the answer log, the raw spool and replay alike: the
 * detail's answer and the fee call's (null when not asked), each as it came, in one JSON object
 * `{"detail": …, "fees": …}`.
 */
export function ghnTrackedAnswer(detail: Buffer, fees: Buffer | null): Buffer {
  return Buffer.concat([
    Buffer.from('{"detail":'),
    detail,
    Buffer.from(',"fees":'),
    fees ?? Buffer.from('null'),
    Buffer.from('}'),
  ]);
}
