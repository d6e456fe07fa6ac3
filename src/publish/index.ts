export { publishGeneration, publishedGeneration, type PublishOptions } from './publish.ts';
export { pruneGenerations, pruneGenerationRows, type PruneResult } from './prune.ts';
export {
  BUNDLE_NDJSON_FILES,
  bundleFileText,
  readGenerationHead,
  readGenerationRows,
  type GenerationHead,
  type GenerationRows,
} from './bundle.ts';
export {
  BUNDLE_FORMAT,
  buildBundleDigests,
  bundleManifest,
  manifestText,
  readBundleDigests,
  storeBundleDigests,
  type BundleFileDigest,
  type Manifest,
  type ManifestFile,
} from './bundle-manifest.ts';
export { BUNDLE_FILE_NAMES, exportGeneration, readBundle, type Bundle } from './export.ts';
export {
  compareGenerationRows,
  compareSellerRows,
  firstPeriodDifference,
  formatDifference,
  type Difference,
} from './compare.ts';
