/** One step of the warehouse schema. Versions only grow; an applied migration is never edited. */
export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
  /**
   * The step rebuilds the tables beside the old ones before it drops them: it needs free room on the
   * warehouse's file system for a copy of their rows, and is refused before it starts without it.
   */
  readonly copiesEveryTable?: boolean;
}
