export { computeGeneration, type AsOfPoint, type ComputeOptions } from './compute.ts';
export { windowOf } from '../lib/as-of.ts';
export { DERIVED_STATE_TABLES, DERIVED_TABLES, forgetDerivedState, type DerivedTable } from './derived.ts';
export {
  CATEGORIES,
  METHOD_CONSTANTS_1_0_0,
  METHOD_CONSTANTS_2_0_0,
  METHOD_CONSTANTS_3_0_0,
  METHOD_VERSION,
  type Category,
} from './constants.ts';
export { loadMethodSteps, type MethodStep } from './sql-files.ts';
export { METHOD_VERSIONS, methodVersion } from './versions.ts';
