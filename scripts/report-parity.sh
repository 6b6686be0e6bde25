#!/usr/bin/env bash
# Compares the reports two builds of parcel-recon write from the same synthetic warehouse, byte for
# byte apart from the new carrier column: the warehouse is built by the OLD build (its schema), its reports written by the OLD CLI; a copy
# is upgraded by the NEW CLI (`parcel-recon upgrade`) and the same reports written by the NEW CLI.
# Usage: scripts/report-parity.sh OLD_CHECKOUT NEW_CHECKOUT WORK_DIR [ORDERS]
# Each checkout must be built (npm run build). Exits 1 when a report differs.
set -euo pipefail
old=$(cd "$1" && pwd) new=$(cd "$2" && pwd) work=$3 orders=${4:-3000}
rm -rf "$work" && mkdir -p "$work"
export PARCEL_RECON_NOW=2026-12-05T00:00:00Z TZ=UTC
(cd "$old" && node --input-type=module -e "
  const { buildSyntheticWarehouse } = await import('$old/dist/bench/support/synthetic-warehouse.js');
  await buildSyntheticWarehouse('$work/old.duckdb', $orders, '$work/partner.csv', { payouts: true });")
cp "$work/old.duckdb" "$work/new.duckdb"
node "$new/dist/src/cli/main.js" upgrade --db "$work/new.duckdb"
reports() { # CLI SIDE
  local cli=$1 side=$2 db="$work/$2.duckdb"
  for format in csv json xlsx parquet; do
    local out="$work/$side/$format"
    node "$cli" report charges --db "$db" --format "$format" --out "$out/charges" --invoices "$work/partner.csv" >/dev/null
    node "$cli" report failures --db "$db" --format "$format" --out "$out/failures" >/dev/null
    node "$cli" report reconcile --db "$db" --format "$format" --out "$out/reconcile" --partner "$work/partner.csv" >/dev/null || true
    node "$cli" report cod --db "$db" --format "$format" --out "$out/cod" >/dev/null || true
    node "$cli" report charges --db "$db" --format "$format" --out "$out/charges-range" --from 2026-10-20 --to 2026-10-27 >/dev/null
    node "$cli" report failures --db "$db" --format "$format" --out "$out/failures-range" --from 2026-10-20 --to 2026-10-27 >/dev/null
  done
  node "$cli" report html --db "$db" --out "$work/$side/report.html" >/dev/null
}
reports "$old/dist/src/cli/main.js" old
reports "$new/dist/src/cli/main.js" new
# The files are compared apart from the new reports' carrier column.
node "$new/scripts/report-parity-compare.mjs" "$work/old" "$work/new"
