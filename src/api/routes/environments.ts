/**
 * GET /api/v0/environments — what the dashboard's trigger form offers: each
 * environment, how many tests it runs, and its declared variables (the only
 * keys envOverride accepts). A secret variable's value is never sent.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { testsForEnvironment } from '../../config/suite.js';
import { describeRule } from '../../config/override-rules.js';
import { EnvironmentList } from '../../core/wire-dashboard.js';
import type { AppDeps } from '../deps.js';
import { named, problems, SECURED } from './common.js';
import { seesSetEnv } from '../permission.js';

export const environmentRoutes: FastifyPluginAsync<{ deps: AppDeps }> = (app, { deps }) => {
  app.withTypeProvider<TypeBoxTypeProvider>().get(
    '/environments',
    {
      schema: {
        summary: 'List environments and their declared variables (never secret values)',
        description: "What a set may be created for: each environment, its test count, and the variables envOverride may set.",
        tags: ['Environments'],
        operationId: 'listEnvironments',
        security: SECURED,
        response: { 200: named(EnvironmentList, 'The configured environments, by name'), ...problems(401) },
      },
    },
    (request) => {
      const config = deps.suite();
      const visible = [...config.environments.values()].filter((env) => seesSetEnv(request.apiKey, env.name));
      const environments = visible.map((env) => ({
        name: env.name,
        tests: testsForEnvironment(config, env.name).length,
        variables: Object.entries(env.variables).map(([name, value]) => {
          const rule = env.overrideRules[name];
          const accepts = rule ? describeRule(rule) : null;
          return value.kind === 'plain' ? { name, secret: false, value: value.value, accepts } : { name, secret: true, value: null, accepts };
        }),
      }));
      return Promise.resolve({ environments });
    },
  );
  return Promise.resolve();
};
