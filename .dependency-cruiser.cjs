/**
 * The import rule (docs/architecture.md, "Layers"), checked by `npm run lint`. Imports run one way,
 * downwards:
 *
 *   command line   src/cli/, jobs/
 *   settings       src/settings/
 *   runs           src/pipeline/, src/reports/, src/callbacks/
 *   services       src/carriers/client/, src/quota/, src/sources/, src/warehouse/
 *   contract       src/carriers/*.ts (what every carrier shares), src/carriers/<carrier>/*.ts
 *   errors         src/errors/
 *
 * The sandbox (src/sandbox/) stands beside the product and imports only the contract and the errors;
 * a carrier it serves beside 247Express is its folder src/sandbox/carriers/<carrier>/, which
 * sandbox-carriers.ts finds by the carrier's id: nothing else imports it. Outside src/carriers/, nothing of the product imports a carrier's folder: it asks the carrier's
 * definition, which known-carriers.ts registers.
 * Type-only and dynamic imports count like any other.
 */

const CLI = '^src/cli/';
const JOBS = '^jobs/';
const COMMAND_LINE = '^(src/cli|jobs)/';
const SETTINGS = '^src/settings/';
const RUNS = '^src/(pipeline|reports|callbacks)/';
const SERVICES = '^src/(carriers/client|quota|sources|warehouse)/';
const CONTRACT = '^src/carriers/[^/]+$|^src/carriers/(?!client/)[^/]+/[^/]+$';
const ERRORS = '^src/errors/';
const SANDBOX = '^src/sandbox/';
const BENCH = '^bench/';
/** A carrier's own folder: `src/carriers/247express/`, `src/carriers/ghn/`. */
const CARRIER_FOLDER = '^src/carriers/(?!client/)[^/]+/';
const OWN_CODE = '^(src|jobs|bench)/';
/** Libraries only lookups and limits need: loading them costs every command's start. */
const HEAVY_LIBRARIES = '^node_modules/(undici|bottleneck)/';
/** DuckDB's Node API, which src/warehouse/duckdb-library.ts loads for the rest (its comment says why). */
const DUCKDB_API = '^node_modules/@duckdb/node-api/';
const LAYERS = [COMMAND_LINE, SETTINGS, RUNS, SERVICES, CONTRACT, ERRORS, SANDBOX];

/** A rule forbidding `from` to import any of our modules but those of `allowed`. */
function importsOnly(name, comment, from, allowed) {
  return { name, comment, severity: 'error', from: { path: from }, to: { path: OWN_CODE, pathNot: allowed } };
}

module.exports = {
  forbidden: [
    {
      name: 'no-cycle',
      comment: 'Modules import one another in one direction only; a cycle ties them into one.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'jobs-not-cli',
      comment: 'The jobs sit beside the command line, not above it: what both need lives below both.',
      severity: 'error',
      from: { path: JOBS },
      to: { path: CLI },
    },
    {
      name: 'commands-are-leaves',
      comment: 'A command never imports another command: what two commands share goes to a module of src/cli/.',
      severity: 'error',
      from: { path: '^src/cli/commands/([^/]+)$' },
      to: { path: '^src/cli/commands/', pathNot: '^src/cli/commands/$1$' },
    },
    {
      name: 'commands-only-from-main',
      comment: 'Only the entry point starts a command: nothing else of the product builds on one.',
      severity: 'error',
      from: { pathNot: '^src/cli/(main\\.ts|commands/)' },
      to: { path: '^src/cli/commands/' },
    },
    importsOnly(
      'settings-below-command-line',
      'The settings catalog is read by the command line and the jobs and imports neither.',
      SETTINGS,
      [SETTINGS, RUNS, SERVICES, CONTRACT, ERRORS].join('|'),
    ),
    importsOnly(
      'runs-below-settings',
      'Runs, reports and the callback receiver import only their own layer and the layers below.',
      RUNS,
      [RUNS, SERVICES, CONTRACT, ERRORS].join('|'),
    ),
    importsOnly(
      'services-below-runs',
      'The carrier client, quota, sources and warehouse import only their own layer, the contract and the errors.',
      SERVICES,
      [SERVICES, CONTRACT, ERRORS].join('|'),
    ),
    importsOnly(
      'contract-below-services',
      'The contract imports only itself and the errors.',
      CONTRACT,
      [CONTRACT, ERRORS].join('|'),
    ),
    {
      name: 'carriers-apart',
      comment: 'A carrier folder builds on what every carrier shares, never on another carrier.',
      severity: 'error',
      from: { path: '^src/carriers/(?!client/)([^/]+)/' },
      to: { path: CARRIER_FOLDER, pathNot: '^src/carriers/$1/' },
    },
    {
      name: 'carrier-folders-only-from-carriers',
      comment:
        "Nothing of the product names a carrier's folder: runs, reports, the warehouse, sources, callbacks, quota, settings, the command line and the jobs ask the carrier's definition (known-carriers.ts). The sandbox serves each carrier's payloads and the benchmarks drive them.",
      severity: 'error',
      from: {
        path: OWN_CODE,
        pathNot: `^src/carriers/|${SANDBOX}|${BENCH}`,
      },
      to: { path: CARRIER_FOLDER },
    },
    {
      name: 'shared-carrier-parts-name-no-carrier',
      comment:
        'What every carrier shares names no carrier: a carrier folder plugs into it, not the other way; known-carriers.ts registers them.',
      severity: 'error',
      from: { path: '^src/carriers/(client/|[^/]+$)', pathNot: '^src/carriers/known-carriers\\.ts$' },
      to: { path: CARRIER_FOLDER },
    },
    {
      name: 'sandbox-carriers-plug-in',
      comment:
        "Nothing names a carrier the sandbox serves beside 247Express but its own folder: sandbox-carriers.ts finds it by the carrier's id.",
      severity: 'error',
      from: { path: OWN_CODE, pathNot: '^src/sandbox/carriers/[^/]+/' },
      to: { path: '^src/sandbox/carriers/[^/]+/' },
    },
    importsOnly('errors-at-the-bottom', 'The errors import nothing of the product.', ERRORS, ERRORS),
    importsOnly(
      'sandbox-only-contract',
      'The sandbox behaves as the documented carrier: it imports the contract (and the errors), nothing else of the product.',
      SANDBOX,
      [SANDBOX, CONTRACT, ERRORS].join('|'),
    ),
    {
      name: 'only-command-line-starts-sandbox',
      comment: 'The product never imports the sandbox; `parcel-recon sandbox`, `demo` and the benchmarks start it.',
      severity: 'error',
      from: { path: OWN_CODE, pathNot: `${CLI}|${SANDBOX}|${BENCH}` },
      to: { path: SANDBOX },
    },
    {
      name: 'nothing-imports-bench',
      comment: 'The benchmarks use the product; the product never uses them.',
      severity: 'error',
      from: { path: OWN_CODE, pathNot: BENCH },
      to: { path: BENCH },
    },
    {
      name: 'every-folder-in-a-layer',
      comment: 'A folder of src/ the layers do not name: place it in a layer here and in docs/architecture.md.',
      severity: 'error',
      from: { path: '^src/', pathNot: LAYERS.join('|') },
      to: {},
    },
    {
      name: 'settings-load-light',
      comment:
        'Every command loads the settings catalog before it knows what it will run: the catalog names defaults from modules that load no HTTP client or limiter library.',
      severity: 'error',
      from: { path: SETTINGS },
      to: { path: HEAVY_LIBRARIES, reachable: true },
    },
    {
      name: 'duckdb-values-from-its-loader',
      comment:
        "An ES import of DuckDB's CommonJS API slows every command's start: its values come from src/warehouse/duckdb-library.ts, only its types from the package.",
      severity: 'error',
      from: { path: OWN_CODE, pathNot: '^src/warehouse/duckdb-library\\.ts$' },
      to: { path: DUCKDB_API, dependencyTypesNot: ['type-only'] },
    },
  ],
  options: {
    includeOnly: `${OWN_CODE}|${HEAVY_LIBRARIES}|${DUCKDB_API}`,
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.js'],
    },
  },
};
