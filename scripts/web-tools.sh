# The browser package's tools, installed where missing (sourced by web-build.sh and web-test.sh): the wasm32 target,
# and wasm-bindgen-cli (wasm-bindgen, wasm-bindgen-test-runner) at the version of the wasm-bindgen crate in
# Cargo.lock, which the generated JS must match.
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
