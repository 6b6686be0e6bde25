import { CHARGE_AUDIT_TABLE, chargeAuditQuery } from '../../src/warehouse/charge-audit-rows.js';
import { Warehouse } from '../../src/warehouse/warehouse.js';

/** The audit rows' columns at schema version 1. */
const V1_AUDIT_COLUMNS = [
  'order_code',
  'price_info',
  'lines_total',
  'far_region_line_cost',
  'returned_in_history',
  'cancelled_in_history',
  'delivered_at',
  'quote_id',
  'quote_total',
  'total_at_delivery',
  'total_changed_at',
];

/**
 * Takes the warehouse at `path` back to schema version 1, as a file written by the first release
 * holds it: its audit table of that version, with the rows its writers stored (but for the order
 * `withoutAuditRowOf`, when given).
 */
export async function backToSchemaVersionOne(path: string, withoutAuditRowOf?: string): Promise<void> {
  const warehouse = await Warehouse.open(path);
  try {
    await warehouse.run(
      `CREATE TABLE audit_v1 AS SELECT ${V1_AUDIT_COLUMNS.join(', ')} FROM (${chargeAuditQuery()}) ORDER BY order_code`,
    );
    await warehouse.run(`DROP TABLE ${CHARGE_AUDIT_TABLE}`);
    await warehouse.run(`ALTER TABLE audit_v1 RENAME TO ${CHARGE_AUDIT_TABLE}`);
    if (withoutAuditRowOf !== undefined)
      await warehouse.run(`DELETE FROM ${CHARGE_AUDIT_TABLE} WHERE order_code = $code`, { code: withoutAuditRowOf });
    await warehouse.run('DELETE FROM schema_migrations WHERE version > 1');
  } finally {
    await warehouse.close();
  }
}
