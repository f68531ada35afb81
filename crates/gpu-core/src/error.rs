//! The one error type of the GPU layer. Every variant names the thing that failed and, for limits,
//! the requested and the allowed value.

/// Errors raised by `gpu-core` and by the layers built on it.
#[derive(Debug, thiserror::Error)]
pub enum GpuError {
    /// No adapter matched the request (backends, name filter, software fallback policy).
    #[error("no usable GPU adapter: {0}")]
    NoAdapter(String),

    /// The adapter refused to create a device.
    #[error("could not create a device on adapter `{adapter}`: {message}")]
    RequestDevice { adapter: String, message: String },

    /// A size or count is beyond what the device allows.
    #[error("{what}: requested {requested}, device limit `{limit}` is {max}")]
    LimitExceeded { what: String, limit: &'static str, requested: u64, max: u64 },

    /// WGSL failed to parse or validate, or the pipeline could not be created.
    #[error("shader `{shader}` (entry `{entry}`) failed to compile: {message}")]
    ShaderCompile { shader: String, entry: String, message: String },

    /// An allocation failed because the device is out of memory.
    #[error("out of GPU memory while allocating {what} ({bytes} bytes)")]
    OutOfMemory { what: String, bytes: u64 },

    /// The device was lost (driver reset, removal, or a fatal fault earlier).
    #[error("GPU device lost: {0}")]
    DeviceLost(String),

    /// wgpu reported a validation error for work submitted from this crate.
    #[error("GPU validation error: {0}")]
    Validation(String),

    /// A buffer could not be mapped for reading.
    #[error("reading back `{what}` failed: {message}")]
    Readback { what: String, message: String },

    /// A host slice and a GPU buffer (or two GPU buffers) disagree in size.
    #[error("{what}: expected {expected} elements, got {got}")]
    SizeMismatch { what: String, expected: u64, got: u64 },

    /// Waiting for the device timed out.
    #[error("GPU did not finish within {seconds} s")]
    Timeout { seconds: u64 },
}

/// Result alias for the GPU layer.
pub type Result<T, E = GpuError> = std::result::Result<T, E>;
