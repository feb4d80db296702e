/**
 * Sets `vars` on this process's environment (an undefined value removes the variable, as a child's
 * environment leaves it out) and returns what puts every one back as it was.
 */
export function lendEnvironment(vars: NodeJS.ProcessEnv): () => void {
  const saved = Object.keys(vars).map((k) => [k, process.env[k]] as const);
  const set = (entries: Iterable<readonly [string, string | undefined]>) => {
    for (const [k, v] of entries) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  };
  set(Object.entries(vars));
  return () => set(saved);
}
