//! The `onnx-bcast` command line: arguments, rendering and exit codes. The contract it keeps is
//! `../shared/CONTRACT.md`; all work is done by the library.

mod cli;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let args = cli::Cli::parse();
    match cli::run(args) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("onnx-bcast: {e}");
            ExitCode::from(2)
        }
    }
}
