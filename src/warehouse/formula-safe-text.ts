/**
 * A spreadsheet opening a CSV reads a cell that starts with one of these as a formula (OWASP, CSV
 * injection): text from the carrier or a partner's file must not run as one.
 */
const FORMULA_STARTS: readonly string[] = ['=', '+', '-', '@', '\t', '\r'];

/** The text as a CSV cell a spreadsheet shows as text: a `'` before a text that would start a formula. */
export function formulaSafeText(text: string): string {
  return FORMULA_STARTS.includes(text.charAt(0)) ? `'${text}` : text;
}

/**
 * The same rule in SQL, over a VARCHAR expression (null stays null). A list, not `IN`: DuckDB turns an
 * IN list this long into a join, which loses the order a COPY writes the rows in.
 */
export function formulaSafeTextSql(expression: string): string {
  const starts = FORMULA_STARTS.map((c) => c.codePointAt(0)).join(', ');
  return `CASE WHEN list_contains([${starts}], ascii(${expression})) THEN '''' || ${expression} ELSE ${expression} END`;
}
