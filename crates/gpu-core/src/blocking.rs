//! The blocking form of the library's waits, for native programs whose callers wait: command-line tools, tests, a
//! server's worker thread. The library's waits are futures (in a browser a wait ends only once control returns to
//! the event loop; on native backends the future polls the device on the thread that drives it); [`Block::block`]
//! runs one to completion on the calling thread.

/// Any future, run to completion on the calling thread (native targets only): `gpu.read_f32(&buffer).block()?`.
pub trait Block: std::future::IntoFuture + Sized {
    /// Drives the future on this thread until it is ready, and returns its output.
    fn block(self) -> Self::Output {
        pollster::block_on(self)
    }
}

impl<F: std::future::IntoFuture> Block for F {}
