/**
 * What the signed-in key may do, from the session (the server decides which
 * operations; the page only hides what would be refused). Until the session
 * is known, nothing is offered.
 */
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { SessionInfo } from '../../core/wire-dashboard.js';

export const AccessContext = createContext<SessionInfo | undefined>(undefined);

/** Whether the signed-in key may call an operation (by its operationId in the API's OpenAPI document). */
export function useMay(): (operationId: string) => boolean {
  const session = useContext(AccessContext);
  return (operationId) => session?.operations.includes(operationId) ?? false;
}

export function useSession(): SessionInfo | undefined {
  return useContext(AccessContext);
}
