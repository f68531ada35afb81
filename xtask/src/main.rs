//! Project tasks: `cargo xtask validate-shaders`.

mod validate_shaders;

use std::process::ExitCode;

const USAGE: &str = "usage: cargo xtask <validate-shaders>";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("validate-shaders") => validate_shaders::run(),
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
