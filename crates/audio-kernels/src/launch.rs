//! Small helpers shared by the launchers: size checks, workgroup grids, and grid sizes scaled to the device.

use gpu_core::{DeviceProfile, GpuBuffer, GpuError, Recorder, Result};

/// Fails unless `buffer` holds at least `words` 4-byte words.
pub(crate) fn require(buffer: &GpuBuffer, words: usize, what: &str) -> Result<()> {
    if buffer.len_words() < words {
        return Err(GpuError::SizeMismatch {
            what: format!("{what} (buffer `{}`)", buffer.label()),
            expected: words as u64,
            got: buffer.len_words() as u64,
        });
    }
    Ok(())
}

/// Words a bf16 matrix of `elements` values occupies when packed two per word.
pub(crate) fn bf16_words(elements: usize) -> usize {
    elements.div_ceil(2)
}

/// Spreads `groups` workgroups over x and y so neither exceeds the per-dimension limit; shaders
/// recover the linear index as `wid.y * num_workgroups.x + wid.x` and skip indices past the end.
pub(crate) fn grid(rec: &Recorder<'_>, groups: usize) -> [u32; 3] {
    let max = rec.gpu().limits().max_compute_workgroups_per_dimension as usize;
    let x = groups.clamp(1, max);
    [x as u32, groups.div_ceil(x) as u32, 1]
}

/// A workgroup count measured best on one device: `workgroups` where the device has `compute_units` (every one so
/// far on the H200, 132 multiprocessors). Other devices get it in proportion to their compute units
/// ([`gpu_core::DeviceProfile::compute_units`]), rounded to the nearest and at least 1, so the measured device gets
/// exactly the measured count.
#[derive(Clone, Copy, Debug)]
pub(crate) struct MeasuredGrid {
    /// The count measured best.
    pub(crate) workgroups: usize,
    /// The compute units of the device it was measured on.
    pub(crate) compute_units: usize,
}

impl MeasuredGrid {
    /// The count for the device of `profile`.
    pub(crate) fn on(self, profile: &DeviceProfile) -> usize {
        let scaled = self.workgroups * profile.compute_units.count;
        ((scaled + self.compute_units / 2) / self.compute_units).max(1)
    }
}

/// Hand-written profiles for the launchers' unit tests: the H200 the grids were measured on, a CPU adapter, and an
/// adapter the compute-unit table does not know.
#[cfg(test)]
pub(crate) mod profiles {
    use gpu_core::{DeviceProfile, wgpu};

    /// The H200 as wgpu 30 reports it on Vulkan (subgroups of 32, f16, 16×16×16 f16→f32 matrices, 48 KiB of
    /// workgroup memory, 1024 invocations per workgroup).
    pub(crate) fn h200() -> DeviceProfile {
        let mut profile = DeviceProfile::described("NVIDIA H200", wgpu::DeviceType::DiscreteGpu, 1);
        profile.subgroup_min_size = 32;
        profile.subgroup_max_size = 32;
        profile.features =
            wgpu::Features::SUBGROUP | wgpu::Features::SHADER_F16 | wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX;
        profile.limits.max_compute_workgroup_storage_size = 48 << 10;
        profile.limits.max_compute_invocations_per_workgroup = 1024;
        profile.limits.max_compute_workgroup_size_x = 1024;
        profile.cooperative_matrices = vec![matrix(16)];
        profile
    }

    /// Lavapipe on a host of `threads` threads: subgroups of 8 and 8×8×8 matrices, otherwise as [`h200`].
    pub(crate) fn lavapipe(threads: usize) -> DeviceProfile {
        let mut profile = DeviceProfile {
            name: "llvmpipe (LLVM 15.0.7, 256 bits)".into(),
            compute_units: gpu_core::ComputeUnits::of("llvmpipe", wgpu::DeviceType::Cpu, threads),
            device_type: wgpu::DeviceType::Cpu,
            ..h200()
        };
        profile.subgroup_min_size = 8;
        profile.subgroup_max_size = 8;
        profile.cooperative_matrices = vec![matrix(8)];
        profile
    }

    /// A discrete GPU the table does not know, with the H200's features.
    pub(crate) fn unknown() -> DeviceProfile {
        DeviceProfile {
            name: "Some Future GPU".into(),
            compute_units: gpu_core::ComputeUnits::of("Some Future GPU", wgpu::DeviceType::DiscreteGpu, 1),
            ..h200()
        }
    }

    fn matrix(t: u32) -> wgpu::CooperativeMatrixProperties {
        wgpu::CooperativeMatrixProperties {
            m_size: t,
            n_size: t,
            k_size: t,
            ab_type: wgpu::CooperativeScalarType::F16,
            cr_type: wgpu::CooperativeScalarType::F32,
            saturating_accumulation: false,
        }
    }
}
