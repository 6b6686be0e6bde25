/** One step of the warehouse schema. Versions only grow; an applied migration is never edited. */
export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}
