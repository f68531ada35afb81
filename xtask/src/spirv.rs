//! `cargo xtask spirv`: writes one kernel variant's SPIR-V as wgpu 30 hands it to a Vulkan driver, so that a Vulkan
//! tool on the target GPU can report what wgpu does not show (registers and spilled memory per invocation through
//! `VK_KHR_pipeline_executable_properties`, the GPU time of a dispatch). `validate-shaders` translates every variant
//! through the same function, so the file written here is the one that check covers.

use std::collections::BTreeSet;
use std::path::PathBuf;

use audio_kernels::variants::all_variants;
use gpu_core::KernelVariant as Variant;
use naga::back::spv;
use naga::proc::{BoundsCheckPolicies, BoundsCheckPolicy};

use crate::validate_shaders::{describe, specialize};

pub const USAGE: &str = "cargo xtask spirv --kernel <shader> (--list | [--variant <n>] --out <file.spv>)";

/// What the command line asks for.
#[derive(Debug, PartialEq)]
struct Request {
    kernel: String,
    variant: Option<usize>,
    /// `None`: list the kernel's variants.
    out: Option<PathBuf>,
}

pub fn run(args: &[String]) -> Result<(), String> {
    let request = parse(args)?;
    let variants: Vec<Variant> = all_variants().into_iter().filter(|v| v.shader.name == request.kernel).collect();
    if variants.is_empty() {
        let names: BTreeSet<&str> = all_variants().iter().map(|v| v.shader.name).collect();
        let names: Vec<&str> = names.into_iter().collect();
        return Err(format!("no kernel `{}`; kernels: {}", request.kernel, names.join(", ")));
    }
    let Some(out) = request.out else {
        for (index, variant) in variants.iter().enumerate() {
            println!("{index:4}  {}", describe(variant));
        }
        return Ok(());
    };
    let index = match (request.variant, variants.len()) {
        (Some(index), count) if index < count => index,
        (Some(index), count) => return Err(format!("variant {index} of `{}`: it has {count}", request.kernel)),
        (None, 1) => 0,
        (None, count) => {
            return Err(format!("`{}` has {count} variants: pick one with --variant (--list)", request.kernel));
        }
    };
    let words = vulkan_spirv(&variants[index])?;
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    std::fs::write(&out, bytes).map_err(|e| format!("writing {}: {e}", out.display()))?;
    println!("wrote {} ({} words): {}", out.display(), words.len(), describe(&variants[index]));
    Ok(())
}

fn parse(args: &[String]) -> Result<Request, String> {
    let mut request = Request { kernel: String::new(), variant: None, out: None };
    let mut list = false;
    let mut args = args.iter();
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{flag} needs a value; usage: {USAGE}"));
        match flag.as_str() {
            "--kernel" => request.kernel = value()?.clone(),
            "--variant" => {
                let text = value()?;
                request.variant = Some(text.parse().map_err(|_| format!("--variant {text}: not a number"))?);
            }
            "--out" => request.out = Some(PathBuf::from(value()?)),
            "--list" => list = true,
            other => return Err(format!("unknown argument `{other}`; usage: {USAGE}")),
        }
    }
    if request.kernel.is_empty() || list == request.out.is_some() {
        return Err(format!("usage: {USAGE}"));
    }
    Ok(request)
}

/// The variant's composed WGSL, parsed, validated and specialised, in SPIR-V.
pub fn vulkan_spirv(variant: &Variant) -> Result<Vec<u32>, String> {
    let (module, info) = specialize(variant)?;
    translate(variant, &module, &info)
}

/// Where wgpu-hal puts each binding of the kernel's pipeline layout: set = group, and within a set the entry's rank
/// in the layout. The project's layouts number each group's bindings 0, 1, … in order (`gpu_core::layout`), so the
/// rank is the binding number.
fn binding_map(variant: &Variant) -> spv::BindingMap {
    let info = |b: &gpu_core::layout::Binding| spv::BindingInfo {
        descriptor_set: b.group,
        binding: b.binding,
        binding_array_size: None,
    };
    variant.layout().iter().map(|b| (naga::ResourceBinding { group: b.group, binding: b.binding }, info(b))).collect()
}

/// SPIR-V with the options wgpu-hal 30 builds for a Vulkan 1.3 device with `robustBufferAccess2` (an H200 under the
/// NVIDIA driver; lavapipe), as `gpu_core`'s pipelines ask for it: no zero-initialised workgroup memory, and for a
/// `trusted` shader `ShaderRuntimeChecks::unchecked()` (no index clamps, loop counters or division guards). Without
/// the capability list a device would announce naga emits the same words: the list only limits what it may use.
pub fn translate(variant: &Variant, module: &naga::Module, info: &naga::valid::ModuleInfo) -> Result<Vec<u32>, String> {
    let checked = !variant.shader.trusted;
    let index = if checked { BoundsCheckPolicy::Restrict } else { BoundsCheckPolicy::Unchecked };
    let options = spv::Options {
        lang_version: (1, 6),
        flags: spv::WriterFlags::LABEL_VARYINGS | spv::WriterFlags::FORCE_POINT_SIZE,
        fake_missing_bindings: false,
        binding_map: binding_map(variant),
        bounds_check_policies: BoundsCheckPolicies {
            index,
            buffer: BoundsCheckPolicy::Unchecked,
            image_load: BoundsCheckPolicy::Unchecked,
            binding_array: BoundsCheckPolicy::Unchecked,
        },
        zero_initialize_workgroup_memory: spv::ZeroInitializeWorkgroupMemoryMode::None,
        force_loop_bounding: checked,
        ray_query_initialization_tracking: checked,
        mesh_shader_primitive_indices_clamp: checked,
        emit_int_div_checks: checked,
        ..spv::Options::default()
    };
    let pipeline = spv::PipelineOptions { shader_stage: naga::ShaderStage::Compute, entry_point: variant.entry.into() };
    spv::write_vec(module, info, &options, Some(&pipeline)).map_err(|e| format!("SPIR-V: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(text: &str) -> Vec<String> {
        text.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn writes_a_spirv_module_of_one_variant() {
        let out = std::env::temp_dir().join(format!("xtask-spirv-test-{}.spv", std::process::id()));
        run(&args(&format!("--kernel gemm_coop16 --variant 0 --out {}", out.display()))).unwrap();
        let bytes = std::fs::read(&out).unwrap();
        std::fs::remove_file(&out).unwrap();
        assert_eq!(bytes.len() % 4, 0);
        // The first word of every SPIR-V module (the specification's section 3.1).
        assert_eq!(u32::from_le_bytes(bytes[..4].try_into().unwrap()), 0x0723_0203);
    }

    #[test]
    fn a_kernel_of_several_variants_needs_one_named() {
        let error = run(&args("--kernel gemm_coop16 --out /nonexistent/x.spv")).unwrap_err();
        assert!(error.contains("--variant"), "{error}");
    }

    #[test]
    fn an_unknown_kernel_names_the_known_ones() {
        let error = run(&args("--kernel nope --list")).unwrap_err();
        assert!(error.contains("gemm_coop16"), "{error}");
    }

    #[test]
    fn listing_and_writing_exclude_each_other() {
        assert!(parse(&args("--kernel gemm --list --out a.spv")).is_err());
        assert!(parse(&args("--kernel gemm")).is_err());
        assert!(parse(&args("--list")).is_err());
        assert_eq!(
            parse(&args("--kernel gemm --variant 3 --out a.spv")),
            Ok(Request { kernel: "gemm".into(), variant: Some(3), out: Some("a.spv".into()) })
        );
    }
}
