import { UsageError, type CliCommand, type CliContext } from '../command.ts';
import { keyFingerprint, openSecretStore } from '../../../core/secrets.ts';
import { COMMANDS } from '../../../../shared/contract/index.ts';

/** The key typed or piped in ('' at end of input with none); null when the user pressed Ctrl-C at the prompt. */
async function readSecret(ctx: CliContext): Promise<string | null> {
  const { stdin, stderr } = ctx;
  if (stdin.isTTY && 'setRawMode' in stdin) {
    // Typed at a prompt without echo, so it is neither on screen nor in shell history. Raw before
    // the prompt shows, so a key pressed as soon as it appears is not echoed.
    const tty = stdin as NodeJS.ReadStream;
    tty.setRawMode(true);
    stderr.write('API key: ');
    return new Promise((resolve) => {
      let value = '';
      // The terminal back as it was and stdin let go: a listener left on it kept the process
      // alive after Ctrl-C, at a prompt that no longer read anything.
      const done = (result: string | null) => {
        tty.setRawMode(false);
        tty.off('data', onData);
        tty.pause();
        stderr.write('\n');
        resolve(result);
      };
      // Raw mode turns line editing off, so it is done here: DEL and Ctrl-H erase; Ctrl-D on an empty
      // line is end of input (no key, exit 2, as an empty pipe); Ctrl-D after typed characters is
      // ignored, as getpass(3) does, so a half-typed key is never stored.
      const onData = (buf: Buffer) => {
        for (const ch of buf.toString('utf8')) {
          if (ch === '\r' || ch === '\n') return done(value);
          if (ch === '\u0003') return done(null);
          if (ch === '\u0004') {
            if (!value) return done('');
          } else value = ch === '\u007f' || ch === '\b' ? value.slice(0, -1) : value + ch;
        }
      };
      tty.on('data', onData);
      tty.resume();
    });
  }
  const chunks: Buffer[] = [];
  for await (const c of stdin) chunks.push(Buffer.from(c));
  return Buffer.concat(chunks).toString('utf8');
}

export const keyCommand: CliCommand = {
  name: 'key',
  usage:
    'mediadesk key set   (reads the key from standard input; at a terminal, typed at a prompt without echo:\n                            Ctrl-C cancels, exit 130; Ctrl-D on an empty line ends with no key, exit 2)\n       mediadesk key status\n       mediadesk key clear',
  async run(ctx) {
    const [sub, ...extra] = ctx.argv;
    const secrets = await openSecretStore(ctx.env.MEDIADESK_KEYCHAIN_SERVICE || undefined);
    switch (sub) {
      case 'set': {
        if (extra.length)
          throw new UsageError(
            'the key is read from standard input, never from the command line (it would stay in shell history): echo "$KEY" | mediadesk key set',
          );
        const typed = await readSecret(ctx);
        if (typed === null) {
          ctx.stderr.write('mediadesk key: cancelled; no key stored\n');
          return 130;
        }
        if (!typed.trim())
          throw new UsageError(
            `no key ${ctx.stdin.isTTY ? 'typed' : 'given (standard input was empty)'}; no key stored`,
          );
        const parsed = COMMANDS['key.set'].request.safeParse({ key: typed });
        if (!parsed.success)
          throw new UsageError(`key not stored: ${parsed.error.issues[0]?.message ?? 'invalid key'}`);
        if (secrets.problem !== null) throw new Error(`key not stored: ${secrets.problem}`);
        await secrets.set(parsed.data.key).catch((err: Error) => {
          throw new Error(`key not stored: ${err.message}`);
        });
        ctx.stdout.write(`API key ${keyFingerprint(parsed.data.key)} stored in the OS keychain\n`);
        return 0;
      }
      case 'status': {
        if (extra.length) throw new UsageError('key status takes no arguments');
        // The environment wins over the keychain (Backend's order): say so, or the line below misleads.
        if (ctx.env.MEDIADESK_API_URL && ctx.env.MEDIADESK_API_KEY) {
          ctx.stderr.write(
            `MEDIADESK_API_URL and MEDIADESK_API_KEY are set: commands here use ${ctx.env.MEDIADESK_API_URL} with key ${keyFingerprint(ctx.env.MEDIADESK_API_KEY)} from the environment, whatever the keychain holds\n`,
          );
        }
        const key = await secrets.get();
        if (key !== null) ctx.stdout.write(`an API key is set (key ${keyFingerprint(key)}, ${secrets.note})\n`);
        else if (secrets.kind === 'os') ctx.stdout.write('no API key is set; the app uses the built-in Sandbox\n');
        else ctx.stdout.write(`no API key can be read: ${secrets.problem}\n`);
        return 0;
      }
      case 'clear':
        if (extra.length) throw new UsageError('key clear takes no arguments');
        // The memory store would "clear" a key only this process could see: saying removed would be false.
        if (secrets.problem !== null) throw new Error(`key not cleared: ${secrets.problem}`);
        await secrets.clear().catch((err: Error) => {
          throw new Error(`key not cleared: ${err.message}`);
        });
        ctx.stdout.write('API key removed from the keychain\n');
        return 0;
      default:
        throw new UsageError(sub ? `unknown key command "${sub}" (set, status, clear)` : 'say set, status or clear');
    }
  },
};
