//! `cargo xtask golden` writes `testdata/golden/<case>.safetensors` from the recipes in
//! `nemotron_testkit::golden`, and the browser package's `testdata/web/` (`web_golden.rs`); `--check` rebuilds them in memory and fails if a committed file
//! differs (weights and inputs byte for byte, f64 expected outputs to 1e-12 relative, so a
//! different libm cannot fail it while any real change does).

use std::path::{Path, PathBuf};

use nemotron_testkit::golden::{build, cases};
use nemotron_towers::Checkpoint;

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/golden")
}

pub fn run(check: bool) -> Result<(), String> {
    let dir = golden_dir();
    let mut stale = Vec::new();
    for case in cases() {
        let fresh = build(&case).map_err(|e| format!("building {}: {e}", case.name))?;
        let path = dir.join(format!("{}.safetensors", case.name));
        if check {
            match std::fs::read(&path) {
                Ok(committed) => {
                    if let Err(why) = same(case.name, committed, fresh) {
                        stale.push(format!("{}: {why}", path.display()));
                    } else {
                        println!("ok    {}", path.display());
                    }
                }
                Err(e) => stale.push(format!("{}: {e}", path.display())),
            }
        } else {
            std::fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
            std::fs::write(&path, &fresh).map_err(|e| format!("writing {}: {e}", path.display()))?;
            println!("wrote {} ({} bytes)", path.display(), fresh.len());
        }
    }
    crate::web_golden::run(check, &mut stale)?;
    if stale.is_empty() {
        Ok(())
    } else {
        Err(format!("golden files out of date (run `cargo xtask golden`):\n  {}", stale.join("\n  ")))
    }
}

fn same(name: &str, committed: Vec<u8>, fresh: Vec<u8>) -> Result<(), String> {
    let (a, b) = (
        Checkpoint::from_bytes(name, committed).map_err(|e| e.to_string())?,
        Checkpoint::from_bytes(name, fresh).map_err(|e| e.to_string())?,
    );
    let mut names_a: Vec<&str> = a.names().collect();
    let mut names_b: Vec<&str> = b.names().collect();
    names_a.sort_unstable();
    names_b.sort_unstable();
    if names_a != names_b || a.metadata() != b.metadata() {
        return Err("tensor names or metadata differ".into());
    }
    for name in names_a {
        let (ta, tb) = (a.tensor(name).map_err(|e| e.to_string())?, b.tensor(name).map_err(|e| e.to_string())?);
        if ta.dtype != tb.dtype || ta.shape != tb.shape {
            return Err(format!("`{name}` dtype or shape differs"));
        }
        if ta.bytes == tb.bytes {
            continue;
        }
        if ta.dtype != safetensors::Dtype::F64 {
            return Err(format!("`{name}` differs"));
        }
        let (va, vb) = (a.f64(name).map_err(|e| e.to_string())?, b.f64(name).map_err(|e| e.to_string())?);
        let diff: f64 = va.iter().zip(&vb).map(|(x, y)| (x - y) * (x - y)).sum::<f64>().sqrt();
        let norm: f64 = vb.iter().map(|y| y * y).sum::<f64>().sqrt();
        if diff > 1e-12 * norm {
            return Err(format!("`{name}` differs by {:.3e} relative", diff / norm));
        }
    }
    Ok(())
}
