const DESCRIBED_QUERY_CHARACTERS = 120;

/** A query as a source's description shows it: on one line, its first 120 characters. */
export function queryForDescription(query: string): string {
  const oneLine = query.replace(/\s+/g, ' ').trim();
  return oneLine.length <= DESCRIBED_QUERY_CHARACTERS
    ? oneLine
    : `${oneLine.slice(0, DESCRIBED_QUERY_CHARACTERS - 3)}...`;
}
