#!/usr/bin/env bash
# Installs code-server (a real VS Code, served to a browser) for tests/e2e/test_vscode.py, taking
# every part from the npm registry: its own postinstall fetches ripgrep from GitHub, which CI
# machines cannot reach, so the steps it would run are done here, ripgrep from its npm package.
#
#   bash .ci/code-server.sh PREFIX VERSION
#
# The system Node must be the major code-server's `engines.node` names (4.100.x: Node 20); set
# NODE_DIR to another Node's folder (bin/node, include/node) otherwise. Native modules build
# against NODE_DIR's headers, so node-gyp downloads none.
set -euo pipefail
prefix=$1
version=$2
node_dir=${NODE_DIR:-/usr}
export PATH="$node_dir/bin:$PATH"
export npm_config_nodedir="$node_dir" npm_config_yes=true npm_config_loglevel=error
echo "code-server $version with node $(node --version), npm $(npm --version)"

case "$(uname -m)" in
    x86_64) rg_package=@vscode/ripgrep-linux-x64 ;;
    aarch64 | arm64) rg_package=@vscode/ripgrep-linux-arm64 ;;
    *) echo "code-server.sh: no ripgrep package known for $(uname -m)" >&2; exit 1 ;;
esac
[ -e /usr/include/gssapi/gssapi.h ] || { echo "code-server.sh: install libkrb5-dev first (kerberos builds against it)" >&2; exit 1; }

# the package without its scripts (a nested `npm install` under -g fails with npm 11)
npm install --global --prefix "$prefix" --ignore-scripts "code-server@$version"
app="$prefix/lib/node_modules/code-server"
(cd "$app" && npm rebuild argon2)

# what its postinstall does for the bundled VS Code: dependencies, then the native ones built
cd "$app/lib/vscode"
npm install --omit=dev --ignore-scripts
native=$(node -e '
    const packages = require("./npm-shrinkwrap.json").packages;
    const built = Object.keys(packages).filter(
        (name) => name.startsWith("node_modules/") && packages[name].hasInstallScript && !/ripgrep|windows/.test(name));
    console.log(built.map((name) => name.slice("node_modules/".length)).join(" "));')
# shellcheck disable=SC2086 # one argument per package
npm rebuild $native

# ripgrep (VS Code's search) from the registry's per-platform package
unpacked=$(mktemp -d)
(cd "$unpacked" && npm pack --silent "$rg_package" >/dev/null && tar -xzf ./*.tgz)
install -D -m 755 "$unpacked/package/bin/rg" node_modules/@vscode/ripgrep/bin/rg
rm -rf "$unpacked"

# the links its postinstall makes
ln -sfn node_modules node_modules.asar
ln -sfn code-linux.sh bin/remote-cli/code-server
ln -sfn browser-linux.sh bin/helpers/browser.sh
(cd extensions && npm install --omit=dev)

scratch=$(mktemp -d)
echo "installed: $(XDG_CONFIG_HOME=$scratch XDG_DATA_HOME=$scratch "$prefix/bin/code-server" --version 2>/dev/null | tail -1)"
rm -rf "$scratch"
