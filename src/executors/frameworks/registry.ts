/** Every framework adapter, by its `type:`: adding a framework is one adapter and one line here (and its name in FRAMEWORKS). */
import type { FrameworkName } from '../../core/types.js';
import type { FrameworkAdapter } from './adapter.js';
import { cucumberAdapter } from './cucumber.js';
import { jestAdapter } from './jest.js';
import { newmanAdapter } from './newman.js';
import { pytestAdapter } from './pytest.js';
import { mochaAdapter } from './mocha.js';
import { vitestAdapter } from './vitest.js';

export const FRAMEWORK_ADAPTERS: { readonly [F in FrameworkName]: FrameworkAdapter } = Object.freeze({
  vitest: vitestAdapter,
  jest: jestAdapter,
  mocha: mochaAdapter,
  cucumber: cucumberAdapter,
  pytest: pytestAdapter,
  newman: newmanAdapter,
});
