//! Parses and validates every pipeline variant the launchers can build (the composed WGSL, override constants
//! applied), checks the launcher's parameter struct and bindings against the WGSL (`shader_layout.rs`), then
//! translates each to SPIR-V (with wgpu's Vulkan options: `spirv.rs`), MSL and HLSL, and those that need no optional
//! capability to GLSL ES 3.10 (wgpu's GL backend, which has none), so a shader that only one backend rejects is
//! caught without that backend's hardware. Every file under `shaders/` must be a kernel some launcher builds or a part such
//! a kernel includes.

use std::collections::BTreeSet;

use audio_kernels::shaders::INCLUDES;
use audio_kernels::variants::all_variants;
use gpu_core::{Capability, KernelVariant as Variant};
use naga::back::PipelineConstants;
use naga::valid::{Capabilities, ModuleInfo, ValidationFlags, Validator};

use crate::{shader_layout, spirv};

pub fn run() -> Result<(), String> {
    let variants = all_variants();
    check_every_file_is_used(&variants)?;
    let mut failures = 0;
    for variant in &variants {
        match validate(variant) {
            Ok(backends) => println!("ok    {} ({backends})", describe(variant)),
            Err(message) => {
                failures += 1;
                println!("FAIL  {}\n{message}", describe(variant));
            }
        }
    }
    if failures > 0 {
        return Err(format!("{failures} of {} shader variants failed", variants.len()));
    }
    println!("{} shader variants valid", variants.len());
    Ok(())
}

pub fn describe(variant: &Variant) -> String {
    let constants: Vec<String> = variant.constants.iter().map(|(n, v)| format!("{n}={v}")).collect();
    format!("{}.wgsl:{} [{}]", variant.shader.name, variant.entry, constants.join(","))
}

/// A `.wgsl` file that no launcher builds and no built kernel includes is dead code, or a launcher that forgot to
/// list it. (`INCLUDES` lists every file under `shaders/`, as the build script found them.)
fn check_every_file_is_used(variants: &[Variant]) -> Result<(), String> {
    let built: BTreeSet<&str> = variants.iter().map(|v| v.shader.name).collect();
    let included: BTreeSet<&str> =
        INCLUDES.iter().filter(|(file, _)| built.contains(file)).flat_map(|(_, parts)| parts.iter().copied()).collect();
    for (file, _) in INCLUDES {
        if !built.contains(file) && !included.contains(file) {
            return Err(format!("shaders/{file}.wgsl is neither built by a launcher nor included by a kernel"));
        }
    }
    Ok(())
}

/// The variant's composed WGSL parsed, validated, checked against its launcher's layout, and with its override
/// constants applied: the module wgpu translates for the driver.
pub fn specialize(variant: &Variant) -> Result<(naga::Module, ModuleInfo), String> {
    let module = naga::front::wgsl::parse_str(variant.shader.source)
        .map_err(|e| e.emit_to_string_with_path(variant.shader.source, variant.shader.name))?;
    let mut validator = Validator::new(ValidationFlags::all(), Capabilities::all());
    let info = validator
        .validate(&module)
        .map_err(|e| e.emit_to_string_with_path(variant.shader.source, variant.shader.name))?;
    shader_layout::check(&module, &info, variant.entry, &variant.layout(), variant.params)?;
    let constants: PipelineConstants = variant.constants.iter().map(|(n, v)| (n.to_string(), *v)).collect();
    let (module, info) = naga::back::pipeline_constants::process_overrides(
        &module,
        &info,
        Some((naga::ShaderStage::Compute, variant.entry)),
        &constants,
    )
    .map_err(|e| format!("override constants: {e}"))?;
    if !module.entry_points.iter().any(|ep| ep.name == variant.entry) {
        return Err(format!("no entry point `{}`", variant.entry));
    }
    Ok((module.into_owned(), info.into_owned()))
}

fn validate(variant: &Variant) -> Result<String, String> {
    let (module, info) = specialize(variant)?;
    spirv::translate(variant, &module, &info)?;
    let mut backends = vec!["spirv"];
    // Cooperative matrices exist only on Vulkan in wgpu; the other translations are for the
    // portable kernels.
    if !module.types.iter().any(|(_, ty)| matches!(ty.inner, naga::TypeInner::CooperativeMatrix { .. })) {
        let stage = naga::ShaderStage::Compute;
        let entry = variant.entry.to_string();
        naga::back::msl::write_string(
            &module,
            &info,
            &naga::back::msl::Options { lang_version: (2, 4), ..Default::default() },
            &naga::back::msl::PipelineOptions { entry_point: Some((stage, entry.clone())), ..Default::default() },
        )
        .map_err(|e| format!("MSL: {e}"))?;
        let mut hlsl = String::new();
        let options =
            naga::back::hlsl::Options { shader_model: naga::back::hlsl::ShaderModel::V6_2, ..Default::default() };
        let pipeline = naga::back::hlsl::PipelineOptions { entry_point: Some((stage, entry)) };
        naga::back::hlsl::Writer::new(&mut hlsl, &options, &pipeline)
            .write(&module, &info, None)
            .map_err(|e| format!("HLSL: {e}"))?;
        backends.extend(["msl", "hlsl"]);
    }
    if Capability::required_by(variant.shader.source).is_empty() {
        let mut glsl = String::new();
        let options =
            naga::back::glsl::Options { version: naga::back::glsl::Version::new_gles(310), ..Default::default() };
        let pipeline = naga::back::glsl::PipelineOptions {
            shader_stage: naga::ShaderStage::Compute,
            entry_point: variant.entry.to_string(),
            multiview: None,
        };
        naga::back::glsl::Writer::new(&mut glsl, &module, &info, &options, &pipeline, Default::default())
            .and_then(|mut writer| writer.write())
            .map_err(|e| format!("GLSL: {e}"))?;
        backends.push("glsl");
    }
    Ok(backends.join(", "))
}
