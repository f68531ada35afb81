//! The blocking form of the model's entry points, for native front ends whose callers wait (the CLI, the Python
//! package, a server's worker thread): every entry point that waits for the GPU ([`Model::load`](crate::Model::load),
//! encoding, diarization, a live session's push) is `async`, and `.block()` runs it to completion on the calling
//! thread: `Model::load(&gpu, dir, &options).block()?`.

pub use gpu_core::blocking::Block;
