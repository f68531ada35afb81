//! Two independent pieces of GPU work driven together: the module's ASR encoder beside the Sortformer's steps.

use std::future::Future;

/// Runs `side` beside `main` and returns both outputs. With host parallelism (native targets, feature `parallel`)
/// `side` runs on a second thread, so the GPU has its work queued while `main` makes its round trips to the host
/// (each tower keeps its own workspace: the bits do not depend on the interleaving); the calling thread waits for
/// both.
#[cfg(all(not(target_arch = "wasm32"), feature = "parallel"))]
pub(crate) async fn beside<A: Send, B>(side: impl AsyncFnOnce() -> A + Send, main: impl Future<Output = B>) -> (A, B) {
    use gpu_core::blocking::Block;
    std::thread::scope(|scope| {
        let side = scope.spawn(|| side().block());
        let main = main.block();
        (side.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)), main)
    })
}

/// Runs `side`, then `main` (without host parallelism, e.g. in a browser; the GPU queue keeps the order).
#[cfg(any(target_arch = "wasm32", not(feature = "parallel")))]
pub(crate) async fn beside<A, B>(side: impl AsyncFnOnce() -> A, main: impl Future<Output = B>) -> (A, B) {
    let side = side().await;
    (side, main.await)
}
