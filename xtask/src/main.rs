//! Project tasks: `cargo xtask validate-shaders`, `cargo xtask golden [--check]`, `cargo xtask spirv` (one kernel
//! variant's SPIR-V, for measuring it with Vulkan tools).

#![forbid(unsafe_code)]

mod golden;
mod shader_layout;
mod spirv;
mod validate_shaders;
mod web_golden;

use std::process::ExitCode;

const USAGE: &str = "usage: cargo xtask <validate-shaders | golden [--check] | spirv --kernel <shader> \
                     (--list | [--variant <n>] --out <file.spv>)>";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("validate-shaders") => validate_shaders::run(),
        Some("golden") if args.len() == 1 => golden::run(false),
        Some("golden") if args.len() == 2 && args[1] == "--check" => golden::run(true),
        Some("spirv") => spirv::run(&args[1..]),
        _ => {
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}
