#!/usr/bin/env bash
# The README's start command: installs what is missing (Node 24 from the npm registry when the
# system Node is older, npm dependencies), builds when something changed since the last build, and
# starts MediaDesk on the Sandbox. `--build-only` stops after the build step.
set -euo pipefail
cd "$(dirname "$0")/.."
source .ci/env.sh

build_only=0
if [ "${1:-}" = --build-only ]; then
  build_only=1
  shift
fi

if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "Installing MediaDesk's dependencies (the first time takes a minute or two)…" >&2
  npm_config_nodedir="${NODE24_DIR:-}" npm ci --no-audit --no-fund >&2
fi

# The last build is as old as the oldest of its three entry files; a missing one means no build.
build_outputs=(out/main/index.js out/preload/index.cjs out/renderer/index.html)
build_inputs=(electron renderer shared resources electron.vite.config.ts svelte.config.js tsconfig.json
  package.json package-lock.json node_modules/.package-lock.json)
needs_build() {
  local file oldest=
  for file in "${build_outputs[@]}"; do
    [ -f "$file" ] || return 0
    if [ -z "$oldest" ] || [ "$file" -ot "$oldest" ]; then oldest=$file; fi
  done
  # Directories count too: adding or deleting a file changes its folder's time.
  [ -n "$(find "${build_inputs[@]}" -newer "$oldest" -print -quit 2>/dev/null)" ]
}

if needs_build; then
  echo "Building MediaDesk…" >&2
  log=$(mktemp)
  if ! npx electron-vite build >"$log" 2>&1; then
    cat "$log" >&2
    rm -f "$log"
    exit 1
  fi
  rm -f "$log"
fi
if [ "$build_only" = 1 ]; then exit 0; fi

# Read electron's own record of its binary: require('electron') would try to download a missing one.
electron_bin=$(node -e "const fs=require('fs'),p=require('path');try{const d=p.dirname(require.resolve('electron/package.json'));const f=p.join(d,'dist',fs.readFileSync(p.join(d,'path.txt'),'utf8').trim());if(fs.existsSync(f))console.log(f)}catch{}" 2>/dev/null || true)
has_display=1
if [ "$(uname)" = Linux ] && [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ]; then has_display=0; fi

if [ -n "$electron_bin" ] && [ "$has_display" = 1 ]; then
  exec "$electron_bin" .
fi
# One reason, the README's first: without a display no window could open, binary or not.
if [ "$has_display" = 0 ]; then
  echo "(no display here, so MediaDesk runs in your browser: open the URL below)" >&2
else
  echo "(the Electron binary is not installed here (it downloads from outside the npm registry), so MediaDesk runs in your browser: open the URL below)" >&2
fi
exec node bin/web.js "$@"
