//! What a kernel's launcher binds, as typed tables: the parameter struct uploaded as the uniform
//! ([`ParamsLayout`], built from the Rust struct by [`params_layout!`](crate::params_layout)) and the
//! bind-group entries ([`Binding`]). The device layouts are built from these tables, and
//! `cargo xtask validate-shaders` checks the same tables against the WGSL, so neither can drift from what runs.

use crate::pipeline::Access;

/// The scalar type of one parameter field, as WGSL names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamType {
    /// `u32`.
    U32,
    /// `i32`.
    I32,
    /// `f32`.
    F32,
}

/// A Rust type a parameter field may have: the ones with a WGSL twin of the same size and alignment.
pub trait ParamValue: bytemuck::Pod {
    /// Its WGSL type.
    const TYPE: ParamType;
}

impl ParamValue for u32 {
    const TYPE: ParamType = ParamType::U32;
}

impl ParamValue for i32 {
    const TYPE: ParamType = ParamType::I32;
}

impl ParamValue for f32 {
    const TYPE: ParamType = ParamType::F32;
}

/// One field of a parameter struct: its name, byte offset and type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParamField {
    /// The field name (the WGSL member must have the same).
    pub name: &'static str,
    /// Byte offset in the `#[repr(C)]` struct.
    pub offset: usize,
    /// Its type.
    pub ty: ParamType,
}

impl ParamField {
    /// The field of `S` that `field` reads; only its type is taken from `field` (for [`params_layout!`](crate::params_layout)).
    pub const fn of<S, T: ParamValue>(name: &'static str, offset: usize, _field: fn(&S) -> &T) -> Self {
        Self { name, offset, ty: T::TYPE }
    }
}

/// The memory layout of a kernel's parameter struct: what the launcher uploads at `@group(1) @binding(0)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParamsLayout {
    /// The Rust struct's name.
    pub name: &'static str,
    /// `size_of` the struct, in bytes.
    pub size: usize,
    /// Every field, in declaration order.
    pub fields: &'static [ParamField],
}

/// `params_layout!(Params { a, b, c })`: the [`ParamsLayout`] of the `#[repr(C)]` struct `Params`, offsets by
/// `offset_of!` and types from the fields themselves. Every field must be listed, in declaration order: a struct
/// pattern without `..` makes a missing or unknown field a compile error, and a field out of order shows as a
/// decreasing offset, which [`ParamsLayout::check`] refuses.
#[macro_export]
macro_rules! params_layout {
    ($ty:ident { $($field:ident),+ $(,)? }) => {{
        const _: fn($ty) = |$ty { $($field: _),+ }| {};
        // A constant, so that the field table is a static one wherever the macro is used.
        const LAYOUT: $crate::ParamsLayout = $crate::ParamsLayout {
            name: stringify!($ty),
            size: ::core::mem::size_of::<$ty>(),
            fields: &[$($crate::ParamField::of::<$ty, _>(
                stringify!($field),
                ::core::mem::offset_of!($ty, $field),
                |p: &$ty| &p.$field,
            )),+],
        };
        LAYOUT
    }};
}

impl ParamsLayout {
    /// Fails unless the fields are in declaration (offset) order, so a table can be compared field by field.
    pub fn check(&self) -> Result<(), String> {
        match self.fields.windows(2).find(|pair| pair[1].offset <= pair[0].offset) {
            Some(pair) => Err(format!(
                "{}: field `{}` is listed after `{}` but lies before it: list the fields in declaration order",
                self.name, pair[1].name, pair[0].name
            )),
            None => Ok(()),
        }
    }
}

/// How a kernel binds one buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BufferKind {
    /// `var<uniform>`.
    Uniform,
    /// `var<storage, read>`.
    StorageRead,
    /// `var<storage, read_write>`.
    StorageReadWrite,
}

/// One bind-group entry a kernel's pipeline layout has.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Binding {
    /// `@group(n)`.
    pub group: u32,
    /// `@binding(n)`.
    pub binding: u32,
    /// What is bound there.
    pub kind: BufferKind,
}

/// The group of the storage buffers, bound in order from binding 0.
pub const STORAGE_GROUP: u32 = 0;
/// The group of the parameters uniform (binding 0, with a dynamic offset into the submission's arena).
pub const PARAMS_GROUP: u32 = 1;

/// Every entry of the pipeline layout of a kernel whose storage bindings are `storage`: `@group(0)` binding i
/// for `storage[i]`, then the parameters at `@group(1) @binding(0)`. The device's layouts are built from this list.
pub fn bindings(storage: &[Access]) -> Vec<Binding> {
    let buffers = storage.iter().enumerate().map(|(i, access)| Binding {
        group: STORAGE_GROUP,
        binding: i as u32,
        kind: match access {
            Access::Read => BufferKind::StorageRead,
            Access::ReadWrite => BufferKind::StorageReadWrite,
        },
    });
    buffers.chain([Binding { group: PARAMS_GROUP, binding: 0, kind: BufferKind::Uniform }]).collect()
}

impl Binding {
    /// The wgpu layout entry for this binding (the uniform has a dynamic offset and holds at most
    /// [`MAX_PARAMS_BYTES`](crate::MAX_PARAMS_BYTES)).
    pub(crate) fn layout_entry(&self) -> wgpu::BindGroupLayoutEntry {
        let ty = match self.kind {
            BufferKind::Uniform => wgpu::BufferBindingType::Uniform,
            BufferKind::StorageRead => wgpu::BufferBindingType::Storage { read_only: true },
            BufferKind::StorageReadWrite => wgpu::BufferBindingType::Storage { read_only: false },
        };
        let uniform = self.kind == BufferKind::Uniform;
        wgpu::BindGroupLayoutEntry {
            binding: self.binding,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty,
                has_dynamic_offset: uniform,
                min_binding_size: if uniform { wgpu::BufferSize::new(crate::MAX_PARAMS_BYTES) } else { None },
            },
            count: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Only its layout is used.
    #[allow(dead_code)]
    #[repr(C)]
    struct Params {
        n: u32,
        bias: i32,
        scale: f32,
    }

    const PARAMS: ParamsLayout = params_layout!(Params { n, bias, scale });

    #[test]
    fn the_layout_is_read_from_the_struct() {
        assert_eq!(PARAMS.name, "Params");
        assert_eq!(PARAMS.size, 12);
        let fields: Vec<(&str, usize, ParamType)> = PARAMS.fields.iter().map(|f| (f.name, f.offset, f.ty)).collect();
        assert_eq!(fields, [("n", 0, ParamType::U32), ("bias", 4, ParamType::I32), ("scale", 8, ParamType::F32)]);
        assert!(PARAMS.check().is_ok());
    }

    #[test]
    fn fields_out_of_order_are_refused() {
        let swapped = params_layout!(Params { scale, bias, n });
        assert!(swapped.check().unwrap_err().contains("declaration order"));
    }

    #[test]
    fn storage_bindings_come_first_then_the_uniform() {
        let kinds: Vec<(u32, u32, BufferKind)> =
            bindings(&[Access::Read, Access::ReadWrite]).iter().map(|b| (b.group, b.binding, b.kind)).collect();
        assert_eq!(
            kinds,
            [(0, 0, BufferKind::StorageRead), (0, 1, BufferKind::StorageReadWrite), (1, 0, BufferKind::Uniform)]
        );
    }
}
