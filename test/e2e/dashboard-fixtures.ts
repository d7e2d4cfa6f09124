/** The suite the dashboard tests run: two environments, a secret variable, a pass, a fail and a slow one. */
export const DASHBOARD_SECRET = 'dash-secret-value-never-shown';
export const OVERRIDE_SECRET = 'override-secret-never-shown';

export const DASHBOARD_CONFIG = `
environments:
  staging:
    variables:
      GREETING: hello
      TOKEN: \${env:DASH_TOKEN}
  preview:
    variables:
      GREETING: hi
tests:
  - name: passes
    type: command
    run: [node, -e, "process.exit(0)"]
  - name: token is the override
    type: command
    run: [node, -e, "process.exit(process.env.TOKEN === '${OVERRIDE_SECRET}' ? 0 : 1)"]
    environments: [staging]
`;
