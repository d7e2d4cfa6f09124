/**
 * The environment every test process gets: the server's own minus runset's
 * RUNSET_* settings (test code never sees the database URL or keys), plus the
 * set's variables.
 */
export function testEnvironment(variables: Readonly<Record<string, string>>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!name.startsWith('RUNSET_')) env[name] = value;
  }
  return Object.assign(env, variables);
}
