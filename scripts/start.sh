#!/usr/bin/env bash
# The README's start command: installs what is missing (Node 24 from the npm registry when the
# system Node is older, npm dependencies), builds, and starts MediaDesk in Sandbox mode (no key
# needed). Electron when its binary and a display are there; otherwise the web host, whose URL
# (with its per-launch token) is printed on the first line.
set -euo pipefail
cd "$(dirname "$0")/.."
source .ci/env.sh

if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm_config_nodedir="${NODE24_DIR:-}" npm ci --no-audit --no-fund
fi
log=$(mktemp)
if ! npx electron-vite build >"$log" 2>&1; then cat "$log"; exit 1; fi
rm -f "$log"

# Read electron's own record of its binary: require('electron') would try to download a missing one.
electron_bin=$(node -e "const fs=require('fs'),p=require('path');try{const d=p.dirname(require.resolve('electron/package.json'));const f=p.join(d,'dist',fs.readFileSync(p.join(d,'path.txt'),'utf8').trim());if(fs.existsSync(f))console.log(f)}catch{}" 2>/dev/null || true)
has_display=1
if [ "$(uname)" = Linux ] && [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ]; then has_display=0; fi

if [ -n "$electron_bin" ] && [ "$has_display" = 1 ]; then
  exec "$electron_bin" .
fi
[ -z "$electron_bin" ] && echo "(the Electron binary is not installed here; starting the web host: open the URL below)" >&2
[ "$has_display" = 0 ] && [ -n "$electron_bin" ] && echo "(no display; starting the web host: open the URL below)" >&2
exec node bin/web.js "$@"
