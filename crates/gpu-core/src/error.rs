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
    RequestDevice {
        /// The adapter's name as the driver reports it.
        adapter: String,
        /// wgpu's reason.
        message: String,
    },

    /// A size or count is beyond what the device allows.
    #[error("{what}: requested {requested}, device limit `{limit}` is {max}")]
    LimitExceeded {
        /// What asked for too much (a buffer, a dispatch, a kernel's shape), with its label.
        what: String,
        /// The limit's name: a `wgpu::Limits` field or a constant of this workspace (e.g. `MAX_PARAMS_BYTES`).
        limit: &'static str,
        /// The size or count asked for, in the limit's unit (usually bytes).
        requested: u64,
        /// The largest value the limit allows.
        max: u64,
    },

    /// WGSL failed to parse or validate, or the pipeline could not be created.
    #[error("shader `{shader}` (entry `{entry}`) failed to compile: {message}")]
    ShaderCompile {
        /// The shader's stable name ([`crate::Shader::name`]).
        shader: String,
        /// The entry point being compiled.
        entry: String,
        /// The compiler's or validator's diagnostic.
        message: String,
    },

    /// An allocation failed because the device is out of memory.
    #[error("out of GPU memory while allocating {what} ({bytes} bytes)")]
    OutOfMemory {
        /// The allocation (a labelled buffer, the parameter arena, or submitted work).
        what: String,
        /// Bytes requested; 0 when only the device's error scope reported it.
        bytes: u64,
    },

    /// The device was lost (driver reset, removal, or a fatal fault earlier).
    #[error("GPU device lost: {0}")]
    DeviceLost(String),

    /// wgpu reported a validation error for work submitted from this crate.
    #[error("GPU validation error: {0}")]
    Validation(String),

    /// A buffer could not be mapped for reading.
    #[error("reading back `{what}` failed: {message}")]
    Readback {
        /// The buffer or data read back.
        what: String,
        /// wgpu's reason.
        message: String,
    },

    /// A host slice and a GPU buffer (or two GPU buffers) disagree in size.
    #[error("{what}: expected {expected} elements, got {got}")]
    SizeMismatch {
        /// The operand or copy concerned, with buffer labels.
        what: String,
        /// Elements (32-bit words for buffers) the operation needs, or that the buffer holds.
        expected: u64,
        /// Elements supplied, or the word the access would reach.
        got: u64,
    },

    /// A kernel needs an optional capability the device lacks, or that
    /// [`GpuOptions::masked_capabilities`](crate::GpuOptions::masked_capabilities) turned off: raised before its
    /// pipeline is built, so the driver never sees the shader.
    #[error("kernel `{kernel}` needs {capability}, which this device lacks or was asked to mask")]
    MissingCapability {
        /// The kernel (a launcher's name, or `shader:entry`).
        kernel: String,
        /// The capability it needs.
        capability: crate::Capability,
    },

    /// Waiting for the device timed out.
    #[error("GPU did not finish within {seconds} s")]
    Timeout {
        /// The wait that elapsed, in whole seconds.
        seconds: u64,
    },
}

/// Result alias for the GPU layer.
pub type Result<T, E = GpuError> = std::result::Result<T, E>;
