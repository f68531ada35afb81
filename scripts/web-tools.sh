# The browser package's tools, installed where missing (sourced by the web-*.sh scripts): the wasm32 target,
# wasm-bindgen-cli (wasm-bindgen, wasm-bindgen-test-runner) at the version of the wasm-bindgen crate in Cargo.lock,
# which the generated JS must match, and Node.js with npm; the crate's manifest fields the npm package takes.
wasm_bindgen_version() {
    awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock
}

install_web_tools() {
    local version
    version="$(wasm_bindgen_version)"
    rustup target list --installed | grep -qx wasm32-unknown-unknown || rustup target add wasm32-unknown-unknown
    if [[ "$(wasm-bindgen --version 2>/dev/null)" != "wasm-bindgen $version" ]]; then
        # Its own lock file first; a registry without one of the versions locked there (a yanked webpki-roots, say)
        # gets the newest compatible ones instead.
        cargo install wasm-bindgen-cli --version "$version" --locked ||
            cargo install wasm-bindgen-cli --version "$version"
    fi
}

# Debian packages, installed as root (through sudo unless root already).
apt_install() {
    local as_root=()
    [[ "$(id -u)" == 0 ]] || as_root=(sudo)
    "${as_root[@]}" apt-get update -qq
    "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@"
}

# Node.js with npm (Debian's packages), which packs the npm package and runs the page tests. A Node.js from elsewhere
# (e.g. NodeSource's, which carries npm) is kept: Debian's npm would conflict with it.
install_node() {
    command -v npm >/dev/null || apt_install nodejs npm
}

# A field of the browser crate's manifest as cargo reads it (`version`, `license`: its workspace's), as text; a field
# it does not set fails.
web_crate_field() {
    cargo metadata --no-deps --format-version 1 |
        node -e 'let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => {
            const value = JSON.parse(s).packages.find((p) => p.name === "nemotron-web")[process.argv[1]];
            if (typeof value !== "string") throw new Error(`nemotron-web sets no ${process.argv[1]}`);
            console.log(value);
        })' "$1"
}
