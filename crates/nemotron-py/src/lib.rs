//! `nemotron_audio._native`: the Python extension of the `nemotron_audio` package (built by maturin; see
//! `pyproject.toml` and `README.md` beside this crate). A thin layer over `nemotron-engine`: Python arguments are
//! converted here (`audio`, `settings`), the engine does the work with the GIL released (`errors::detached`), and
//! its results and errors are handed back as Python objects and exceptions.

mod audio;
mod errors;
mod manifest;
mod model;
mod results;
mod settings;
mod speakers;
mod stream;

use pyo3::prelude::*;

#[pymodule]
#[pyo3(name = "_native")]
fn native(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<model::Model>()?;
    module.add_class::<results::Diarization>()?;
    module.add_class::<results::Segment>()?;
    module.add_class::<results::Alignment>()?;
    module.add_class::<results::Word>()?;
    module.add_class::<speakers::Speakers>()?;
    module.add_class::<stream::StreamSession>()?;
    module.add_class::<stream::Event>()?;
    module.add_function(wrap_pyfunction!(manifest::read_manifest, module)?)?;
    errors::register(module)?;
    module.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
