/**
 * Which folder of src/ may import which (`npm run lint` runs this through
 * dependency-cruiser). Folders import downward only: each row lists the folders
 * below it that it may use, so a new arrow is a deliberate edit of this table
 * (and of docs/architecture.md, which shows the same table).
 */
const MAY_IMPORT = {
  core: [],
  net: ['core'],
  secrets: ['core'],
  executors: ['core', 'net'],
  config: ['core', 'net', 'secrets', 'executors'],
  artifacts: ['core', 'secrets'],
  store: ['core', 'artifacts'],
  auth: ['core', 'store'],
  sets: ['core', 'config', 'secrets', 'store', 'artifacts'],
  suites: ['core', 'config', 'executors'],
  history: ['core', 'store', 'sets'],
  retention: ['core', 'store', 'artifacts'],
  webhooks: ['core', 'net', 'store'],
  'worker-link': ['core', 'store', 'artifacts', 'sets'],
  scheduler: ['core', 'secrets', 'store', 'artifacts', 'executors', 'sets', 'worker-link', 'suites'],
  metrics: ['core', 'config', 'store', 'scheduler'],
  dashboard: ['core', 'auth'],
  api: ['core', 'config', 'secrets', 'store', 'artifacts', 'auth', 'sets', 'history', 'dashboard', 'worker-link', 'suites', 'client', 'mcp'],
  client: ['core'],
  mcp: ['core', 'client'],
  roles: ['core', 'config', 'secrets', 'store', 'artifacts', 'auth', 'executors', 'sets', 'suites', 'retention', 'webhooks', 'worker-link', 'scheduler', 'api'],
  demo: [],
  action: ['core', 'client', 'cli'],
  docs: ['core', 'config', 'store', 'auth', 'api', 'cli'],
};
const FOLDERS = Object.keys(MAY_IMPORT);

const downwardOnly = FOLDERS.map((folder) => ({
  name: `${folder}-imports-downward`,
  comment: `src/${folder}/ may import only ${MAY_IMPORT[folder].map((f) => `src/${f}/`).join(', ') || 'nothing of ours'} (see .dependency-cruiser.cjs)`,
  severity: 'error',
  from: { path: `^src/${folder}/` },
  to: { path: '^src/', pathNot: [`^src/(${[folder, ...MAY_IMPORT[folder]].join('|')})/`] },
}));

module.exports = {
  forbidden: [
    ...downwardOnly,
    {
      name: 'no-reaching-into-a-backend',
      comment: 'src/store/sqlite/ and src/store/postgres/ are the store\'s insides: outside src/store/, import what src/store/ offers (store.ts, open.ts, sqlite-file.ts)',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/store/' },
      to: { path: '^src/store/(sqlite|postgres)/' },
    },
    {
      name: 'no-circular',
      comment: 'an import circle: split the shared part into a module both can import',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'browser-imports-no-server',
      comment: 'the dashboard bundle (src/dashboard/ui/) runs in the browser: wire shapes and pure view helpers only',
      severity: 'error',
      from: { path: '^src/dashboard/ui/' },
      to: {
        path: '^src/',
        pathNot: ['^src/dashboard/ui/', '^src/core/(wire[^/]*|states|starts|types|keys|quarantine|duration|result-cases)\\.ts$', '^src/dashboard/(env-trend|failure-groups|test-table|chart-scale|timeline-layout|failure-trend)\\.ts$'],
      },
    },
    {
      name: 'browser-imports-no-node',
      comment: 'the dashboard bundle runs in the browser: no Node built-in modules',
      severity: 'error',
      from: { path: '^src/dashboard/ui/' },
      to: { dependencyTypes: ['core'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.tsx', '.cts', '.js'] },
  },
};
