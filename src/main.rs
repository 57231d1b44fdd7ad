//! The `onnx-bcast` command line: arguments, rendering and exit codes. The contract it keeps is
//! `docs/cli.md`; all work is done by the library.

mod cli;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let args = cli::Cli::parse();
    let code = match cli::run(args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("onnx-bcast: {e}");
            cli::FAILED
        }
    };
    ExitCode::from(code)
}
