// Compares two folders of report files, file by file, apart from a `carrier` column the NEW files
// have and the OLD ones do not (the first column of a table, or a key of a JSON row): CSV and JSON as
// text, Parquet by its rows, an XLSX workbook by its cells, an HTML page without its carrier headers
// and the cells holding a carrier id (CARRIER_IDS, comma-separated; 247express by default), anything
// else byte for byte.
// Usage: node scripts/report-parity-compare.mjs OLD_DIR NEW_DIR; exits 1 when a file differs.
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import ExcelJS from 'exceljs';

const [oldDir, newDir] = process.argv.slice(2);
const BOM = '\uFEFF';
const CARRIER_IDS = (process.env.CARRIER_IDS ?? '247express').split(',');

function htmlWithoutCarrierCells(html) {
  const cells = CARRIER_IDS.map((id) => id.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|');
  return html.replace(/<th[^>]*>carrier<\/th>/g, '').replace(new RegExp(`<td[^>]*>(${cells})</td>`, 'g'), '');
}

async function filesOf(dir) {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => relative(dir, join(e.parentPath ?? e.path, e.name)));
}

function csvWithoutCarrier(oldText, newText) {
  const strip = (text) => text.replace(BOM, '');
  const oldLines = strip(oldText).split('\n');
  const newLines = strip(newText).split('\n');
  if (newLines[0]?.startsWith('carrier,') && !oldLines[0]?.startsWith('carrier,'))
    return [
      oldLines.join('\n'),
      newLines.map((line) => (line === '' ? line : line.slice(line.indexOf(',') + 1))).join('\n'),
    ];
  return [oldLines.join('\n'), newLines.join('\n')];
}

function withoutCarrierKeys(oldValue, newValue) {
  if (Array.isArray(oldValue) && Array.isArray(newValue))
    return [oldValue, newValue.map((item, i) => withoutCarrierKeys(oldValue[i], item)[1])];
  if (oldValue && newValue && typeof oldValue === 'object' && typeof newValue === 'object') {
    const { carrier, ...rest } = newValue;
    const kept = 'carrier' in oldValue ? newValue : rest;
    return [
      oldValue,
      Object.fromEntries(Object.entries(kept).map(([k, v]) => [k, withoutCarrierKeys(oldValue[k], v)[1]])),
    ];
  }
  return [oldValue, newValue];
}

const connection = await (await DuckDBInstance.create(':memory:')).connect();
async function parquetRows(path, exclude) {
  const reader = await connection.runAndReadAll(
    `SELECT * ${exclude ? 'EXCLUDE (carrier)' : ''} FROM read_parquet('${path.replaceAll("'", "''")}')`,
  );
  return JSON.stringify({ columns: reader.columnNames(), rows: reader.getRowsJson() });
}
async function parquetColumns(path) {
  return (
    await connection.runAndReadAll(`SELECT * FROM read_parquet('${path.replaceAll("'", "''")}') LIMIT 0`)
  ).columnNames();
}

async function workbookCells(path, dropCarrierOf) {
  const book = new ExcelJS.Workbook();
  await book.xlsx.readFile(path);
  return book.worksheets.map((sheet) => {
    const rows = [];
    sheet.eachRow({ includeEmpty: true }, (row) => rows.push((row.values ?? []).slice(1)));
    const drop = dropCarrierOf(sheet.name, rows[0]?.[0]);
    return { name: sheet.name, rows: drop ? rows.map((r) => r.slice(1)) : rows };
  });
}

let differing = 0;
let compared = 0;
const oldFiles = await filesOf(oldDir);
for (const file of (await filesOf(newDir)).filter((name) => !oldFiles.includes(name))) {
  differing++;
  console.log(`only in ${newDir}: ${file}`);
}
for (const file of oldFiles) {
  const oldPath = join(oldDir, file);
  const newPath = join(newDir, file);
  let same;
  compared++;
  try {
    if (file.endsWith('.csv')) {
      const [a, b] = csvWithoutCarrier(await readFile(oldPath, 'utf8'), await readFile(newPath, 'utf8'));
      same = a === b;
    } else if (file.endsWith('.json')) {
      const [a, b] = withoutCarrierKeys(
        JSON.parse(await readFile(oldPath, 'utf8')),
        JSON.parse(await readFile(newPath, 'utf8')),
      );
      same = JSON.stringify(a) === JSON.stringify(b);
    } else if (file.endsWith('.parquet')) {
      const exclude =
        (await parquetColumns(newPath))[0] === 'carrier' && (await parquetColumns(oldPath))[0] !== 'carrier';
      same = (await parquetRows(oldPath, false)) === (await parquetRows(newPath, exclude));
    } else if (file.endsWith('.xlsx')) {
      const oldSheets = await workbookCells(oldPath, () => false);
      const oldFirst = new Map(oldSheets.map((s) => [s.name, s.rows[0]?.[0]]));
      const newSheets = await workbookCells(
        newPath,
        (name, first) => first === 'carrier' && oldFirst.get(name) !== 'carrier',
      );
      same = JSON.stringify(oldSheets) === JSON.stringify(newSheets);
    } else if (file.endsWith('.html')) {
      same =
        htmlWithoutCarrierCells(await readFile(oldPath, 'utf8')) ===
        htmlWithoutCarrierCells(await readFile(newPath, 'utf8'));
    } else {
      same = (await readFile(oldPath)).equals(await readFile(newPath));
    }
  } catch (error) {
    same = false;
    console.error(`${file}: ${error.message}`);
  }
  if (!same) {
    differing++;
    console.log(`differs: ${file}`);
  }
}
console.log(`${compared} files compared, ${differing} differ`);
process.exit(differing === 0 ? 0 : 1);
