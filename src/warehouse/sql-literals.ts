/** A text as a SQL string literal. */
export function sqlText(value: string): string {
  return `'${value.replaceAll("'", "''")}'`;
}

/** A name (column, table) as a SQL identifier. */
export function sqlName(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
