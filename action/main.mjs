// The action's main step (action.yml `runs.main`): the code is src/action/index.ts, bundled into ./runset.mjs.
import { main } from './runset.mjs';

process.exitCode = await main();
