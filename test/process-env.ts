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

/**
 * Variables a process reads once, at its start or at its first use of a native module, so that a
 * command or host given one needs a process of its own: Node's options, the launcher's choice of the
 * sources, and the D-Bus session the keychain module connects to (kept for the process's life).
 */
export const PROCESS_ONLY = ['NODE_OPTIONS', 'MEDIADESK_FROM_SOURCE', 'DBUS_SESSION_BUS_ADDRESS'];

/** Whether `env` sets one of PROCESS_ONLY. */
export const needsOwnProcess = (env: NodeJS.ProcessEnv) => PROCESS_ONLY.some((name) => name in env);
