/**
 * Module resolution hook (see ./esm-fallback.ts): when a Playwright package
 * cannot be found from the importing file, resolve it from runset's own folder.
 * Everything else resolves exactly as before.
 */
const PLAYWRIGHT_PACKAGES = /^(@playwright\/test|playwright|playwright-core)(\/|$)/;

interface ResolveContext {
  parentURL?: string;
  [key: string]: unknown;
}

type NextResolve = (specifier: string, context: ResolveContext) => Promise<unknown>;

export async function resolve(specifier: string, context: ResolveContext, next: NextResolve): Promise<unknown> {
  try {
    return await next(specifier, context);
  } catch (error) {
    const notFound = (error as { code?: string }).code === 'ERR_MODULE_NOT_FOUND';
    if (!notFound || !PLAYWRIGHT_PACKAGES.test(specifier)) throw error;
    return next(specifier, { ...context, parentURL: import.meta.url });
  }
}
