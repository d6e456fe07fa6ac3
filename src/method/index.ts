export { computeGeneration, windowOf, type AsOfPoint, type ComputeOptions } from './compute.ts';
export { CATEGORIES, METHOD_CONSTANTS, METHOD_CONSTANTS_1_0_0, METHOD_VERSION, type Category } from './constants.ts';
export { loadMethodSteps, type MethodStep } from './sql-files.ts';
export { METHOD_VERSIONS, methodVersion } from './versions.ts';
