#!/usr/bin/env node
// The command line. The sources are TypeScript run through tsx, so the command works right after
// `npm install` with no build step.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
