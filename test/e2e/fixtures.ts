/** Suite configs shared by the end-to-end tests. */
export const MIXED_CONFIG = `
environments:
  staging:
    variables:
      GREETING: hello
      SECRET_TOKEN: \${env:E2E_SECRET_TOKEN}
  lonely:
    variables:
      GREETING: hi
tests:
  - name: passes
    type: command
    run: [node, -e, "process.exit(process.env.GREETING === 'hello' ? 0 : 1)"]
    environments: [staging]
  - name: prints secret then fails
    type: command
    run: [node, -e, "console.log('token is ' + process.env.SECRET_TOKEN); process.exit(3)"]
    environments: [staging]
`;

export const SECRET_VALUE = 's3cr3t-value-that-must-not-leak';
