// Given to a CLI process with `--import`: appends every module it resolves (ESM and require alike)
// to the file MEDIADESK_TEST_MODULE_LIST, one URL a line, so a test can say what a command loaded.
import { appendFileSync } from 'node:fs';
import { registerHooks } from 'node:module';

const list = process.env.MEDIADESK_TEST_MODULE_LIST;
const seen = new Set<string>();
if (list)
  registerHooks({
    resolve(specifier, context, next) {
      const resolved = next(specifier, context);
      if (!seen.has(resolved.url)) {
        seen.add(resolved.url);
        appendFileSync(list, `${resolved.url}\n`);
      }
      return resolved;
    },
  });
