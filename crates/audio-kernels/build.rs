//! Composes the WGSL kernels. Every `shaders/<name>.wgsl` is written to `$OUT_DIR/<name>.wgsl` with each line of the
//! form `// #include "<part>.wgsl"` replaced by that file's text, recursively (a cycle, a part included twice into one
//! file, or a missing part fails the build). `$OUT_DIR/includes.rs` lists the parts each file includes, so that
//! `cargo xtask validate-shaders` can tell kernels from parts. The directive is a comment, so every file stays WGSL
//! that a reader can open and follow: the line says which part goes where.
//!
//! `shaders` here is a link to the workspace's top-level `shaders/` folder; `cargo package` copies what it points to.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

const DIRECTIVE: &str = "// #include \"";

fn main() {
    let dir = Path::new("shaders");
    println!("cargo::rerun-if-changed=shaders");
    let out = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    let mut sources = BTreeMap::new();
    for entry in fs::read_dir(dir).expect("reading shaders/") {
        let path = entry.expect("listing shaders/").path();
        if path.extension().is_some_and(|e| e == "wgsl") {
            let name = path.file_name().and_then(|n| n.to_str()).expect("UTF-8 file name").to_string();
            println!("cargo::rerun-if-changed={}", path.display());
            sources.insert(name, fs::read_to_string(&path).expect("reading a shader"));
        }
    }
    let mut listing = String::from("&[\n");
    for name in sources.keys() {
        let mut parts = Vec::new();
        let composed = compose(name, &sources, &mut vec![name.clone()], &mut parts);
        let stem = name.trim_end_matches(".wgsl");
        fs::write(Path::new(&out).join(name), composed).expect("writing a composed shader");
        let parts: Vec<String> = parts.iter().map(|p| format!("{:?}", p.trim_end_matches(".wgsl"))).collect();
        listing.push_str(&format!("    ({stem:?}, &[{}]),\n", parts.join(", ")));
    }
    listing.push(']');
    fs::write(Path::new(&out).join("includes.rs"), listing).expect("writing includes.rs");
}

/// `name`'s text with its includes expanded; `stack` is the chain of files being expanded, `parts` every part
/// included so far into the top-level file.
fn compose(name: &str, sources: &BTreeMap<String, String>, stack: &mut Vec<String>, parts: &mut Vec<String>) -> String {
    let text = sources.get(name).unwrap_or_else(|| panic!("shaders/{}: included by {} but missing", name, stack[0]));
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        match line.trim().strip_prefix(DIRECTIVE).and_then(|rest| rest.strip_suffix('"')) {
            Some(part) => {
                assert!(!stack.iter().any(|s| s == part), "shaders/{part}: include cycle through {stack:?}");
                assert!(!parts.iter().any(|p| p == part), "shaders/{part}: included twice into {}", stack[0]);
                parts.push(part.to_string());
                stack.push(part.to_string());
                out.push_str(&compose(part, sources, stack, parts));
                stack.pop();
            }
            None => {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    out
}
