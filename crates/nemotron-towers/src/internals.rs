//! Internals the test kit (`nemotron-testkit`) builds the f64 towers and the golden files from: the weight builders
//! and name sets the GPU towers load through, the chunk schedule. Not part of the API: compiled only with the
//! `test-support` feature, which only the test kit turns on.
//!
//! The modules re-exported from are private without the feature, so they allow missing docs with it (`lib.rs`):
//! re-exporting them for the test kit does not make them documented API.

/// The weight builders, generic over where the tensors come from (the checkpoint in f64, the GPU, random values).
pub mod weights {
    pub use crate::weights::{
        EncoderWeights, Expectations, HeadWeights, HostMatrix, HostStore, Layer, Linear, Norm, WeightStore,
        WordTimestampWeights, encoder, head, random_tensor, word_timestamps,
    };
}

/// The tensor names of each checkpoint layout.
pub mod names {
    pub use crate::names::{EncoderNames, HeadNames, ModelNames, WordTimestampNames};
}

/// The chunk schedule of the ASR tower and the word-timestamp head, and which frames of a window are keys.
pub mod chunks {
    pub use crate::chunks::{Chunk, schedule};
    pub use crate::word_timestamps::window_keys;
}
