//! Link arguments of a Python extension module that a plain `cargo build` does not add by itself (macOS: Python's
//! symbols are left to the interpreter that loads the module); none on Linux.

fn main() {
    pyo3_build_config::add_extension_module_link_args();
}
