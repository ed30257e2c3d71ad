# shellcheck shell=bash
# Shared by scripts/serve and scripts/test: `source` it, then call `setup`.
#
# setup installs whatever is missing, idempotently, and is quick when
# everything is present. Nothing here downloads a prebuilt binary from a
# code-hosting site: tools come from Debian's apt, rustup, crates.io (built
# from source) and npm. See docs/toolchain.md for why each version is pinned.

set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
E2E_DIR="$ROOT/e2e"
TRUNK_VERSION="0.21.14"
LEPTOSFMT_VERSION="0.1.33"

export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
# Trunk finds wasm-opt on PATH: npm's binaryen@132 must come first.
export PATH="$E2E_DIR/node_modules/.bin:$PATH"
export TRUNK_SKIP_VERSION_CHECK=true
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-auto}"

log() {
  printf '[setup] %s\n' "$*"
}

die() {
  printf 'error: %s\n' "$*" >&2
  exit 1
}

# Runs a command as root: directly when we are root, else through sudo.
as_root() {
  if [ "$(id -u)" -eq 0 ]; then
    "$@"
  else
    sudo "$@"
  fi
}

ensure_apt_packages() {
  local missing=() package
  for package in "$@"; do
    if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed'; then
      missing+=("$package")
    fi
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    log "installing apt packages: ${missing[*]}"
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive \
      apt-get install -y -qq --no-install-recommends "${missing[@]}"
  fi
}

ensure_rust() {
  command -v cargo >/dev/null || die "cargo not found: install Rust with rustup first"
  if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
    log "adding rustup target wasm32-unknown-unknown"
    rustup target add wasm32-unknown-unknown
  fi
  if ! cargo fmt --version >/dev/null 2>&1 || ! cargo clippy --version >/dev/null 2>&1; then
    log "adding rustup components rustfmt and clippy"
    rustup component add rustfmt clippy
  fi
}

# Builds a crate from crates.io source. The profile override makes the build
# of these tools about twice as fast; it does not affect this project.
cargo_install() {
  CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 \
    cargo install "$@"
}

ensure_trunk() {
  if [ "$(trunk --version 2>/dev/null)" != "trunk $TRUNK_VERSION" ]; then
    log "installing trunk $TRUNK_VERSION from crates.io (about 11 minutes)"
    # 0.22 needs a newer rustc than this machine's: pin the version.
    cargo_install --locked trunk --version "$TRUNK_VERSION"
  fi
}

# leptosfmt formats the markup inside view! macros, which rustfmt leaves alone.
ensure_leptosfmt() {
  if [ "$(leptosfmt --version 2>/dev/null)" != "leptosfmt $LEPTOSFMT_VERSION" ]; then
    log "installing leptosfmt $LEPTOSFMT_VERSION from crates.io (about 3 minutes)"
    cargo_install --locked --force leptosfmt --version "$LEPTOSFMT_VERSION"
  fi
}

# The version of the `wasm-bindgen` crate that Cargo.lock pins.
locked_wasm_bindgen_version() {
  awk '
    $0 == "name = \"wasm-bindgen\"" { found = 1; next }
    found && $1 == "version" { gsub(/"/, "", $3); print $3; exit }
  ' "$ROOT/Cargo.lock"
}

ensure_wasm_bindgen_cli() {
  local version
  version="$(locked_wasm_bindgen_version)"
  [ -n "$version" ] || die "Cargo.lock pins no wasm-bindgen version"
  if [ "$(wasm-bindgen --version 2>/dev/null)" != "wasm-bindgen $version" ] ||
    [ "$(wasm-bindgen-test-runner --version 2>/dev/null)" != "wasm-bindgen-test-runner $version" ]; then
    log "installing wasm-bindgen-cli $version from crates.io (about 7 minutes)"
    # Not --locked: its shipped lockfile wants a webpki-roots the registry lacks.
    cargo_install --force wasm-bindgen-cli --version "$version"
  fi
}

# npm ci for the e2e folder (playwright-core, and binaryen's wasm-opt for
# Trunk), skipped while node_modules matches the committed lockfile.
ensure_node_modules() {
  command -v npm >/dev/null || ensure_apt_packages nodejs npm
  local stamp="$E2E_DIR/node_modules/.sojourn-lock"
  if ! cmp -s "$E2E_DIR/package-lock.json" "$stamp" 2>/dev/null; then
    log "npm ci in e2e/"
    (cd "$E2E_DIR" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
    cp "$E2E_DIR/package-lock.json" "$stamp"
  fi
  [ "$(wasm-opt --version 2>/dev/null)" = "wasm-opt version 132 (version_132)" ] ||
    die "wasm-opt on PATH is not binaryen 132: $(command -v wasm-opt || echo none)"
}

setup() {
  local started=$SECONDS
  ensure_apt_packages chromium chromium-driver
  ensure_rust
  ensure_trunk
  ensure_leptosfmt
  ensure_wasm_bindgen_cli
  ensure_node_modules
  log "tools ready in $((SECONDS - started)) s"
}
