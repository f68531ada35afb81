//! What cooperative matrices a device runs the tensor-core kernels with (both the GEMM and attention are written for
//! T×T×T f16→f32 matrices of either size).

use gpu_core::{Capability, DeviceProfile, wgpu};

/// The cooperative-matrix shape and subgroup size a device runs the tensor-core kernels with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Matrices {
    /// Side of the square matrices: 16 or 8.
    pub(crate) t: usize,
    /// Lanes per subgroup (fixed on the device, a multiple of `t`).
    pub(crate) subgroup: usize,
}

impl Matrices {
    /// The shapes the shaders are built for in the variant list: 16×16 at 32 lanes (NVIDIA), 8×8 at 8 (lavapipe).
    pub(crate) const USUAL: [Matrices; 2] = [Matrices { t: 16, subgroup: 32 }, Matrices { t: 8, subgroup: 8 }];

    /// The capabilities every tensor-core kernel needs.
    pub(crate) const NEEDS: [Capability; 2] = [Capability::CooperativeMatrices, Capability::ShaderF16];

    /// The largest supported shape of the device: T×T×T with f16 operands and f32 results, on a device with
    /// [`Self::NEEDS`] and a fixed subgroup size that is a multiple of T.
    pub(crate) fn of(profile: &DeviceProfile) -> Option<Self> {
        if !Self::NEEDS.iter().all(|&c| profile.has(c)) || profile.subgroup_min_size != profile.subgroup_max_size {
            return None;
        }
        let subgroup = profile.subgroup_min_size as usize;
        let has = |t: u32| {
            profile.cooperative_matrices.iter().any(|p| {
                (p.m_size, p.n_size, p.k_size) == (t, t, t)
                    && p.ab_type == wgpu::CooperativeScalarType::F16
                    && p.cr_type == wgpu::CooperativeScalarType::F32
            })
        };
        let t = [16, 8].into_iter().find(|&t| has(t) && subgroup.is_multiple_of(t as usize))?;
        Some(Self { t: t as usize, subgroup })
    }
}
