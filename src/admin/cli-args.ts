// The operator CLIs' arguments (npm run keys, npm run payments): `--name value` flags, `--json` alone,
// and positional words, in any order. A flag without its value is the caller's `usage` error.
// `--help`, `-h` or `help` anywhere asks for the usage: printed on stdout, exit 0 (see wantsHelp).

export interface CliArgs {
  flags: Record<string, string>;
  positional: string[];
}

export function splitArgs(args: string[], usage: (problem: string) => never): CliArgs {
  const flags: Record<string, string> = {};
  const positional: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--json') flags.json = 'yes';
    else if (arg.startsWith('--')) {
      const value = args[++i];
      if (value === undefined || value.startsWith('--')) usage(`${arg} needs a value`);
      flags[arg.slice(2)] = value;
    } else positional.push(arg);
  }
  return { flags, positional };
}

/** Whether the arguments ask for the usage rather than a command: `--help`, `-h`, or the word `help` first. */
export function wantsHelp(args: string[]): boolean {
  return args[0] === 'help' || args.some((a) => a === '--help' || a === '-h');
}
