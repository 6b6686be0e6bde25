// The package registry here serves DuckDB's native bindings for Linux only, so `npm install` leaves
// the other platforms' optional bindings out of package-lock.json, and `npm ci` then refuses the
// lock file. This puts back an entry (version, os, cpu, libc) for each binding the lock file lacks.
import { readFileSync, writeFileSync } from 'node:fs';

const LOCK_FILE = 'package-lock.json';
const lock = JSON.parse(readFileSync(LOCK_FILE, 'utf8'));
const bindings = lock.packages['node_modules/@duckdb/node-bindings'];
if (bindings === undefined) throw new Error(`${LOCK_FILE} has no @duckdb/node-bindings`);

const added = [];
for (const [name, version] of Object.entries(bindings.optionalDependencies ?? {})) {
  const key = `node_modules/${name}`;
  if (lock.packages[key] !== undefined) continue;
  const [os, cpu, libcSuffix] = name.replace('@duckdb/node-bindings-', '').split('-');
  const entry = { version, cpu: [cpu] };
  if (os === 'linux') entry.libc = [libcSuffix === 'musl' ? 'musl' : 'glibc'];
  Object.assign(entry, { license: 'MIT', optional: true, os: [os] });
  lock.packages[key] = entry;
  added.push(name);
}
lock.packages = Object.fromEntries(
  Object.entries(lock.packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a < b ? -1 : a > b ? 1 : 0)),
);
writeFileSync(LOCK_FILE, `${JSON.stringify(lock, null, 2)}\n`);
console.log(added.length === 0 ? 'package-lock.json already lists every DuckDB binding' : `added ${added.join(', ')}`);
