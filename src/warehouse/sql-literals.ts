/** A text as a SQL string literal. */
export function sqlText(value: string): string {
  return `'${value.replaceAll("'", "''")}'`;
}

/** A name (column, table) as a SQL identifier. */
export function sqlName(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** An instant (epoch ms) as a TIMESTAMPTZ literal. */
export function timestampLiteral(epochMs: number): string {
  return `TIMESTAMPTZ ${sqlText(new Date(epochMs).toISOString())}`;
}
