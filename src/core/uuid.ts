/**
 * The one spelling of a UUID that runset accepts where it checks an id itself
 * (path parameters, cursors, CLI flags): 8-4-4-4-12 hex digits, either case.
 * JSON Schema's `format: uuid` alone also takes a `urn:uuid:` prefix, which no
 * id of ours has, so schemas add this pattern too.
 */

/** Unanchored, for finding ids inside text. */
export const UUID_SOURCE = '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}';

/** A whole string that is a UUID, as a JSON Schema `pattern` (which takes no flags). */
export const UUID_PATTERN = `^${UUID_SOURCE}$`;

const WHOLE_UUID = new RegExp(UUID_PATTERN);

export function isUuid(text: string): boolean {
  return WHOLE_UUID.test(text);
}
