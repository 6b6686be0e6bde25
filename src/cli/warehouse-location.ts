/** The variable naming the warehouse file when no `--db` is given. */
export const DB_ENV = 'PARCEL_RECON_DB';
/** The warehouse file when neither `--db` nor PARCEL_RECON_DB names one. */
export const DEFAULT_DB = 'data/recon.duckdb';
