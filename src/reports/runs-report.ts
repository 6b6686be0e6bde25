import { TOTAL_ALIAS } from '../quota/quota-policy.js';
import { sqlText } from '../warehouse/sql-literals.js';
import type { ReportScope } from './report-sql.js';

/** `carrier_day` conditions of a scope's days (the runs' and the quota ledger's day column). */
function carrierDayCondition(scope: ReportScope): string[] {
  const conditions: string[] = [];
  if (scope.fromDay !== undefined) conditions.push(`carrier_day >= DATE ${sqlText(scope.fromDay)}`);
  if (scope.toDay !== undefined) conditions.push(`carrier_day <= DATE ${sqlText(scope.toDay)}`);
  return conditions;
}

function where(conditions: readonly string[]): string {
  return conditions.length === 0 ? '' : `WHERE ${conditions.join(' AND ')}`;
}

/** The latest `limit` runs of the scope's carrier days, newest first, with their counts and how they ended. */
export function latestRunsQuery(scope: ReportScope, limit: number): string {
  return `
    SELECT run_id, job, source, carrier_day, started_at, finished_at,
           round(epoch_us(finished_at) / 1e6 - epoch_us(started_at) / 1e6, 1) AS seconds,
           codes_read, codes_rejected, codes_duplicate, codes_to_look_up, looked_up_ok, carrier_errors, transport_errors,
           deferred, lookups_spent, exit_code, exit_state
    FROM runs ${where(carrierDayCondition(scope))}
    ORDER BY started_at DESC, run_id
    LIMIT ${limit}`;
}

/**
 * Lookups per carrier day and key alias from the quota ledger (without its all-keys row), within the
 * scope's days; an account limits it to the key of that alias.
 */
export function quotaUsageQuery(scope: ReportScope): string {
  const conditions = [...carrierDayCondition(scope), `key_alias <> ${sqlText(TOTAL_ALIAS)}`];
  if (scope.account !== undefined) conditions.push(`key_alias = ${sqlText(scope.account)}`);
  return `
    SELECT carrier_day, key_alias, lookups
    FROM quota_usage ${where(conditions)}
    ORDER BY carrier_day, key_alias`;
}
