//! What the engine's tests share: the repository's test data and the diar-tiny reference diarizer, loaded once per
//! test binary.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use nemotron_engine::{Engine, EngineOptions, ModelSource};

pub fn testdata(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata").join(path)
}

/// The diar-tiny reference case's diarizer (1.92 s chunks).
pub fn diar_tiny() -> &'static Engine {
    static ENGINE: OnceLock<Engine> = OnceLock::new();
    ENGINE.get_or_init(|| {
        let source = ModelSource::from_path(&testdata("reference/diar-tiny")).expect("diar-tiny");
        Engine::load(&source, &EngineOptions::default(), &mut |_, _, _| {}).expect("diar-tiny loads")
    })
}
