import { METHOD_CONSTANTS_1_0_0, METHOD_CONSTANTS_2_0_0, METHOD_CONSTANTS_3_0_0, METHOD_VERSION } from './constants.ts';
import { TallyError } from '../lib/errors.ts';

export interface MethodVersion {
  readonly constants: Readonly<Record<string, unknown>>;
}

/**
 * Every method version this code can compute or audit, with the constants that version defines
 * (docs/METHOD.md). A generation keeps the version it was computed with; a bundle whose constants
 * differ from its version's entry here is not a bundle of that method. New generations use
 * METHOD_VERSION (the current default) unless configured otherwise; the SQL of each version is
 * sql/method plus sql/method/<version>.
 */
export const METHOD_VERSIONS: Readonly<Record<string, MethodVersion>> = Object.freeze({
  '1.0.0': { constants: METHOD_CONSTANTS_1_0_0 },
  '2.0.0': { constants: METHOD_CONSTANTS_2_0_0 },
  '3.0.0': { constants: METHOD_CONSTANTS_3_0_0 },
});
if (!Object.hasOwn(METHOD_VERSIONS, METHOD_VERSION))
  throw new Error(`the default method ${METHOD_VERSION} has no entry`);

/** The entry of a method version, or an error naming the versions this code implements. */
export function methodVersion(version: string): MethodVersion {
  const entry = Object.hasOwn(METHOD_VERSIONS, version) ? METHOD_VERSIONS[version] : undefined;
  if (!entry) {
    throw new TallyError(
      `method ${version} is not implemented here (known: ${Object.keys(METHOD_VERSIONS).join(', ')})`,
    );
  }
  return entry;
}
