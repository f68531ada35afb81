//! A launcher's tables against the WGSL naga reads: the parameter struct (size, and each field's name, offset and
//! type, in order) and the bind-group entries (group, binding, buffer kind). The tables are the ones the device
//! builds its layouts from (`gpu_core::layout`), so a shader edited without its launcher, or the reverse, fails here
//! instead of reading garbage on a GPU.

use gpu_core::layout::PARAMS_GROUP;
use gpu_core::{Binding, BufferKind, ParamType, ParamsLayout};
use naga::valid::ModuleInfo;
use naga::{AddressSpace, Module, ScalarKind, StorageAccess, TypeInner};

/// Every disagreement between the tables and the module, for the entry point `entry`; `Ok` when there is none.
pub fn check(
    module: &Module,
    info: &ModuleInfo,
    entry: &str,
    bindings: &[Binding],
    params: &ParamsLayout,
) -> Result<(), String> {
    let mut problems = Vec::new();
    let index =
        module.entry_points.iter().position(|ep| ep.name == entry).ok_or(format!("no entry point `{entry}`"))?;
    let uses = info.get_entry_point(index);
    for (handle, global) in module.global_variables.iter() {
        let Some(slot) = &global.binding else { continue };
        let name = global.name.as_deref().unwrap_or("?");
        let declared = bindings.iter().find(|b| (b.group, b.binding) == (slot.group, slot.binding));
        let at = format!("@group({}) @binding({}) `{name}`", slot.group, slot.binding);
        match (declared, kind(&global.space)) {
            (None, _) if uses[handle].is_empty() => {}
            (None, _) => problems.push(format!("{at} is used by `{entry}` but the launcher binds nothing there")),
            (Some(_), None) => problems.push(format!("{at} is in address space {:?}, not a buffer", global.space)),
            (Some(b), Some(kind)) if b.kind != kind => {
                problems.push(format!("{at} is {kind:?} in the shader, {:?} in the launcher", b.kind))
            }
            (Some(b), Some(_)) if b.group == PARAMS_GROUP => {
                problems.extend(compare_params(module, global.ty, params).into_iter().map(|p| format!("{at}: {p}")))
            }
            _ => {}
        }
    }
    for b in bindings {
        let declared =
            |g: &naga::GlobalVariable| g.binding.as_ref().is_some_and(|s| (s.group, s.binding) == (b.group, b.binding));
        if !module.global_variables.iter().any(|(_, g)| declared(g)) {
            problems.push(format!(
                "the launcher binds {:?} at @group({}) @binding({}), the shader declares nothing there",
                b.kind, b.group, b.binding
            ));
        }
    }
    if problems.is_empty() { Ok(()) } else { Err(problems.join("\n")) }
}

fn kind(space: &AddressSpace) -> Option<BufferKind> {
    match space {
        AddressSpace::Uniform => Some(BufferKind::Uniform),
        AddressSpace::Storage { access } if access.contains(StorageAccess::STORE) => Some(BufferKind::StorageReadWrite),
        AddressSpace::Storage { .. } => Some(BufferKind::StorageRead),
        _ => None,
    }
}

/// The WGSL struct at `ty` against the Rust one, field by field.
fn compare_params(module: &Module, ty: naga::Handle<naga::Type>, params: &ParamsLayout) -> Vec<String> {
    let wgsl = &module.types[ty];
    let TypeInner::Struct { members, span } = &wgsl.inner else {
        return vec![format!("the uniform is not a struct; the launcher uploads `{}`", params.name)];
    };
    let mut problems: Vec<String> = params.check().err().into_iter().collect();
    let wgsl_name = wgsl.name.as_deref().unwrap_or("?");
    if *span as usize != params.size {
        problems
            .push(format!("`{wgsl_name}` is {span} bytes in WGSL, `{}` {} bytes in Rust", params.name, params.size));
    }
    for (i, (member, field)) in members.iter().zip(params.fields).enumerate() {
        let member_name = member.name.as_deref().unwrap_or("?");
        let member_ty = scalar(&module.types[member.ty].inner);
        if (member_name, member.offset as usize, member_ty) != (field.name, field.offset, Some(field.ty)) {
            problems.push(format!(
                "field {i}: WGSL `{member_name}: {}` at byte {}, Rust `{}: {:?}` at byte {}",
                member_ty.map_or("(not a 32-bit scalar)".to_string(), |t| format!("{t:?}")),
                member.offset,
                field.name,
                field.ty,
                field.offset
            ));
        }
    }
    if members.len() != params.fields.len() {
        problems.push(format!(
            "`{wgsl_name}` has {} fields in WGSL, `{}` {} in Rust",
            members.len(),
            params.name,
            params.fields.len()
        ));
    }
    problems
}

fn scalar(inner: &TypeInner) -> Option<ParamType> {
    match inner {
        TypeInner::Scalar(s) if s.width == 4 => match s.kind {
            ScalarKind::Uint => Some(ParamType::U32),
            ScalarKind::Sint => Some(ParamType::I32),
            ScalarKind::Float => Some(ParamType::F32),
            _ => None,
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use gpu_core::{Access, layout, params_layout};

    use super::*;

    const SHADER: &str = r#"
struct Params { n: u32, scale: f32, shift: i32 }
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(1) @binding(0) var<uniform> p: Params;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    if id.x < p.n { y[id.x] = x[id.x] * p.scale + f32(p.shift); }
}
"#;

    fn check_against(wgsl: &str, storage: &[Access], params: &ParamsLayout) -> Result<(), String> {
        let module = naga::front::wgsl::parse_str(wgsl).unwrap();
        let mut validator =
            naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::all());
        let info = validator.validate(&module).unwrap();
        check(&module, &info, "main", &layout::bindings(storage), params)
    }

    // Only their layouts are used.
    #[allow(dead_code)]
    #[repr(C)]
    struct Params {
        n: u32,
        scale: f32,
        shift: i32,
    }

    /// The same fields, two swapped: the size agrees, the order does not.
    #[allow(dead_code)]
    #[repr(C)]
    struct Swapped {
        scale: f32,
        n: u32,
        shift: i32,
    }

    /// One field short.
    #[allow(dead_code)]
    #[repr(C)]
    struct Short {
        n: u32,
        scale: f32,
    }

    const RIGHT: &ParamsLayout = &params_layout!(Params { n, scale, shift });
    const RW: &[Access] = &[Access::Read, Access::ReadWrite];

    #[test]
    fn the_right_tables_pass() {
        check_against(SHADER, RW, RIGHT).unwrap();
    }

    #[test]
    fn a_reordered_struct_is_caught() {
        let error = check_against(SHADER, RW, &params_layout!(Swapped { scale, n, shift })).unwrap_err();
        assert!(error.contains("field 0: WGSL `n: U32` at byte 0, Rust `scale: F32` at byte 0"), "{error}");
        assert!(error.contains("field 1"), "{error}");
    }

    #[test]
    fn a_missing_field_is_caught() {
        let error = check_against(SHADER, RW, &params_layout!(Short { n, scale })).unwrap_err();
        assert!(error.contains("`Params` is 12 bytes in WGSL, `Short` 8 bytes in Rust"), "{error}");
        assert!(error.contains("3 fields in WGSL, `Short` 2 in Rust"), "{error}");
    }

    #[test]
    fn a_type_mismatch_is_caught() {
        let wgsl = SHADER.replace("shift: i32 }", "shift: u32 }");
        let error = check_against(&wgsl, RW, RIGHT).unwrap_err();
        assert!(error.contains("field 2: WGSL `shift: U32` at byte 8, Rust `shift: I32`"), "{error}");
    }

    #[test]
    fn a_wrong_access_mode_is_caught() {
        let error = check_against(SHADER, &[Access::Read, Access::Read], RIGHT).unwrap_err();
        assert!(error.contains("@group(0) @binding(1) `y` is StorageReadWrite in the shader, StorageRead"), "{error}");
    }

    #[test]
    fn a_used_buffer_the_launcher_does_not_bind_is_caught() {
        let error = check_against(SHADER, &[Access::Read], RIGHT).unwrap_err();
        assert!(error.contains("`y` is used by `main` but the launcher binds nothing there"), "{error}");
    }

    #[test]
    fn a_binding_the_shader_lacks_is_caught() {
        let error = check_against(SHADER, &[Access::Read, Access::ReadWrite, Access::Read], RIGHT).unwrap_err();
        assert!(error.contains("binds StorageRead at @group(0) @binding(2), the shader declares nothing"), "{error}");
    }
}
