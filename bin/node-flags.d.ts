// The types of bin/node-flags.js (plain JavaScript, as bin/ is: it runs before tsx is registered).
export declare const COMMAND_PROCESS: Record<
  'audit' | 'run' | 'schedule',
  { readonly node: readonly string[]; readonly env: Readonly<Record<string, string>> }
>;
