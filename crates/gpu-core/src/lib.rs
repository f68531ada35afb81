//! `gpu-core`: everything that talks to wgpu. A [`Gpu`] context (adapter choice, device with the
//! adapter's real limits and optional features), [`GpuBuffer`]s (f32, u32, bf16 packed two per
//! word), a pipeline cache keyed by shader/entry/constants, cached bind groups, a [`Recorder`]
//! that submits a whole sequence of launches at once, a timestamp [`Profile`], and the [`DeviceProfile`] launchers
//! tune for (compute units, subgroup sizes, limits, and the optional [`Capability`]s, which can be masked).
//!
//! Everything that waits for the GPU (opening a device, readbacks, [`Gpu::wait`], timed submissions) is `async`, so
//! the same code runs in a browser, where a wait ends only once control returns to the event loop. Native programs
//! that want to block call `.block()` ([`blocking::Block`]) at their top.

#![warn(missing_docs)]

mod bind_cache;
#[cfg(not(target_arch = "wasm32"))]
pub mod blocking;
mod buffer;
mod error;
mod faults;
mod gpu;
pub mod layout;
mod memory;
mod params;
mod pipeline;
mod profile;
mod profiler;
mod recorder;
mod reuse;
mod transfer;
mod wait;

pub use buffer::{GpuBuffer, pack_bf16};
pub use error::{GpuError, Result};
pub use gpu::{Gpu, GpuOptions};
pub use layout::{Binding, BufferKind, ParamField, ParamType, ParamValue, ParamsLayout};
pub use pipeline::{Access, Kernel, KernelSpec, KernelVariant, MAX_PARAMS_BYTES, Shader};
pub use profile::{Capability, ComputeUnitSource, ComputeUnits, DEFAULT_COMPUTE_UNITS, DeviceProfile};
pub use profiler::Profile;
pub use recorder::{Recorder, Timing};
pub use reuse::{Reused, SHRINK_AFTER_CALLS, reuse_or_make};
pub use transfer::host_vec;

/// Re-exported so dependants name the same wgpu version.
pub use wgpu;
