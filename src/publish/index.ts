export { publishGeneration, publishedGeneration, type PublishOptions } from './publish.ts';
export { pruneGenerations, type PruneResult } from './prune.ts';
export { readGenerationRows, type GenerationRows } from './bundle.ts';
export {
  BUNDLE_FILE_NAMES,
  BUNDLE_FORMAT,
  bundleFiles,
  exportGeneration,
  readBundle,
  type Bundle,
  type Manifest,
  type ManifestFile,
} from './export.ts';
export {
  compareGenerationRows,
  compareSellerRows,
  firstPeriodDifference,
  formatDifference,
  type Difference,
} from './compare.ts';
