// The x402-tally command line entry: the only place that calls process.exit.
import { runCommand } from './command.ts';

const code = await runCommand(process.argv.slice(2), process.env);
// Let pending stderr writes drain before the exit code is set.
process.exitCode = code;
process.exit(code);
