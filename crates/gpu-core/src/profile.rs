//! What the launchers tune for: a [`DeviceProfile`] of the device in use (adapter identity, subgroup sizes, the
//! features and limits in force, cooperative-matrix shapes, and the number of compute units), built once when the
//! [`Gpu`](crate::Gpu) is created, and the optional [`Capability`]s kernels may need, which
//! [`GpuOptions::masked_capabilities`](crate::GpuOptions::masked_capabilities) can turn off.
//!
//! How the compute units are found is documented on [`ComputeUnits`] (the table, its sources, the default).

use std::fmt;

use crate::error::{GpuError, Result};

/// Compute units assumed for an adapter the table does not know: a mid-sized GPU's (a laptop or entry discrete
/// part). Work is split to fill this many units and no more; on a larger GPU some units may then idle on the
/// smallest grids, while a larger guess would make a small GPU pay for splits (extra passes and partial sums) that
/// buy it nothing.
pub const DEFAULT_COMPUTE_UNITS: usize = 16;

/// Words that, following a table entry's words, name a different board.
const VARIANT_WORDS: [&str; 6] = ["ti", "super", "d", "laptop", "mobile", "max"];

/// Multiprocessors of the boards whose count is published: the words the name must contain, in order, and the count.
/// More specific entries come first.
const MULTIPROCESSORS: &[(&[&str], usize)] = &[
    (&["h200"], 132),
    (&["h100", "pcie"], 114),
    (&["h100"], 132),
    (&["a100"], 108),
    (&["l40s"], 142),
    (&["rtx", "4090"], 128),
    (&["rtx", "4080", "super"], 80),
    (&["rtx", "4080"], 76),
    (&["rtx", "3090", "ti"], 84),
    (&["rtx", "3090"], 82),
];

/// An optional device capability that kernels may need: each is an optional wgpu feature.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Capability {
    /// Subgroup operations (`subgroupAdd`, `subgroupShuffleXor`, the subgroup builtins): wgpu's `SUBGROUP`.
    Subgroups,
    /// 16-bit floats in shaders (`enable f16;`): wgpu's `SHADER_F16`.
    ShaderF16,
    /// Cooperative matrices (`enable wgpu_cooperative_matrix;`): wgpu's `EXPERIMENTAL_COOPERATIVE_MATRIX`.
    CooperativeMatrices,
}

impl Capability {
    /// Every capability.
    pub const ALL: [Capability; 3] = [Capability::Subgroups, Capability::ShaderF16, Capability::CooperativeMatrices];

    /// The wgpu feature behind this capability.
    pub fn feature(self) -> wgpu::Features {
        match self {
            Capability::Subgroups => wgpu::Features::SUBGROUP,
            Capability::ShaderF16 => wgpu::Features::SHADER_F16,
            Capability::CooperativeMatrices => wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX,
        }
    }

    /// The capabilities WGSL `source` uses, outside `//` comments: those its `enable` directives name (`f16`,
    /// `wgpu_cooperative_matrix`, `subgroups`), and subgroups where it calls a subgroup or quad function
    /// (`subgroup…`, `quad…` followed by a capital) or declares a subgroup builtin. A compiler given a shader that
    /// uses a capability the device lacks fails validation; this lets the caller refuse it first.
    pub fn required_by(source: &str) -> Vec<Capability> {
        let mut needed = Vec::new();
        let mut need = |capability| {
            if !needed.contains(&capability) {
                needed.push(capability);
            }
        };
        for line in source.lines() {
            let code = line.split("//").next().unwrap_or_default().trim();
            if let Some(list) = code.strip_prefix("enable ") {
                for extension in list.trim_end_matches(';').split(',').map(str::trim) {
                    match extension {
                        "f16" => need(Capability::ShaderF16),
                        "wgpu_cooperative_matrix" => need(Capability::CooperativeMatrices),
                        "subgroups" => need(Capability::Subgroups),
                        _ => {}
                    }
                }
                continue;
            }
            let words: Vec<&str> =
                code.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).filter(|w| !w.is_empty()).collect();
            let call = |word: &str| {
                ["subgroup", "quad"].iter().any(|prefix| {
                    word.strip_prefix(prefix)
                        .and_then(|rest| rest.chars().next())
                        .is_some_and(|c| c.is_ascii_uppercase())
                })
            };
            let builtin = |pair: &[&str]| {
                pair[0] == "builtin"
                    && ["subgroup_size", "subgroup_invocation_id", "subgroup_id", "num_subgroups"].contains(&pair[1])
            };
            if words.iter().any(|w| call(w)) || words.windows(2).any(builtin) {
                need(Capability::Subgroups);
            }
        }
        needed
    }
}

impl fmt::Display for Capability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Capability::Subgroups => "subgroup operations (wgpu feature SUBGROUP)",
            Capability::ShaderF16 => "16-bit shader floats (wgpu feature SHADER_F16)",
            Capability::CooperativeMatrices => "cooperative matrices (wgpu feature EXPERIMENTAL_COOPERATIVE_MATRIX)",
        })
    }
}

/// Where a [`ComputeUnits`] count comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ComputeUnitSource {
    /// The table of published multiprocessor counts (see [`ComputeUnits`]).
    Table,
    /// The host's available parallelism, for a CPU adapter.
    HostThreads,
    /// [`DEFAULT_COMPUTE_UNITS`], for an adapter the table does not know.
    Default,
}

/// How many units run workgroups side by side: multiprocessors on a GPU, threads on a CPU adapter.
///
/// wgpu reports no count of multiprocessors (NVIDIA's SMs, AMD's CUs), yet how many workgroups fill a GPU depends on
/// it. [`ComputeUnits::of`] takes it from a small table keyed by the adapter's name, holding only boards whose count
/// is published by the vendor (NVIDIA's data sheets and architecture white papers: an SM has 128 FP32 lanes on Ada
/// and Ampere consumer parts, so e.g. the RTX 4090's 16,384 lanes are 128 SMs):
///
/// | name contains | multiprocessors |
/// |---|---|
/// | `H200` | 132 |
/// | `H100 PCIe` | 114 |
/// | `H100` (SXM, NVL) | 132 |
/// | `A100` | 108 |
/// | `L40S` | 142 |
/// | `RTX 4090` | 128 |
/// | `RTX 4080 SUPER` | 80 |
/// | `RTX 4080` | 76 |
/// | `RTX 3090 Ti` | 84 |
/// | `RTX 3090` | 82 |
///
/// Names are compared word by word, case-insensitively; a name where a variant word (`Ti`, `SUPER`, `D`, `Laptop`,
/// `Mobile`, `Max`) follows the entry's words is another board and does not match (an RTX 4090 Laptop GPU has 76
/// multiprocessors, not 128). A CPU adapter (lavapipe, llvmpipe, WARP) runs workgroups on the host's threads: its
/// count is the host's available parallelism. Any other adapter gets [`DEFAULT_COMPUTE_UNITS`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ComputeUnits {
    /// The count (at least 1).
    pub count: usize,
    /// Where it comes from.
    pub source: ComputeUnitSource,
}

impl ComputeUnits {
    /// The compute units of the adapter named `name` of type `device_type`; `host_threads` is what a CPU adapter
    /// gets (the host's available parallelism, for a real adapter).
    pub fn of(name: &str, device_type: wgpu::DeviceType, host_threads: usize) -> Self {
        if device_type == wgpu::DeviceType::Cpu {
            return Self { count: host_threads.max(1), source: ComputeUnitSource::HostThreads };
        }
        let lower = name.to_lowercase();
        let words: Vec<&str> = lower.split(|c: char| !c.is_ascii_alphanumeric()).filter(|w| !w.is_empty()).collect();
        let matches = |key: &[&str]| {
            (0..words.len()).any(|start| {
                words[start..].starts_with(key)
                    && words.get(start + key.len()).is_none_or(|next| !VARIANT_WORDS.contains(next))
            })
        };
        match MULTIPROCESSORS.iter().find(|(key, _)| matches(key)) {
            Some(&(_, count)) => Self { count, source: ComputeUnitSource::Table },
            None => Self { count: DEFAULT_COMPUTE_UNITS, source: ComputeUnitSource::Default },
        }
    }
}

/// The device as the launchers tune for it. Its fields are public so that a profile can be written by hand, to see
/// what the launchers would choose on a device not at hand ([`DeviceProfile::described`]).
#[derive(Clone, Debug)]
pub struct DeviceProfile {
    /// The adapter's name as the driver reports it.
    pub name: String,
    /// The backend (Vulkan, Metal, DX12, GL).
    pub backend: wgpu::Backend,
    /// Discrete, integrated, virtual, CPU or other.
    pub device_type: wgpu::DeviceType,
    /// PCI vendor id (0x10de NVIDIA, 0x1002 AMD, 0x8086 Intel, 0x10005 Mesa's software adapters), 0 if unknown.
    pub vendor: u32,
    /// PCI device id, 0 if unknown.
    pub device: u32,
    /// Fewest lanes a subgroup has (0 where the backend does not say).
    pub subgroup_min_size: u32,
    /// Most lanes a subgroup has.
    pub subgroup_max_size: u32,
    /// The optional features enabled on the device (masked capabilities excluded).
    pub features: wgpu::Features,
    /// The limits in force (the adapter's, or smaller where the options asked).
    pub limits: wgpu::Limits,
    /// Cooperative-matrix shapes the adapter runs (empty without [`Capability::CooperativeMatrices`]).
    pub cooperative_matrices: Vec<wgpu::CooperativeMatrixProperties>,
    /// Units that run workgroups side by side.
    pub compute_units: ComputeUnits,
}

impl DeviceProfile {
    /// The profile of a device created on the adapter `info` with `features` and `limits`; a CPU adapter's compute
    /// units are the host's available parallelism.
    pub fn new(
        info: &wgpu::AdapterInfo,
        features: wgpu::Features,
        limits: wgpu::Limits,
        cooperative_matrices: Vec<wgpu::CooperativeMatrixProperties>,
    ) -> Self {
        let host_threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        Self {
            name: info.name.clone(),
            backend: info.backend,
            device_type: info.device_type,
            vendor: info.vendor,
            device: info.device,
            subgroup_min_size: info.subgroup_min_size,
            subgroup_max_size: info.subgroup_max_size,
            features,
            limits,
            cooperative_matrices,
            compute_units: ComputeUnits::of(&info.name, info.device_type, host_threads),
        }
    }

    /// A profile written by hand for the adapter `name` of type `device_type` (a CPU adapter with `host_threads`
    /// threads): compute units as [`ComputeUnits::of`] gives them, no optional features, WebGPU's default limits, no
    /// subgroup sizes, the Vulkan backend. Set the other fields to describe the device further.
    pub fn described(name: &str, device_type: wgpu::DeviceType, host_threads: usize) -> Self {
        Self {
            name: name.to_string(),
            backend: wgpu::Backend::Vulkan,
            device_type,
            vendor: 0,
            device: 0,
            subgroup_min_size: 0,
            subgroup_max_size: 0,
            features: wgpu::Features::empty(),
            limits: wgpu::Limits::default(),
            cooperative_matrices: Vec::new(),
            compute_units: ComputeUnits::of(name, device_type, host_threads),
        }
    }

    /// True when the device has `capability` (enabled and not masked).
    pub fn has(&self, capability: Capability) -> bool {
        self.features.contains(capability.feature())
    }

    /// Ok when the device has every capability in `needed`; otherwise [`GpuError::MissingCapability`] naming
    /// `kernel` and the first one missing.
    pub fn require(&self, kernel: &str, needed: &[Capability]) -> Result<()> {
        match needed.iter().find(|&&c| !self.has(c)) {
            Some(&capability) => Err(GpuError::MissingCapability { kernel: kernel.to_string(), capability }),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wgpu::DeviceType::{Cpu, DiscreteGpu, IntegratedGpu};

    #[test]
    fn published_boards_get_their_multiprocessors() {
        let units = |name| ComputeUnits::of(name, DiscreteGpu, 8);
        for (name, count) in [
            ("NVIDIA H200", 132),
            ("NVIDIA H200 NVL", 132),
            ("NVIDIA H100 80GB HBM3", 132),
            ("NVIDIA H100 PCIe", 114),
            ("NVIDIA A100-SXM4-80GB", 108),
            ("NVIDIA A100 80GB PCIe", 108),
            ("NVIDIA L40S", 142),
            ("NVIDIA GeForce RTX 4090", 128),
            ("NVIDIA GeForce RTX 4080 SUPER", 80),
            ("NVIDIA GeForce RTX 4080", 76),
            ("NVIDIA GeForce RTX 3090 Ti", 84),
            ("NVIDIA GeForce RTX 3090", 82),
        ] {
            assert_eq!(units(name), ComputeUnits { count, source: ComputeUnitSource::Table }, "{name}");
        }
    }

    #[test]
    fn other_boards_and_variants_get_the_default_and_cpus_their_threads() {
        let default = ComputeUnits { count: DEFAULT_COMPUTE_UNITS, source: ComputeUnitSource::Default };
        for name in [
            "NVIDIA GeForce RTX 4090 Laptop GPU",
            "NVIDIA GeForce RTX 4090 D",
            "NVIDIA GeForce RTX 4070",
            "NVIDIA A10",
            "NVIDIA L4",
            "AMD Radeon RX 7900 XTX",
            "Apple M2 Max",
            "",
        ] {
            assert_eq!(ComputeUnits::of(name, DiscreteGpu, 8), default, "{name}");
        }
        assert_eq!(ComputeUnits::of("Intel(R) Iris(R) Xe Graphics", IntegratedGpu, 8), default);
        let lavapipe = ComputeUnits::of("llvmpipe (LLVM 15.0.7, 256 bits)", Cpu, 4);
        assert_eq!(lavapipe, ComputeUnits { count: 4, source: ComputeUnitSource::HostThreads });
        assert_eq!(ComputeUnits::of("llvmpipe", Cpu, 0).count, 1);
    }

    #[test]
    fn shaders_name_the_capabilities_they_use() {
        assert!(Capability::required_by("fn main() { let x = 1.0; }").is_empty());
        let coop = "enable f16;\nenable wgpu_cooperative_matrix;\nfn f() -> f16 { return 1h; }";
        assert_eq!(Capability::required_by(coop), [Capability::ShaderF16, Capability::CooperativeMatrices]);
        assert_eq!(Capability::required_by("enable f16, subgroups;"), [Capability::ShaderF16, Capability::Subgroups]);
        let shuffle = "let m = max(v, subgroupShuffleXor(v, 4u));";
        assert_eq!(Capability::required_by(shuffle), [Capability::Subgroups]);
        let builtin = "fn k(@builtin( subgroup_invocation_id ) lane: u32) {}";
        assert_eq!(Capability::required_by(builtin), [Capability::Subgroups]);
        // Variables that merely say "subgroup", and comments, need nothing.
        let plain = "let subgroup = t / 32u; let subgroups = 4u; // subgroupAdd would be faster\nenable_x();";
        assert!(Capability::required_by(plain).is_empty());
    }

    #[test]
    fn a_profile_refuses_a_kernel_naming_the_missing_capability() {
        let mut profile = DeviceProfile::described("NVIDIA H200", DiscreteGpu, 1);
        assert_eq!(profile.compute_units.count, 132);
        profile.features = wgpu::Features::SUBGROUP;
        assert!(profile.require("attention", &[Capability::Subgroups]).is_ok());
        let error = profile.require("gemm_coop", &[Capability::Subgroups, Capability::ShaderF16]).unwrap_err();
        assert!(matches!(
            error,
            GpuError::MissingCapability { ref kernel, capability: Capability::ShaderF16 } if kernel == "gemm_coop"
        ));
        let message = error.to_string();
        assert!(message.contains("gemm_coop") && message.contains("SHADER_F16"), "{message}");
    }
}
