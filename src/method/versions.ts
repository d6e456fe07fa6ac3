import { METHOD_CONSTANTS } from './constants.ts';

/**
 * Every method version this code can compute or audit, with the constants that version defines
 * (docs/METHOD.md). A generation keeps the version it was computed with; a bundle whose constants
 * differ from its version's entry here is not a bundle of that method.
 */
export const METHOD_VERSIONS: Readonly<Record<string, { readonly constants: Readonly<Record<string, unknown>> }>> =
  Object.freeze({
    '1.0.0': { constants: METHOD_CONSTANTS },
  });
