export { computeGeneration, windowOf, type AsOfPoint, type ComputeOptions } from './compute.ts';
export { CATEGORIES, METHOD_CONSTANTS, METHOD_VERSION, type Category } from './constants.ts';
export { loadMethodSteps, type MethodStep } from './sql-files.ts';
