/** `--name` / `--suite-name`: checked when parsed, so a typo fails before anything is packed or sent. */
import { InvalidArgumentError } from 'commander';
import { SUITE_NAME } from '../core/suites.js';

export function parseSuiteName(value: string): string {
  if (!SUITE_NAME.test(value)) {
    throw new InvalidArgumentError('expected a name such as main, pr-123 or release/2.4 (letters, digits, ".", "_", "/", "-"; at most 100, starting with a letter or digit)');
  }
  return value;
}
