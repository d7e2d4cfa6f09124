/** A JUnit report of three cases (one passes, one fails, one is skipped) and a command entry that writes it, then exits 1. */
export const REPORT = `<?xml version="1.0" encoding="UTF-8"?>
<testsuites>
  <testsuite name="api" tests="3" failures="1" skipped="1">
    <testcase classname="api.Users" name="creates a user" time="0.012"/>
    <testcase classname="api.Users" name="rejects a duplicate" time="0.4"><failure message="expected 409, got 200 for token {{TOKEN}}">AssertionError: expected 409
    at users.test.js:12</failure></testcase>
    <testcase classname="api.Users" name="is pending" time="0"><skipped/></testcase>
  </testsuite>
</testsuites>`;

/** The `tests:` line of a command `name` that writes REPORT (TOKEN in it) to reports/junit.xml under `dir` and fails. */
export function junitCommandEntry(name: string, dir: string): string {
  const write = `const fs = require('node:fs'); fs.mkdirSync('reports', { recursive: true }); fs.writeFileSync('reports/junit.xml', ${JSON.stringify(REPORT)}.replace('{{TOKEN}}', process.env.TOKEN)); process.exit(1);`;
  return `  - { name: ${name}, type: command, run: [${JSON.stringify(process.execPath)}, -e, ${JSON.stringify(write)}], cwd: ${JSON.stringify(dir)}, junit: "reports/*.xml" }`;
}
