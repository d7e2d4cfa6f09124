// The action's post step (action.yml `runs.post`): the code is src/action/index.ts, bundled into ./runset.mjs.
import { post } from './runset.mjs';

process.exitCode = await post();
